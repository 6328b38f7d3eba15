r"""Theorem 1 in its own setting: QS3ORAO's update with a pairwise loss that meets Assumptions 2-3.

The paper's squared pairwise loss ``(1 - u + v)^2`` has an unbounded derivative
(Assumption 3 fails, row A3).  The Huberised squared loss

.. math::

    \ell_\delta(u, v) = H_\delta(1 - u + v), \qquad
    H_\delta(z) = \begin{cases} z^2 & |z| \le \delta \\ 2\delta |z| - \delta^2 & |z| > \delta \end{cases}

equals it on ``|1 - u + v| <= delta`` and has ``|l_1'| = |l_2'| = |H_delta'(z)| <= 2 delta``
(Assumption 3 with ``M_1 = M_2 = 2 delta``, fixed by the loss before any run) and
``H_delta'`` 2-Lipschitz (Assumption 2 with ``L_1 = L_2 = 2``).

This module gives the stochastic gradient weights of the sampled risk for any
pairwise loss of the margin residual ``z = 1 - u + v`` (the plain reference of
:func:`qs3orao.stochastic.gradient_weights`, which is the squared loss's fast
path), the full risk with its gradient, and the exact minimiser ``f*`` of the
regularised risk (a strongly convex problem, solved to a stated gradient norm).
"""

from __future__ import annotations

import numpy as np
from qs3orao.objective import split_members

__all__ = ["huber_derivative", "squared_derivative", "pairwise_weights", "pairwise_risk", "exact_minimiser"]


def huber_derivative(z, delta):
    """``H_delta'(z) = clip(2 z, -2 delta, 2 delta)``."""
    return np.clip(2.0 * np.asarray(z, dtype=np.float64), -2.0 * delta, 2.0 * delta)


def huber_value(z, delta):
    """``H_delta(z)``."""
    z = np.abs(np.asarray(z, dtype=np.float64))
    return np.where(z <= delta, z ** 2, 2.0 * delta * z - delta ** 2)


def squared_derivative(z):
    """``d/dz z^2 = 2 z`` (the paper's loss)."""
    return 2.0 * np.asarray(z, dtype=np.float64)


def pairwise_weights(draws, F, tradeoff, derivative):
    """Rows and weights of the stochastic functional gradient of the sampled risk, for the loss ``H(1 - u + v)``.

    Every positive is paired with every negative (and unlabeled row) of its
    split's batch; the pair terms are averaged, the splits averaged.

    Parameters
    ----------
    draws : list of (pos, neg, unl) index arrays
        :func:`qs3orao.stochastic.draw_rows`.
    F : ndarray of shape (n,)
        Current scores.
    tradeoff : ndarray of shape (k - 1,)
    derivative : callable
        ``H'`` of the margin residual ``z``.

    Returns
    -------
    rows, weights : ndarray
    """
    rows, weights = [], []

    def pair(a, b, weight):
        d = derivative(1.0 - F[a][:, None] + F[b][None, :]) * weight / (a.size * b.size)
        rows.extend([a, b])
        weights.extend([-d.sum(axis=1), d.sum(axis=0)])

    for (p, n, u), gamma in zip(draws, tradeoff):
        pair(p, n, gamma)
        if u.size and gamma < 1.0:
            pair(p, u, 1.0 - gamma)
            pair(u, n, 1.0 - gamma)
    return np.concatenate(rows), np.concatenate(weights) / tradeoff.size


