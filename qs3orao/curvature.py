r"""A data-based upper bound on the risk's largest curvature, with a stated failure probability.

What is bounded
---------------
The functional step on the full risk ``R`` maps the error ``e`` to
``(I - eta (lam I + H)) e`` with ``H`` the Hessian of ``R`` in the RKHS; its
largest eigenvalue ``h = lambda_max(H)`` is the curvature that sets the early
transient of the *expected* step (:mod:`qs3orao.schedule`).  ``H`` is the mean of
the Hessians ``S(xi)`` of the sampled risks of the paper's single-sample step
(one positive, negative and unlabeled row per split,
:func:`qs3orao.stochastic.draw_rows` with ``batch_size = 1``):
``E S(xi) = H``, and every ``S(xi)`` is positive semidefinite with
``||S(xi)|| <= h_bar = 4 kappa mean_j (2 - gamma^j)``
(:func:`qs3orao.schedule.curvature_bound`).

The estimate and its bound
--------------------------
Draw ``m`` independent ``xi_1..xi_m`` and let ``S_m = mean_i S(xi_i)``; its
largest eigenvalue is computed exactly (a dense symmetric eigensolver on the
rows the draws touch: ``S_m = Phi A Phi^T`` for those rows' kernel sections
``Phi`` and a weighted graph Laplacian ``A``, so
``lambda_max(S_m) = lambda_max(K^{1/2} A K^{1/2})``).  Then, with probability at
least ``1 - delta`` over the draws,

.. math::

    h \le \lambda_{\max}(S_m) + \bar h \sqrt{\frac{\ln(1/\delta)}{2m}} .

Proof: ``lambda_max`` is convex, so ``h = lambda_max(E S_m) <= E lambda_max(S_m)``
(Jensen).  Replacing one draw changes ``S_m`` by ``(S(xi') - S(xi)) / m``, whose
norm is at most ``h_bar / m`` (both terms lie between 0 and ``h_bar I``), and
``lambda_max`` is 1-Lipschitz in the operator norm (Weyl), so
``lambda_max(S_m)`` has bounded differences ``h_bar / m`` and McDiarmid's
inequality (McDiarmid 1989, "On the method of bounded differences") gives
``P(lambda_max(S_m) <= E lambda_max(S_m) - eps) <= exp(-2 m eps^2 / h_bar^2)``;
set the right-hand side to ``delta``.  The bound needs no dimension factor (the
RKHS may be infinite-dimensional) and no assumption on the data beyond
``0 <= k <= kappa``.  Since ``h <= h_bar`` always, :func:`data_curvature_bound`
reports ``min(lambda_max(S_m) + eps, h_bar)``, which fails with the same
probability at most ``delta``.

What it does not bound: the curvature of an individual sampled risk ``S(xi)``
(up to ``h_bar`` for a single far-apart pair), which the data-free
``step_offset="auto"`` controls.  With the data-based value every *expected*
step contracts (every factor of ``I - eta_t (lam I + H)`` lies in
``[0, 1 - eta_t lam]``), not every sampled one.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .kernels import curvature_rng, gaussian_kernel
from .objective import risk_hessian_of_sets, split_members
from .schedule import curvature_bound
from .stochastic import draw_rows
from .validation import UNLABELED, check_features, check_positive, plain

__all__ = ["DEFAULT_DRAWS", "DEFAULT_DELTA", "CurvatureBound", "top_curvature", "sampled_risk_hessian",
           "data_curvature_bound"]

#: Draws of the single-sample risk behind ``step_offset="auto-data"``.
DEFAULT_DRAWS = 256
#: Failure probability of ``step_offset="auto-data"``'s curvature bound.
DEFAULT_DELTA = 0.01


@dataclass(frozen=True)
class CurvatureBound:
    """An upper bound on the full risk's largest curvature ``h`` and how it was obtained.

    Attributes
    ----------
    estimate : float
        ``lambda_max(S_m)``, the largest curvature of the mean of ``n_draws`` sampled risks.
    deviation : float
        ``h_bar sqrt(ln(1 / delta) / (2 n_draws))``, McDiarmid's margin.
    data_free : float
        ``h_bar``, the data-free bound (:func:`qs3orao.schedule.curvature_bound`).
    bound : float
        ``min(estimate + deviation, data_free)``: ``h <= bound`` with probability at least ``1 - delta``.
    n_draws : int
    delta : float
    """

    estimate: float
    deviation: float
    data_free: float
    bound: float
    n_draws: int
    delta: float


def top_curvature(kernel, hessian):
    """Largest eigenvalue of ``K H`` (the curvature in the RKHS of a risk with Hessian ``H`` in the scores).

    On ``f = sum_i c_i k(x_i, .)`` a functional gradient step maps the scores ``F``
    to ``F - eta K H F``; the eigenvalues of ``K H`` are those of the symmetric
    ``K^{1/2} H K^{1/2}``, computed with a dense symmetric eigensolver.

    Parameters
    ----------
    kernel : ndarray of shape (r, r)
        Positive semidefinite kernel matrix of the rows.
    hessian : ndarray of shape (r, r)
        Symmetric Hessian of the risk in those rows' scores.

    Returns
    -------
    float
    """
    values, vectors = np.linalg.eigh(kernel)
    root = (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T
    return float(np.linalg.eigvalsh(root @ hessian @ root)[-1])


def sampled_risk_hessian(codes, tradeoff, n_draws, rng):
    """Hessian, in the scores of the rows drawn, of the mean of ``n_draws`` single-sample risks.

    Each draw is one step's rows of the paper's sampling
    (:func:`qs3orao.stochastic.draw_rows`, ``batch_size = 1``); its risk is
    :func:`qs3orao.objective.ordinal_risk` on those rows.

    Returns
    -------
    rows : ndarray of int
        The distinct rows drawn (sorted).
    hessian : ndarray of shape (rows.size, rows.size)
    """
    splits, unlabeled = split_members(codes, tradeoff.size)
    draws = [draw_rows(rng, splits, unlabeled, tradeoff, 1) for _ in range(n_draws)]
    rows = np.unique(np.concatenate([idx for draw in draws for sets in draw for idx in sets]))
    local = np.full(codes.size, -1)
    local[rows] = np.arange(rows.size)
    hessian = np.zeros((rows.size, rows.size))
    for draw in draws:
        hessian += risk_hessian_of_sets([tuple(local[idx] for idx in sets) for sets in draw], tradeoff, rows.size)
    return rows, hessian / n_draws


def data_curvature_bound(X, codes, tradeoff, *, gamma, n_draws=DEFAULT_DRAWS, delta=DEFAULT_DELTA,
                         random_state=0):
    """Upper bound on the full risk's largest curvature from ``n_draws`` sampled risks (see the module).

    Deterministic given ``random_state`` (its own stream, :func:`qs3orao.kernels.curvature_rng`,
    apart from the training rows').

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training rows.
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``; ``-1`` for unlabeled rows.
    tradeoff : array-like of shape (k - 1,)
        ``gamma^j`` in [0, 1].
    gamma : float
        Gaussian kernel parameter, ``k(x, x') = exp(-gamma ||x - x'||^2)`` (``kappa = 1``).
    n_draws : int, default=DEFAULT_DRAWS
        Sampled risks ``m``; the dense eigensolver works on at most ``3 (k - 1) m`` rows.
    delta : float in (0, 1), default=DEFAULT_DELTA
        Failure probability: ``P(h > bound) <= delta``.
    random_state : int, default=0
        Seed of the draws.

    Returns
    -------
    CurvatureBound

    Raises
    ------
    ValueError
        For a bad argument (named in the message), a split with no positive or no negative row, or a
        trade-off below 1 without unlabeled rows.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> codes = np.repeat([0, 1, 2, -1], 15)
    >>> result = data_curvature_bound(X, codes, [0.5, 0.5], gamma=1.0, random_state=0)
    >>> result.bound < result.data_free
    True
    """
    X = check_features(X)
    codes = np.asarray(codes)
    if codes.ndim != 1 or codes.size != X.shape[0] or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"codes must be a 1-d integer array with one entry per row of X ({X.shape[0]}), "
                         f"got shape {codes.shape} and dtype {codes.dtype}")
    tradeoff = np.asarray(tradeoff, dtype=np.float64).reshape(-1)
    if tradeoff.size == 0 or not np.all((tradeoff >= 0.0) & (tradeoff <= 1.0)):
        raise ValueError(f"tradeoff must hold one weight in [0, 1] per split, got {plain(tradeoff)}")
    if codes.min() < UNLABELED or codes.max() > tradeoff.size:
        raise ValueError(f"codes must lie in -1..{tradeoff.size} for {tradeoff.size} splits, "
                         f"got {codes.min()}..{codes.max()}")
    check_positive(gamma, "gamma")
    check_positive(n_draws, "n_draws", integer=True)
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be a failure probability in (0, 1), got {plain(delta)}")
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative int, got {plain(random_state)}")
    splits, unlabeled = split_members(codes, tradeoff.size)
    for j, (pos, neg) in enumerate(splits):
        if not (pos.size and neg.size):
            raise ValueError(f"split {j} needs at least one positive (class > {j}) and one negative row, "
                             f"got {pos.size} and {neg.size}")
    if not unlabeled.size and np.any(tradeoff < 1.0):
        raise ValueError(f"tradeoff {plain(tradeoff)} below 1 weighs unlabeled rows, and codes have none (-1)")
    rows, hessian = sampled_risk_hessian(codes, tradeoff, int(n_draws), curvature_rng(int(random_state)))
    estimate = top_curvature(gaussian_kernel(X[rows], gamma=float(gamma)), hessian)
    data_free = curvature_bound(tradeoff)
    deviation = data_free * math.sqrt(math.log(1.0 / delta) / (2.0 * int(n_draws)))
    return CurvatureBound(estimate=estimate, deviation=deviation, data_free=data_free,
                          bound=min(estimate + deviation, data_free), n_draws=int(n_draws), delta=float(delta))
