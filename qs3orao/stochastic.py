"""One quadruply stochastic step: sample rows per split, weigh them by the gradient.

Both training engines (the plain reference and the fast one) call these two
functions, so they draw the same rows and apply the same gradient.
"""

from __future__ import annotations

import numpy as np

from .objective import split_risk

__all__ = ["draw_rows", "gradient_weights"]


def draw_rows(rng, splits, unlabeled, tradeoff, batch_size):
    """Sample ``batch_size`` positives, negatives and unlabeled rows for every split.

    Unlabeled rows are drawn only for splits whose ``tradeoff < 1`` (they have
    zero weight otherwise).

    Returns
    -------
    list of tuple of ndarray
        ``(positives, negatives, unlabeled)`` row indices per split.
    """
    draws = []
    for (pos, neg), weight in zip(splits, tradeoff):
        p = pos[rng.integers(pos.size, size=batch_size)]
        n = neg[rng.integers(neg.size, size=batch_size)]
        u = unlabeled[rng.integers(unlabeled.size, size=batch_size)] if weight < 1.0 else unlabeled[:0]
        draws.append((p, n, u))
    return draws


def gradient_weights(draws, scores, tradeoff):
    """Rows and weights ``w`` of the stochastic functional gradient ``xi = sum_i w_i k(x_i, .)``.

    This is the paper's Equation (11), with the ``l_5``/``l_6`` terms attached
    to ``x_u`` and ``x_n`` as the derivative demands (Algorithm 1 swaps them).

    Parameters
    ----------
    draws : list of tuple of ndarray
        Output of :func:`draw_rows`.
    scores : callable
        Maps row indices to the current scores ``f(x)`` of those rows.
    tradeoff : ndarray of shape (k - 1,)

    Returns
    -------
    rows : ndarray of int
    weights : ndarray of float
    """
    rows, weights = [], []
    for (p, n, u), weight in zip(draws, tradeoff):
        _, gp, gn, gu = split_risk(scores(p), scores(n), scores(u), weight)
        rows += [p, n, u[: gu.size]]
        weights += [gp, gn, gu]
    return np.concatenate(rows), np.concatenate(weights) / tradeoff.size