def pairwise_risk(F, codes, tradeoff, value, derivative):
    """The full risk ``mean_j [gamma_j L(P_j, N_j) + (1 - gamma_j)(L(P_j, U) + L(U, N_j))]`` and its gradient.

    ``L(A, B)`` is the mean of ``value(1 - f(a) + f(b))`` over ``A x B``: the
    expectation of the sampled risk of :func:`pairwise_weights` with batch 1.

    Returns
    -------
    risk : float
    grad : ndarray of shape (n,)
    """
    splits, unlabeled = split_members(codes, tradeoff.size)
    total, grad = 0.0, np.zeros_like(F, dtype=np.float64)

    def pair(a, b, weight):
        z = 1.0 - F[a][:, None] + F[b][None, :]
        d = derivative(z) * weight / z.size
        np.add.at(grad, a, -d.sum(axis=1))
        np.add.at(grad, b, d.sum(axis=0))
        return weight * float(value(z).mean())

    for (pos, neg), gamma in zip(splits, tradeoff):
        total += pair(pos, neg, gamma)
        if unlabeled.size and gamma < 1.0:
            total += pair(pos, unlabeled, 1.0 - gamma) + pair(unlabeled, neg, 1.0 - gamma)
    return total / tradeoff.size, grad / tradeoff.size


def _generalised_hessian(F, codes, tradeoff, delta):
    """``d^2 R / dF^2`` with ``H_delta'' = 2`` inside ``|z| <= delta`` and 0 outside (piecewise constant)."""
    splits, unlabeled = split_members(codes, tradeoff.size)
    H = np.zeros((F.size, F.size))

    def pair(a, b, weight):
        D = 2.0 * (np.abs(1.0 - F[a][:, None] + F[b][None, :]) <= delta) * weight / (a.size * b.size)
        H[a, a] += D.sum(axis=1)
        H[b, b] += D.sum(axis=0)
        H[np.ix_(a, b)] -= D
        H[np.ix_(b, a)] -= D.T

    for (pos, neg), gamma in zip(splits, tradeoff):
        pair(pos, neg, gamma)
        if unlabeled.size and gamma < 1.0:
            pair(pos, unlabeled, 1.0 - gamma)
            pair(unlabeled, neg, 1.0 - gamma)
    return H / tradeoff.size


def exact_minimiser(kernel, codes, tradeoff, lam, delta, *, gtol, max_steps=200):
    """``f* = sum_i c_i k(x_i, .)`` minimising ``J = R_delta(f) + lam/2 ||f||^2`` (Huberised squared loss).

    Damped semismooth Newton in ``c`` on the stationarity condition
    ``g = grad_F R(K c) + lam c = 0``: the step solves ``(H K + lam I) d = -g``
    with ``H`` the generalised Hessian of the piecewise-quadratic risk, and is
    halved until ``J`` decreases enough (Armijo). The minimiser is unique: ``J``
    is strongly convex in ``f``.

    Returns
    -------
    coef : ndarray of shape (n,)
    gradient_norm : float
        ``||g||_inf`` at the solution (zero at ``f*``).

    Raises
    ------
    RuntimeError
        When ``||g||_inf`` is still above ``gtol`` after ``max_steps`` steps.
    """
    value = lambda z: huber_value(z, delta)  # noqa: E731
    slope = lambda z: huber_derivative(z, delta)  # noqa: E731

    def objective(c):
        F = kernel @ c
        risk, grad = pairwise_risk(F, codes, tradeoff, value, slope)
        return risk + 0.5 * lam * float(c @ F), grad + lam * c, F

    coef = np.zeros(codes.size)
    J, g, F = objective(coef)
    for _ in range(max_steps):
        if np.max(np.abs(g)) <= gtol:
            break
        step = np.linalg.solve(_generalised_hessian(F, codes, tradeoff, delta) @ kernel
                               + lam * np.eye(codes.size), -g)
        decrease = float(g @ kernel @ step)  # directional derivative of J along the step (negative)
        size = 1.0
        while True:
            trial = objective(coef + size * step)
            if trial[0] <= J + 1e-4 * size * decrease or size < 1e-12:
                break
            size /= 2.0
        coef = coef + size * step
        J, g, F = trial
    norm = float(np.max(np.abs(g)))
    if norm > gtol:
        raise RuntimeError(f"exact_minimiser: gradient {norm:.3g} above gtol = {gtol:g} after {max_steps} steps")
    return coef, norm
