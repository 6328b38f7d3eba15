"""Gradient-boosted trees on the labeled rows: a practitioner's reference beside the linear floor.

It answers the question a user asks before any kernel: what would an
off-the-shelf nonlinear model give on the labeled rows alone?  The model is
scikit-learn's histogram gradient boosting regressor fitted to the ordinal
codes ``0 .. k-1`` as numbers (squared error); its prediction is the latent
score, so the ordinal AUC ranks by it, and the labels are the codes it rounds
to (thresholds halfway between consecutive codes).
"""

from __future__ import annotations

import numbers

import numpy as np

from qs3orao.base import OrdinalEstimator
from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params, plain

__all__ = ["GradientBoostingReference"]


class GradientBoostingReference(OrdinalEstimator):
    """Histogram gradient-boosted regression trees on the labeled rows' ordinal codes.

    Early stopping is off: every fit grows ``max_iter`` trees, so the fit is a
    function of the labeled rows and the parameters alone (no held-out split).

    Parameters
    ----------
    learning_rate : float, default=0.1
        Shrinkage of each tree.
    max_leaf_nodes : int, default=31
        Leaves per tree (at least 2).
    l2_regularization : float, default=0.0
        L2 penalty on the leaf values (>= 0).
    max_iter : int, default=100
        Trees (boosting iterations).
    min_samples_leaf : int, default=20
        Smallest number of labeled rows in a leaf.
    random_state : int, numpy Generator or None, default=None
        Passed to scikit-learn (used only to subsample rows for binning past 200,000 labeled rows).
    classes : array-like, optional
        Every ordinal level, when the labeled rows may miss some.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    thresholds_ : ndarray of shape (k - 1,)
        ``0.5, 1.5, ..., k - 1.5``: a score is labeled by the code it rounds to.
    model_ : sklearn.ensemble.HistGradientBoostingRegressor
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(60, dtype=float).reshape(-1, 1) / 60
    >>> y = np.repeat([0, 1, 2], 20)
    >>> model = GradientBoostingReference(min_samples_leaf=5, random_state=0).fit(X, y)
    >>> model.predict(X[::20]).tolist()
    [0, 1, 2]
    """

    def __init__(self, *, learning_rate=0.1, max_leaf_nodes=31, l2_regularization=0.0, max_iter=100,
                 min_samples_leaf=20, random_state=None, classes=None):
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.l2_regularization = l2_regularization
        self.max_iter = max_iter
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.classes = classes

    def _check_params(self):
        check_positive(self.learning_rate, "learning_rate")
        if _integral(self.max_leaf_nodes) < 2:
            raise ValueError(f"max_leaf_nodes must be an integer >= 2, got {plain(self.max_leaf_nodes)}")
        if (isinstance(self.l2_regularization, bool) or not isinstance(self.l2_regularization, numbers.Real)
                or not 0 <= self.l2_regularization < np.inf):
            raise ValueError(f"l2_regularization must be a finite number >= 0, got {plain(self.l2_regularization)}")
        check_positive(_integral(self.max_iter, "max_iter"), "max_iter", integer=True)
        check_positive(_integral(self.min_samples_leaf, "min_samples_leaf"), "min_samples_leaf", integer=True)
        check_shared_params(self)

    def fit(self, X, y):
        """Fit on the labeled rows of ``X`` (rows with ``y == -1`` are ignored).

        Returns
        -------
        self
        """
        from sklearn.ensemble import HistGradientBoostingRegressor

        self._check_params()
        X, codes, self.classes_, _ = check_semisupervised(X, y, classes=self.classes)
        labeled = codes != UNLABELED
        self.model_ = HistGradientBoostingRegressor(
            learning_rate=float(self.learning_rate), max_leaf_nodes=_integral(self.max_leaf_nodes),
            l2_regularization=float(self.l2_regularization), max_iter=_integral(self.max_iter),
            min_samples_leaf=_integral(self.min_samples_leaf), early_stopping=False,
            random_state=self.random_state).fit(X[labeled], codes[labeled].astype(np.float64))
        self.thresholds_ = np.arange(self.classes_.size - 1, dtype=np.float64) + 0.5
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """The boosted trees' prediction of the ordinal code, the latent score.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        return np.asarray(self.model_.predict(X), dtype=np.float64)


def _integral(value, name="max_leaf_nodes"):
    """``value`` as an int when it is a whole number (a tuning grid may hold ``7.0``); TypeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not float(value).is_integer():
        raise TypeError(f"{name} must be an integer, got {plain(value)}")
    return int(value)
