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

Rows that come in groups (a dataset's ``group_column``: a subject's recordings)
are not exchangeable one by one: a group's rows share features and labels, so
folds of rows score a lookup of the group, and a permutation of rows breaks the
groups apart and gives a null narrower than the observed search's spread.
With ``groups``, the folds keep every group on one side, and a permutation
moves whole groups' labels: every group takes the labels of the group a
random permutation of the groups assigns it (in random order, repeated
cyclically where that group has fewer rows). The null then keeps the
labels' grouping, and its false-pass rate on grouped signal-free data is
measured in the tests, since unequal group sizes make the permutation
approximate.

Every fold's kernel is eigendecomposed once and serves every ``lam`` and every
permutation, so the cost is that of a handful of eigendecompositions of the
labeled rows' kernel, plus matrix products linear in ``n_permutations``.
"""

import numpy as np
from scipy.spatial.distance import cdist
from scipy.stats import rankdata

__all__ = ["batched_ordinal_auc", "group_permutation", "proxy_search", "permutation_screen"]


def batched_ordinal_auc(Y, P):
    """:func:`qs3orao.metrics.ordinal_auc` of every column of ``P`` against the same column of ``Y``.

    A split with no row on one side is left out of that column's mean; a column of ``Y``
    with one label only has no split, and NaN.

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
    aucs = np.array(aucs)
    scored = ~np.isnan(aucs)
    with np.errstate(invalid="ignore"):  # a column with one label only: no split, NaN
        return np.where(scored, aucs, 0.0).sum(axis=0) / scored.sum(axis=0)


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
        NaN for a column whose every fold's test rows hold one label.
    """
    distances = cdist(X, X, "sqeuclidean")
    median = np.median(distances[np.triu_indices(X.shape[0], k=1)])
    scores = np.zeros((len(widths), len(lams), Y.shape[1]))
    scored = np.zeros(Y.shape[1])
    for fold in np.unique(folds):
        train, test = folds != fold, folds == fold
        centred = Y[train] - Y[train].mean(axis=0)
        # A fold whose test rows hold one label (a fold of few groups) cannot rank: left out of that column's mean.
        ranked = np.ptp(Y[test], axis=0) > 0
        scored += ranked
        for w, k in enumerate(widths):
            kernel = np.exp(-(2.0 ** k / (median if median > 0 else 1.0)) * distances)
            eigenvalues, vectors = np.linalg.eigh(kernel[np.ix_(train, train)])
            projected, cross = vectors.T @ centred, kernel[np.ix_(test, train)] @ vectors
            for m, lam in enumerate(lams):
                shrink = 1.0 / (np.clip(eigenvalues, 0.0, None) + lam * train.sum())
                auc = batched_ordinal_auc(Y[test], cross @ (shrink[:, None] * projected))
                scores[w, m] += np.where(ranked, auc, 0.0)
    with np.errstate(invalid="ignore"):  # a column no fold could rank: NaN
        return (scores / scored).reshape(-1, Y.shape[1]).max(axis=0)


def group_permutation(y, members, rng):
    """``y`` with every group's labels replaced by those of the group a random permutation assigns it.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
    members : list of ndarray of int
        The rows of each group.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n,)
        Group ``g``'s rows hold the labels of group ``source[g]`` (``source`` a random
        permutation of the groups), in random order, repeated cyclically to ``g``'s size.

    Examples
    --------
    >>> members = [np.array([0, 1]), np.array([2, 3, 4])]
    >>> group_permutation(np.array([0, 0, 1, 1, 1]), members, np.random.default_rng(3))
    array([1, 1, 0, 0, 0])
    """
    source = rng.permutation(len(members))
    permuted = np.empty_like(y)
    for rows, donor in zip(members, source):
        permuted[rows] = np.resize(rng.permutation(y[members[donor]]), rows.size)
    return permuted


def permutation_screen(X, y, *, n_permutations, alpha, seed, widths, lams, n_folds=5, groups=None):
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
    groups : ndarray of shape (n,), optional
        Each row's group: the folds keep groups apart and the permutations move whole
        groups' labels (:func:`group_permutation`).

    Returns
    -------
    dict
        ``observed`` (the best CV AUC), ``null_level`` (the null's ``1 - alpha`` quantile),
        ``p_value`` and ``signal`` (``p_value <= alpha``).

    Raises
    ------
    ValueError
        When ``groups`` has not one value per row, or fewer groups than ``n_folds``, or when no
        fold's test rows hold two labels.

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
    if groups is None:
        folds = rng.permutation(np.arange(y.size) % n_folds)
        Y = np.column_stack([y] + [rng.permutation(y) for _ in range(n_permutations)])
    else:
        groups = np.asarray(groups)
        if groups.shape != y.shape:
            raise ValueError(f"groups must have one value per row ({y.size}), got shape {groups.shape}")
        names, group_of = np.unique(groups, return_inverse=True)
        if names.size < n_folds:
            raise ValueError(f"the rows hold {names.size} groups, fewer than n_folds={n_folds}: "
                             "grouped folds need a group per fold at least")
        folds = rng.permutation(np.arange(names.size) % n_folds)[group_of]
        members = [np.flatnonzero(group_of == g) for g in range(names.size)]
        Y = np.column_stack([y] + [group_permutation(y, members, rng) for _ in range(n_permutations)])
    best = proxy_search(np.asarray(X, dtype=np.float64), Y, folds, widths=widths, lams=lams)
    observed, null = float(best[0]), best[1:]
    if np.isnan(observed):
        raise ValueError("no fold's test rows hold two labels: the search cannot be scored")
    # A permutation no fold could rank counts against the data (as high as the observed search).
    p_value = float((1 + np.sum(~(null < observed))) / (1 + n_permutations))
    null_level = float(np.quantile(np.where(np.isnan(null), np.inf, null), 1 - alpha))
    return {"observed": observed, "null_level": null_level, "p_value": p_value,
            "signal": p_value <= alpha}
