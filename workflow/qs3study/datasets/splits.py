"""Semi-supervised splits: a few labeled rows, the rest unlabeled (``y == -1``)."""

from dataclasses import dataclass

import numpy as np

UNLABELED = -1


@dataclass(frozen=True)
class Split:
    """Rows used for one trial, labeled rows first.

    Attributes
    ----------
    train_idx : ndarray of int64
        Indices into the dataset: ``n_labeled`` labeled rows, then the
        unlabeled rows (each group in increasing order).
    y_train : ndarray of int64
        Labels as the learner sees them: the true label for labeled rows,
        ``-1`` for unlabeled rows; aligned with ``train_idx``.
    y_true : ndarray of int64
        True labels of all of ``train_idx`` (to evaluate on the unlabeled rows).
    labeled_mask : ndarray of bool
        ``y_train != -1``, aligned with ``train_idx``.
    """

    train_idx: np.ndarray
    y_train: np.ndarray
    y_true: np.ndarray
    labeled_mask: np.ndarray

    @property
    def n_labeled(self):
        return int(self.labeled_mask.sum())

    @property
    def n_unlabeled(self):
        return int(self.labeled_mask.size - self.labeled_mask.sum())


class PoolTooSmallError(ValueError):
    """More unlabeled rows requested than the split leaves once the labeled rows are drawn."""


def _group_sides(groups, y, n_labeled, classes, rng):
    """Rows of the labeled side's groups and of the other side's: half of the groups each, drawn at random.

    The labeled side gets ``G // 2`` of the ``G`` groups: as with rows, a group
    holding each class not yet held is drawn first (uniformly among the groups
    holding it), the others uniformly from the rest. A labeled side that
    cannot hold every class or ``n_labeled`` rows is an error, never a smaller draw.
    """
    names, codes = np.unique(groups, return_inverse=True)
    if names.size < 2:
        raise ValueError(f"groups: a group split needs at least 2 groups, got {names.size}")
    n_labeled_side = names.size // 2
    labeled_side = np.zeros(names.size, dtype=bool)
    for c in classes:
        holding = np.unique(codes[y == c])
        if not labeled_side[holding].any():
            labeled_side[rng.choice(holding)] = True
    where = f"the labeled side's {n_labeled_side} of {names.size} groups"
    if labeled_side.sum() > n_labeled_side:
        raise ValueError(f"groups: {where} cannot hold every class (it takes {labeled_side.sum()} groups)")
    rest = np.flatnonzero(~labeled_side)
    labeled_side[rng.choice(rest, size=n_labeled_side - labeled_side.sum(), replace=False)] = True
    pool = np.flatnonzero(labeled_side[codes])
    if pool.size < n_labeled:
        raise ValueError(f"groups: {where} hold {pool.size} rows, fewer than n_labeled={n_labeled}")
    unlabeled_side = f"the unlabeled side's {names.size - n_labeled_side} of {names.size} groups"
    return pool, np.flatnonzero(~labeled_side[codes]), unlabeled_side


