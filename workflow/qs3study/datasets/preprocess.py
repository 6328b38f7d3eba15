"""Preprocessing as in the paper: equal-frequency bins, [0, 1] scaling, de-duplication."""

import numpy as np

from .errors import DegenerateBinsError


def equal_frequency_bins(target, n_bins=5, *, name="target"):
    """Cut a continuous target into ``n_bins`` ordinal classes of equal frequency.

    Bin ``j`` ideally holds the rows of rank ``j n / k`` to ``(j + 1) n / k``.
    Rows with equal targets always share a bin, so where a tie group straddles
    an ideal boundary the boundary moves to whichever end of the group is
    nearer. Without ties the counts therefore differ by at most one; with ties
    each count is within the largest tie group's size of ``n / k``.

    Parameters
    ----------
    target : array-like of shape (n,)
    n_bins : int, default=5
    name : str, default="target"
        Used in error messages (the dataset name).

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        ``0 .. n_bins-1``, non-decreasing in ``target``.
    edges : ndarray of shape (n_bins - 1,)
        Largest target value of bins ``0 .. n_bins-2`` (bins are right-closed).

    Raises
    ------
    DegenerateBinsError
        If ties would leave a bin empty (one tie group covers a whole bin).
    ValueError
        If ``n_bins < 2``, the target has non-finite values or fewer rows than bins.
    """
    target = np.asarray(target, dtype=np.float64)
    if target.ndim != 1:
        raise ValueError(f"{name}: target must be 1-d, got shape {target.shape}")
    if int(n_bins) != n_bins or n_bins < 2:
        raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}")
    n_bins, n = int(n_bins), target.size
    if n < n_bins:
        raise ValueError(f"{name}: {n} rows cannot fill n_bins={n_bins} bins")
    if not np.all(np.isfinite(target)):
        raise ValueError(f"{name}: target contains NaN or infinite values")
    ordered = np.sort(target)
    ideal = np.arange(1, n_bins) * n / n_bins
    straddling = ordered[np.ceil(ideal).astype(np.int64) - 1]
    below = np.searchsorted(ordered, straddling, side="left")
    up_to = np.searchsorted(ordered, straddling, side="right")
    boundaries = np.where(ideal - below < up_to - ideal, below, up_to)
    counts = np.diff(np.concatenate([[0], boundaries, [n]]))
    if np.any(counts == 0):
        values, multiplicity = np.unique(target, return_counts=True)
        raise DegenerateBinsError(
            f"{name}: {n_bins} equal-frequency bins collapse because of ties "
            f"(bin counts {counts.tolist()}; {values.size} distinct target values, "
            f"the most frequent covers {multiplicity.max() / n:.0%} of {n} rows); "
            "use fewer bins or another dataset"
        )
    edges = ordered[boundaries - 1]
    labels = np.searchsorted(edges, target, side="left").astype(np.int64)
    return labels, edges


def ordinal_labels(values):
    """Map ordered class values (e.g. 1..5 stars) to ``0 .. k-1``.

    Returns
    -------
    labels : ndarray of int64
    classes : ndarray
        The distinct values, ``classes[label]`` being the original value.
    """
    classes, labels = np.unique(np.asarray(values), return_inverse=True)
    return labels.astype(np.int64).reshape(-1), classes


def minmax_scale_inplace(X):
    """Scale every column of a float array to ``[0, 1]``, in place.

    Constant columns become 0. Returns the indices of those columns.
    """
    if X.ndim != 2 or X.dtype != np.float64:
        raise ValueError(f"X must be a 2-d float64 array, got {X.ndim}-d {X.dtype}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    low = X.min(axis=0)
    span = X.max(axis=0) - low
    constant = np.flatnonzero(span == 0)
    span[constant] = 1.0
    X -= low
    X /= span
    return constant


def minmax_scale_common_inplace(X):
    """Scale a whole float array to ``[0, 1]`` with one common offset and span, in place.

    Unlike :func:`minmax_scale_inplace` every column keeps its spread relative
    to the others, so the ratios of column variances (e.g. an SVD spectrum)
    are unchanged. A constant array becomes 0. Returns the common ``(low, span)``.
    """
    if X.ndim != 2 or X.dtype != np.float64:
        raise ValueError(f"X must be a 2-d float64 array, got {X.ndim}-d {X.dtype}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    low = float(X.min()) if X.size else 0.0
    span = float(X.max()) - low if X.size else 0.0
    X -= low
    if span > 0:
        X /= span
    return low, span


def first_occurrence_mask(features, target):
    """Boolean mask keeping the first of every group of exact duplicate rows.

    A row is ``features[i]`` (a vector, or a text) together with ``target[i]``;
    rows with equal features but different targets are all kept.
    """
    import pandas as pd

    if isinstance(features, np.ndarray) and features.ndim == 2:
        frame = pd.DataFrame(features)
    else:
        frame = pd.DataFrame({"features": list(features)})
    frame["target"] = np.asarray(target)
    return ~frame.duplicated(keep="first").to_numpy()


def subsample_indices(n_rows, n_samples, random_state):
    """Sorted indices of a uniform subsample of ``n_samples`` out of ``n_rows`` rows."""
    if int(n_samples) != n_samples or not 1 <= n_samples <= n_rows:
        raise ValueError(f"n_samples must be an integer in [1, {n_rows}], got {n_samples!r}")
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n_rows, size=int(n_samples), replace=False))
