"""Data-validity checks run when a dataset is prepared, before any method sees it.

Three checks, each a pure function of arrays, each returning the number a
declared level is compared with:

- :func:`rank_leak`: the largest ``|Spearman|`` between the raw target and one
  raw feature, or the sum or difference of two (a target computed from its
  features, such as a count that is ``casual + registered``);
- :func:`group_lookup`: columns with few distinct values whose labeled rows'
  mean target, looked up for the other rows, ranks them well (an identifier
  of subjects or sites, with rows of one group on both sides of a split);
- :func:`nearest_neighbour_auc`: the ordinal AUC of a 1-nearest-neighbour
  lookup from the labeled rows to the unlabeled ones, a reference any method
  should beat.
"""

import numpy as np
from scipy.stats import rankdata

from qs3orao.metrics import ordinal_auc

__all__ = ["rank_leak", "group_lookup", "nearest_neighbour_auc"]

_CHUNK = 256  # feature combinations ranked at once


def _standardized_ranks(values):
    ranks = rankdata(values, axis=0)
    ranks -= ranks.mean(axis=0)
    norms = np.linalg.norm(ranks, axis=0)
    return ranks / np.where(norms == 0, 1.0, norms)


def rank_leak(X, target):
    """The feature, or sum or difference of two features, whose rank agrees best with the target's.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Raw features (before scaling: a sum of scaled columns is a weighted sum of raw ones).
    target : ndarray of shape (n,)
        The raw target (before binning: the bins' ties cap Spearman below 1).

    Returns
    -------
    value : float
        The largest ``|Spearman|``.
    combination : str
        Which features, e.g. ``"feature 15 + feature 16"`` (0-based columns); one feature
        wins a tie with a pair.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 4))
    >>> value, combination = rank_leak(X, X[:, 1] - X[:, 3])
    >>> round(value, 6), combination
    (1.0, 'feature 1 - feature 3')
    """
    X = np.asarray(X, dtype=np.float64)
    t = _standardized_ranks(np.asarray(target, dtype=np.float64))
    first, second = np.triu_indices(X.shape[1], k=1)
    candidates = [(f"feature {j}", X[:, [j]]) for j in range(X.shape[1])]
    for sign, symbol in ((1.0, "+"), (-1.0, "-")):
        for start in range(0, first.size, _CHUNK):
            a, b = first[start:start + _CHUNK], second[start:start + _CHUNK]
            candidates.append(([f"feature {i} {symbol} feature {j}" for i, j in zip(a, b)],
                               X[:, a] + sign * X[:, b]))
    best, where = -1.0, ""
    for names, values in candidates:
        rho = np.abs(t @ _standardized_ranks(values))
        k = int(np.argmax(rho))
        if rho[k] > best + 1e-12:
            best, where = float(rho[k]), names if isinstance(names, str) else names[k]
    return best, where


def group_lookup(X, y, labeled, *, min_groups, max_distinct_fraction):
    """The column whose group means, looked up from the labeled rows, rank the other rows best.

    A column is a candidate when it has between ``min_groups`` and
    ``max_distinct_fraction * n`` distinct values. An unlabeled row gets the mean
    label of the labeled rows with its value (the labeled mean if none has it).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of int, shape (n,)
        Ordinal labels.
    labeled : ndarray of bool, shape (n,)
        Rows whose labels the lookup may read; it is scored on the others.
    min_groups : int
    max_distinct_fraction : float

    Returns
    -------
    value : float or None
        The best lookup's ordinal AUC on the unlabeled rows (None without a candidate).
    column : int or None
    n_groups : int or None
        Its number of distinct values.
    """
    X, y, labeled = np.asarray(X), np.asarray(y), np.asarray(labeled, dtype=bool)
    best = (None, None, None)
    for j in range(X.shape[1]):
        values, codes = np.unique(X[:, j], return_inverse=True)
        if not min_groups <= values.size <= max_distinct_fraction * y.size:
            continue
        sums = np.bincount(codes[labeled], weights=y[labeled], minlength=values.size)
        counts = np.bincount(codes[labeled], minlength=values.size)
        means = np.where(counts > 0, sums / np.maximum(counts, 1), y[labeled].mean())
        auc = ordinal_auc(y[~labeled], means[codes[~labeled]])
        if best[0] is None or auc > best[0]:
            best = (auc, j, int(values.size))
    return best


def nearest_neighbour_auc(X, y, labeled):
    """Ordinal AUC on the unlabeled rows of the label of their nearest labeled row (Euclidean).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [0.1], [1.1], [1.9]])
    >>> nearest_neighbour_auc(X, np.array([0, 1, 2, 0, 1, 2]), np.arange(6) < 3)
    1.0
    """
    from sklearn.neighbors import NearestNeighbors

    labeled = np.asarray(labeled, dtype=bool)
    index = NearestNeighbors(n_neighbors=1).fit(X[labeled])
    nearest = index.kneighbors(X[~labeled], return_distance=False)[:, 0]
    return ordinal_auc(y[~labeled], y[labeled][nearest])