def semisupervised_split(y, *, n_labeled, seed, n_unlabeled=None, groups=None):
    """Draw labeled rows at random and mark the rest unlabeled.

    So that every class is labeled, one row of each class is drawn first
    (uniformly within the class); the other ``n_labeled - k`` labeled rows are
    a uniform random sample of the remaining rows. With the paper's 500
    labels and five bins of thousands of rows this differs from plain uniform
    sampling by a fraction of a row per class. The unlabeled rows are a uniform random subset
    of the remaining rows of size ``n_unlabeled`` (all of them by default),
    drawn from a second stream, so for a fixed seed the labeled rows do not
    depend on ``n_unlabeled`` and smaller unlabeled pools are subsets of
    larger ones.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        True ordinal labels ``0 .. k-1`` of the whole dataset.
    n_labeled : int
        Number of labeled rows (the paper uses 500).
    seed : int
        Trial seed; the split is a pure function of ``(y, n_labeled, seed, n_unlabeled, groups)``.
    n_unlabeled : int, optional
        Size of the unlabeled pool; ``None`` keeps every remaining row.
    groups : array-like of shape (n,), optional
        A group per row (a subject, a site). The groups are divided at random
        into two sides, ``G // 2`` of the ``G`` groups on the labeled side, a
        group holding each class among them (from the labeled rows' stream, so
        the division is the trial's whatever ``n_unlabeled``); the labeled rows
        are drawn from the labeled side's rows as above, so they span its many
        groups, and the unlabeled rows from the other side's alone. No group is
        on both sides; the labeled side's rows not drawn are in neither.

    Returns
    -------
    Split

    Raises
    ------
    PoolTooSmallError
        If ``n_unlabeled`` exceeds the rows left for the unlabeled side.
    ValueError
        If ``n_labeled`` is smaller than the number of classes or larger than
        the dataset; with ``groups``, if there are fewer than 2 groups, or half
        of them cannot hold every class or ``n_labeled`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> split = semisupervised_split(np.repeat([0, 1, 2], 10), n_labeled=6, seed=0)
    >>> bool((split.y_train[:6] >= 0).all()), bool((split.y_train[6:] == -1).all())
    (True, True)
    """
    y = np.asarray(y)
    if y.ndim != 1 or not np.issubdtype(y.dtype, np.integer) or (y.size and y.min() < 0):
        raise ValueError("y must be a 1-d array of non-negative integer labels")
    classes = np.unique(y)
    n = y.size
    if int(n_labeled) != n_labeled or not classes.size <= n_labeled <= n:
        raise ValueError(
            f"n_labeled must be an integer between the number of classes ({classes.size}) "
            f"and the number of rows ({n}), got {n_labeled!r}"
        )
    labeled_seq, unlabeled_seq = np.random.SeedSequence(seed).spawn(2)

    rng = np.random.default_rng(labeled_seq)
    if groups is None:
        pool, outside, side = np.arange(n), np.arange(n), None
    else:
        groups = np.asarray(groups)
        if groups.shape != y.shape:
            raise ValueError(f"groups must have one value per row of y ({n}), got shape {groups.shape}")
        pool, outside, side = _group_sides(groups, y, n_labeled, classes, rng)
    one_per_class = np.array([rng.choice(pool[y[pool] == c]) for c in classes])
    others = np.setdiff1d(pool, one_per_class, assume_unique=True)
    labeled = np.sort(
        np.concatenate(
            [one_per_class, rng.choice(others, size=int(n_labeled) - classes.size, replace=False)]
        )
    )

    remaining = np.setdiff1d(outside, labeled, assume_unique=True)
    if n_unlabeled is None:
        unlabeled = remaining
    else:
        if int(n_unlabeled) != n_unlabeled or n_unlabeled < 0:
            raise ValueError(f"n_unlabeled must be a non-negative integer, got {n_unlabeled!r}")
        if n_unlabeled > remaining.size:
            left = (f"the {n} rows leave {remaining.size} once {n_labeled} are labeled" if side is None
                    else f"{side} hold {remaining.size} rows")
            raise PoolTooSmallError(f"n_unlabeled={n_unlabeled} rows requested, but {left}")
        order = np.random.default_rng(unlabeled_seq).permutation(remaining.size)
        unlabeled = np.sort(remaining[order[: int(n_unlabeled)]])

    train_idx = np.concatenate([labeled, unlabeled]).astype(np.int64)
    labeled_mask = np.zeros(train_idx.size, dtype=bool)
    labeled_mask[: labeled.size] = True
    y_true = y[train_idx].astype(np.int64)
    y_train = np.where(labeled_mask, y_true, UNLABELED)
    return Split(train_idx, y_train, y_true, labeled_mask)


def trial_rows(X, y, *, n_labeled, seed, n_unlabeled=None, group_column=None):
    """One trial's split of ``(X, y)`` and the features of its rows; a group column splits, it is no feature.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The prepared features (a memory map is read at the split's rows only).
    y : ndarray of int, shape (n,)
    n_labeled, seed, n_unlabeled
        As in :func:`semisupervised_split`.
    group_column : int, optional
        Column of ``X`` naming each row's group (a :class:`~qs3study.datasets.DatasetSpec`'s):
        the split keeps every group on one side (``groups``) and the column is left
        out of the features returned.

    Returns
    -------
    split : Split
    features : ndarray of shape (split.train_idx.size, d or d - 1)
        ``X``'s rows ``split.train_idx``, without ``group_column``.
    groups : ndarray or None
        The group of each of those rows (None without ``group_column``).
    """
    groups = None if group_column is None else np.asarray(X[:, group_column])
    split = semisupervised_split(y, n_labeled=n_labeled, seed=seed, n_unlabeled=n_unlabeled, groups=groups)
    features = np.array(X[split.train_idx])
    if groups is None:
        return split, features, None
    return split, np.delete(features, group_column, axis=1), groups[split.train_idx]
