r"""Algorithm 1 as printed, against the gradient of the objective it claims to follow.

Two departures from the gradient step ``f <- (1 - eta_i lam) f - eta_i xi_i``:

* line 11 attaches ``l_5`` to ``phi(x_n)`` and ``l_6`` to ``phi(x_u)``, while
  ``l_5``, ``l_6`` are the derivatives of the ``(x_u, x_n)`` pair's loss in its
  first (``x_u``) and second (``x_n``) argument (Equation (11));
* line 12 shrinks each earlier coefficient by its *own* step,
  ``alpha_j <- (1 - eta_j lam) alpha_j``, while the regulariser's gradient
  ``lam f`` shrinks every coefficient by the current ``(1 - eta_i lam)``.

:func:`printed_direction` computes line 11's direction, :func:`sampled_risk_gradient`
the gradient of the sampled risk in the new block's weights by finite
differences (an independent route), and :func:`printed_shrink_factors` the
factors line 12 applies.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import approx_fprime

from qs3orao.kernels import fourier_features
from qs3orao.objective import pair_risk

__all__ = ["sampled_risk", "printed_direction", "sampled_risk_gradient", "printed_shrink_factors",
           "gradient_shrink_factors"]


def _explicit_pairs(FA, FB):
    """``mean_{a, b} (1 - FA[a] + FB[b])^2`` by explicit pairs (independent of ``pair_risk``'s closed form)."""
    return float(np.mean((1.0 - np.asarray(FA)[:, None] + np.asarray(FB)[None, :]) ** 2))


def sampled_risk(scores, draws, tradeoff):
    """Equation (9) on the sampled rows, by explicit pairwise sums; ``scores(rows)`` gives those rows' scores."""
    total = 0.0
    for (p, n, u), weight in zip(draws, tradeoff):
        total += weight * _explicit_pairs(scores(p), scores(n))
        if weight < 1.0 and u.size:
            total += (1.0 - weight) * (_explicit_pairs(scores(p), scores(u)) + _explicit_pairs(scores(u), scores(n))
                                       - 0.5)
    return total / tradeoff.size


def printed_direction(X, F, draws, tradeoff, omega):
    """The bracket of Algorithm 1, line 11 (``alpha_i = -eta_i`` times this), with ``l_5``/``l_6`` as printed."""
    out = np.zeros(2 * omega.shape[0])

    def phi(rows):
        return fourier_features(X[rows], omega)

    for (p, n, u), weight in zip(draws, tradeoff):
        _, l1, l2 = pair_risk(F[p], F[n])
        out += weight * (l1 @ phi(p) + l2 @ phi(n))
        if weight < 1.0 and u.size:
            _, l3, l4 = pair_risk(F[p], F[u])
            _, l5, l6 = pair_risk(F[u], F[n])
            out += (1.0 - weight) * (l3 @ phi(p) + l4 @ phi(u) + l5 @ phi(n) + l6 @ phi(u))
    return out / tradeoff.size


def sampled_risk_gradient(X, F, draws, tradeoff, omega, *, step):
    """Finite-difference gradient of the sampled risk of ``f + w . phi_omega`` in ``w`` at ``w = 0``."""
    def risk(w):
        return sampled_risk(lambda rows: F[rows] + fourier_features(X[rows], omega) @ w, draws, tradeoff)
    return approx_fprime(np.zeros(2 * omega.shape[0]), risk, step)


def printed_shrink_factors(etas, lam):
    """Factor by which line 12 has scaled coefficient ``j`` after ``t = len(etas)`` steps: ``(1 - eta_j lam)^(t - j)``."""
    etas = np.asarray(etas, dtype=np.float64)
    t = etas.size
    return (1.0 - etas * lam) ** (t - np.arange(1, t + 1))


def gradient_shrink_factors(etas, lam):
    """The gradient step's factor for coefficient ``j`` after ``t`` steps: ``prod_{i=j+1}^t (1 - eta_i lam)``."""
    factors = 1.0 - np.asarray(etas, dtype=np.float64) * lam
    suffix = np.ones(factors.size)
    suffix[:-1] = np.cumprod(factors[::-1])[::-1][1:]
    return suffix
