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


def _labeled_groups(groups, y, n_labeled, classes, rng):
    """Rows of whole groups, drawn in random order until they hold ``n_labeled`` rows and every class."""
    names, codes = np.unique(groups, return_inverse=True)
    taken = np.zeros(names.size, dtype=bool)
    for name in rng.permutation(names.size):
        taken[name] = True
        pool = taken[codes]
        if pool.sum() >= n_labeled and np.unique(y[pool]).size == classes.size:
            return np.flatnonzero(pool), np.flatnonzero(~pool)
    raise ValueError(f"groups: {n_labeled} labeled rows with every class take every group, "
                     "which leaves no group for the unlabeled rows")


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
        Trial seed; the split is a pure function of ``(y, n_labeled, seed, n_unlabeled)``.
    n_unlabeled : int, optional
        Size of the unlabeled pool; ``None`` keeps every remaining row.
    groups : array-like of shape (n,), optional
        A group per row (a subject, a site): whole groups, in random order, are
        set aside until they hold ``n_labeled`` rows and every class; the labeled
        rows are drawn from them as above and the unlabeled rows from the other
        groups alone, so no group is on both sides. The set-aside groups' other
        rows are in neither.

    Returns
    -------
    Split

    Raises
    ------
    ValueError
        If ``n_labeled`` is smaller than the number of classes or larger than
        the dataset; if ``n_unlabeled`` exceeds the remaining rows; if ``groups``
        leave no group for the unlabeled rows.

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
        pool, outside = np.arange(n), np.arange(n)
    else:
        groups = np.asarray(groups)
        if groups.shape != y.shape:
            raise ValueError(f"groups must have one value per row of y ({n}), got shape {groups.shape}")
        pool, outside = _labeled_groups(groups, y, n_labeled, classes, rng)
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
        if int(n_unlabeled) != n_unlabeled or not 0 <= n_unlabeled <= remaining.size:
            raise ValueError(
                f"n_unlabeled must be an integer in [0, {remaining.size}] "
                f"(rows left after labeling), got {n_unlabeled!r}"
            )
        order = np.random.default_rng(unlabeled_seq).permutation(remaining.size)
        unlabeled = np.sort(remaining[order[: int(n_unlabeled)]])

    train_idx = np.concatenate([labeled, unlabeled]).astype(np.int64)
    labeled_mask = np.zeros(train_idx.size, dtype=bool)
    labeled_mask[: labeled.size] = True
    y_true = y[train_idx].astype(np.int64)
    y_train = np.where(labeled_mask, y_true, UNLABELED)
    return Split(train_idx, y_train, y_true, labeled_mask)
