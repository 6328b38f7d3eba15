"""Ordinal metrics: the mean split-wise AUC and the concordance index (rankings);
mean absolute error and accuracy (predicted labels)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["binary_auc", "ordinal_auc", "c_index", "mean_absolute_error", "accuracy"]


def binary_auc(is_positive, scores):
    """Area under the ROC curve, ties in ``scores`` counting one half.

    Computed from mid-ranks (the Mann-Whitney statistic) in O(n log n).

    Parameters
    ----------
    is_positive : array-like of bool, shape (n,)
    scores : array-like of float, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> binary_auc([False, True, False, True], [0.1, 0.4, 0.4, 0.9])
    0.875
    """
    is_positive = np.asarray(is_positive, dtype=bool)
    n_pos = int(is_positive.sum())
    n_neg = is_positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("binary_auc needs at least one positive and one negative row")
    ranks = rankdata(scores)
    return float((ranks[is_positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def ordinal_auc(y_true, scores, *, classes=None):
    """Mean over the ``k - 1`` ordinal splits of the binary AUC.

    Split ``j`` takes the rows with label ``<= classes[j]`` as negatives and the
    rest as positives (the decomposition of Waegeman et al., 2008, used by the
    paper's Equation (2)).

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
    scores : array-like, shape (n,) or (n, k - 1)
        One ranking score per row, or one column per split for methods that
        learn one function per split.
    classes : array-like, optional
        The ordered levels; default the distinct values of ``y_true``.

    Returns
    -------
    float

    Examples
    --------
    >>> ordinal_auc([0, 1, 2, 2], [0.0, 0.5, 0.4, 1.0])
    0.875
    """
    y_true = np.asarray(y_true)
    scores = np.asarray(scores, dtype=np.float64)
    levels = np.unique(y_true) if classes is None else np.asarray(classes)
    if levels.size < 2:
        raise ValueError("ordinal_auc needs at least two classes in y_true")
    if scores.shape[0] != y_true.shape[0]:
        raise ValueError(f"y_true and scores have mismatched lengths: {y_true.shape[0]} and {scores.shape[0]}")
    if scores.ndim == 2 and scores.shape[1] != levels.size - 1:
        raise ValueError(f"scores has {scores.shape[1]} columns; expected one per split ({levels.size - 1})")
    aucs = [
        binary_auc(y_true > level, scores if scores.ndim == 1 else scores[:, j])
        for j, level in enumerate(levels[:-1])
    ]
    return float(np.mean(aucs))


def c_index(y_true, scores):
    """Concordance index: the fraction of pairs with different labels ranked in
    label order, ties in ``scores`` counting one half.

    Parameters
    ----------
    y_true : array-like of int, shape (n,)
    scores : array-like of float, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> c_index([0, 1, 2], [0.0, 2.0, 1.0])
    0.6666666666666666
    """
    y_true = np.asarray(y_true)
    scores = np.asarray(scores, dtype=np.float64)
    levels, counts = np.unique(y_true, return_counts=True)
    if levels.size < 2:
        raise ValueError("c_index needs at least two classes in y_true")
    concordant = 0.0
    for level in levels[1:]:
        lower = np.sort(scores[y_true < level])
        upper = scores[y_true == level]
        below = np.searchsorted(lower, upper, side="left")
        tied = np.searchsorted(lower, upper, side="right") - below
        concordant += below.sum() + 0.5 * tied.sum()
    n_pairs = (counts.sum() ** 2 - (counts ** 2).sum()) / 2
    return float(concordant / n_pairs)


def _label_pair(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim != 1 or y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must be 1-d of the same length, got shapes {y_true.shape} and {y_pred.shape}")
    if y_true.size == 0:
        raise ValueError("y_true and y_pred are empty")
    return y_true, y_pred


def mean_absolute_error(y_true, y_pred):
    """Mean of ``|y_true - y_pred|`` over the rows: how many levels a predicted label is off, on average.

    Parameters
    ----------
    y_true, y_pred : array-like of int, shape (n,)
        Ordinal labels on the same integer scale.

    Returns
    -------
    float

    Examples
    --------
    >>> mean_absolute_error([0, 1, 2, 4], [0, 2, 2, 1])
    1.0
    """
    y_true, y_pred = _label_pair(y_true, y_pred)
    return float(np.mean(np.abs(y_true.astype(np.float64) - y_pred.astype(np.float64))))


def accuracy(y_true, y_pred):
    """Fraction of rows whose predicted label equals the true one.

    Parameters
    ----------
    y_true, y_pred : array-like, shape (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> accuracy([0, 1, 2, 4], [0, 2, 2, 1])
    0.5
    """
    y_true, y_pred = _label_pair(y_true, y_pred)
    return float(np.mean(y_true == y_pred))
