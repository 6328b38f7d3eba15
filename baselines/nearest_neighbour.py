"""Nearest labeled neighbours: the reference that answers a lookup task by lookup.

A dataset whose target is interpolated from a few coordinates (a road
network's altitude from longitude and latitude) or repeated across rows of
the same group is ranked well by the label of the nearest labeled row; a
method below this reference is losing to a lookup.  The score of a row is the
mean ordinal code of its ``n_neighbors`` nearest labeled rows (Euclidean
distance on the features given); ties in distance go to the labeled row that
comes first, so the score is a function of the data alone.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from qs3orao.base import OrdinalEstimator
from qs3orao.chunking import chunk_rows
from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params

__all__ = ["NearestNeighbourReference"]


class NearestNeighbourReference(OrdinalEstimator):
    """The mean ordinal code of the ``n_neighbors`` nearest labeled rows.

    Parameters
    ----------
    n_neighbors : int, default=1
        Labeled rows averaged (at most the number of labeled rows).
    classes : array-like, optional
        Every ordinal level, when the labeled rows may miss some.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    thresholds_ : ndarray of shape (k - 1,)
        ``0.5, 1.5, ..., k - 1.5``: with one neighbour a row gets its neighbour's label.
    X_labeled_ : ndarray of shape (n_labeled, n_features)
    codes_labeled_ : ndarray of shape (n_labeled,)
        The labeled rows' codes ``0 .. k-1``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [0.1], [1.9]])
    >>> y = np.array([0, 1, 2, -1, -1])
    >>> NearestNeighbourReference().fit(X, y).predict(X[3:]).tolist()
    [0, 2]
    """

    def __init__(self, *, n_neighbors=1, classes=None):
        self.n_neighbors = n_neighbors
        self.classes = classes

    def _check_params(self):
        check_positive(self.n_neighbors, "n_neighbors", integer=True)
        check_shared_params(self)

    def fit(self, X, y):
        """Keep the labeled rows of ``X`` and their codes (rows with ``y == -1`` are ignored).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``n_neighbors`` exceeds the number of labeled rows.
        """
        self._check_params()
        X, codes, self.classes_, _ = check_semisupervised(X, y, classes=self.classes)
        labeled = codes != UNLABELED
        if self.n_neighbors > int(labeled.sum()):
            raise ValueError(f"n_neighbors={self.n_neighbors} exceeds the {int(labeled.sum())} labeled rows")
        self.X_labeled_ = X[labeled]
        self.codes_labeled_ = codes[labeled]
        self.thresholds_ = np.arange(self.classes_.size - 1, dtype=np.float64) + 0.5
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """The mean code of each row's nearest labeled rows, ties to the first labeled row.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        out = np.empty(X.shape[0])
        step = chunk_rows(self.X_labeled_.shape[0])
        for start in range(0, X.shape[0], step):
            distances = cdist(X[start:start + step], self.X_labeled_, "sqeuclidean")
            # A stable sort keeps equal distances in labeled-row order: the tie-break is the row order.
            nearest = np.argsort(distances, axis=1, kind="stable")[:, :self.n_neighbors]
            out[start:start + step] = self.codes_labeled_[nearest].mean(axis=1)
        return out
