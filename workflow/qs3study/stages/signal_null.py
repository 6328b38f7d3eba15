"""The signal screen as a permutation test: a cheap search, and the same search on permuted labels.

The tuned methods' best cross-validated AUC is a maximum over many methods and
grid points, so on signal-free data it sits above 0.5 by an amount no fixed
level accounts for. Here the screen's statistic is the best 5-fold CV ordinal
AUC of a proxy search that costs seconds: kernel ridge regression of the labels
with the project's kernel ``exp(-gamma ||x - x'||^2)``, over the kernel widths
``gamma = 2^k / median ||x - x'||^2`` and a grid of ``lam``. The same search is
run on ``n_permutations`` permutations of the labels within the labeled rows
(the folds kept), and a dataset passes when its p-value
``(1 + #{null >= observed}) / (1 + n_permutations)`` is at most ``alpha``:
labels carrying no signal are exchangeable, so they pass with probability at
most ``alpha``.

Every fold's kernel is eigendecomposed once and serves every ``lam`` and every
permutation, so the cost is that of a handful of eigendecompositions of the
labeled rows' kernel, plus matrix products linear in ``n_permutations``.
"""

import numpy as np
from scipy.spatial.distance import cdist
from scipy.stats import rankdata

__all__ = ["batched_ordinal_auc", "proxy_search", "permutation_screen"]


def batched_ordinal_auc(Y, P):
    """:func:`qs3orao.metrics.ordinal_auc` of every column of ``P`` against the same column of ``Y``.

    A split with no row on one side is left out of that column's mean.

    Parameters
    ----------
    Y : ndarray of int, shape (n, b)
    P : ndarray of float, shape (n, b)

    Returns
    -------
    ndarray of shape (b,)
    """
    ranks = rankdata(P, axis=0)
    aucs = []
    for level in np.unique(Y)[:-1]:
        positive = Y > level
        n_pos = positive.sum(axis=0)
        n_neg = Y.shape[0] - n_pos
        with np.errstate(invalid="ignore", divide="ignore"):
            aucs.append(((ranks * positive).sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    return np.nanmean(np.array(aucs), axis=0)


def proxy_search(X, Y, folds, *, widths, lams):
    """Best mean CV ordinal AUC over the grid, for every column of labels ``Y``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The labeled rows.
    Y : ndarray of int, shape (n, b)
        Label columns (the labels, and permutations of them).
    folds : ndarray of int, shape (n,)
        Fold of each row.
    widths : sequence of float
        ``k`` of ``gamma = 2^k / median ||x - x'||^2``.
    lams : sequence of float
        Ridge penalties (per row: the system is ``K + lam n I``).

    Returns
    -------
    ndarray of shape (b,)
    """
    distances = cdist(X, X, "sqeuclidean")
    median = np.median(distances[np.triu_indices(X.shape[0], k=1)])
    scores = np.zeros((len(widths), len(lams), Y.shape[1]))
    for fold in np.unique(folds):
        train, test = folds != fold, folds == fold
        centred = Y[train] - Y[train].mean(axis=0)
        for w, k in enumerate(widths):
            kernel = np.exp(-(2.0 ** k / (median if median > 0 else 1.0)) * distances)
            eigenvalues, vectors = np.linalg.eigh(kernel[np.ix_(train, train)])
            projected, cross = vectors.T @ centred, kernel[np.ix_(test, train)] @ vectors
            for m, lam in enumerate(lams):
                shrink = 1.0 / (np.clip(eigenvalues, 0.0, None) + lam * train.sum())
                scores[w, m] += batched_ordinal_auc(Y[test], cross @ (shrink[:, None] * projected))
    return (scores / np.unique(folds).size).reshape(-1, Y.shape[1]).max(axis=0)


def permutation_screen(X, y, *, n_permutations, alpha, seed, widths, lams, n_folds=5):
    """The proxy search on ``y`` and on ``n_permutations`` permutations of it, and the verdict.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The labeled rows.
    y : ndarray of int, shape (n,)
    n_permutations : int
    alpha : float
        The declared false-pass rate.
    seed : int
        Seeds the folds and the permutations.
    widths, lams : sequence of float
        The proxy's grid (:func:`proxy_search`).
    n_folds : int, default=5

    Returns
    -------
    dict
        ``observed`` (the best CV AUC), ``null_level`` (the null's ``1 - alpha`` quantile),
        ``p_value`` and ``signal`` (``p_value <= alpha``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((120, 2))
    >>> result = permutation_screen(X, (X[:, 0] * 3).astype(int), n_permutations=19, alpha=0.05, seed=0,
    ...                             widths=[0.0], lams=[1e-3])
    >>> result["signal"], result["p_value"]
    (True, 0.05)
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    folds = rng.permutation(np.arange(y.size) % n_folds)
    Y = np.column_stack([y] + [rng.permutation(y) for _ in range(n_permutations)])
    best = proxy_search(np.asarray(X, dtype=np.float64), Y, folds, widths=widths, lams=lams)
    observed, null = float(best[0]), best[1:]
    p_value = float((1 + np.sum(null >= observed)) / (1 + n_permutations))
    return {"observed": observed, "null_level": float(np.quantile(null, 1 - alpha)), "p_value": p_value,
            "signal": p_value <= alpha}
