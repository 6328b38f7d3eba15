"""Algorithms 1 and 2 of the paper as written, with the equation-level corrections.

Used only to check the fast engine: the scores of each step's sampled rows are
recomputed by regenerating every earlier frequency block from its seed
(Algorithm 2, once per step for all sampled rows together), and every earlier
coefficient is shrunk at every step (Algorithm 1, line 12), so a fit costs
O(t^2) block regenerations.  Corrections to the pseudocode, following the
paper's equations: the ``l_5``/``l_6`` terms multiply ``phi(x_u)`` and
``phi(x_n)`` respectively (Equation (11)); the trade-off is the per-split
``gamma^j``; earlier coefficients shrink by ``1 - eta_i * lam`` with the
current step ``eta_i`` (from ``a_t^i = -eta_i prod_{j > i} (1 - eta_j lam)``).
"""

from __future__ import annotations

import numpy as np

from .kernels import fourier_features, frequency_block, sampling_rng
from .objective import split_members
from .schedule import step_size
from .stochastic import draw_rows, gradient_weights


def reference_fit(X, codes, tradeoff, *, n_iter, batch_size, n_components, gamma, lam, theta, seed, step_offset=0.0):
    """Train by the literal algorithm.

    Returns
    -------
    ndarray of shape (n_iter, 2 * n_components)
        The coefficients ``alpha_i`` after the last step.
    """
    splits, unlabeled = split_members(codes, tradeoff.size)
    rng = sampling_rng(seed)
    alphas = []

    def predict(rows):
        f = np.zeros(rows.size)
        for i, alpha in enumerate(alphas, start=1):
            f += fourier_features(X[rows], frequency_block(seed, i, n_components, X.shape[1], gamma)) @ alpha
        return f

    for i in range(1, n_iter + 1):
        draws = draw_rows(rng, splits, unlabeled, tradeoff, batch_size)
        rows, weights = gradient_weights(draws, predict, tradeoff)
        eta = step_size(i, theta=theta, step_offset=step_offset)
        omega = frequency_block(seed, i, n_components, X.shape[1], gamma)
        alpha = -eta * (weights @ fourier_features(X[rows], omega))
        alphas = [(1.0 - eta * lam) * a for a in alphas]
        alphas.append(alpha)
    return np.array(alphas)


def reference_decision_function(X, coef, *, seed, gamma):
    """Algorithm 2: ``f(x) = sum_i alpha_i phi_{omega_i}(x)``, blocks regenerated one by one."""
    n_components = coef.shape[1] // 2
    f = np.zeros(X.shape[0])
    for i, alpha in enumerate(coef, start=1):
        f += fourier_features(X, frequency_block(seed, i, n_components, X.shape[1], gamma)) @ alpha
    return f
