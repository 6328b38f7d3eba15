"""The linear floor: a supervised linear ordinal model on the labeled rows, the reference of every table.

It answers one question for a reader: do the kernels and the unlabeled rows
help at all?  The model is the all-threshold ordinal logistic regression with
an L2 penalty (``mord.LogisticAT``; Rennie and Srebro, 2005), fitted on the
labeled rows only; its latent score is linear in the features.
"""

from __future__ import annotations

import math

import numpy as np

from qs3orao.base import OrdinalEstimator
from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params

__all__ = ["LinearFloor"]


class LinearFloor(OrdinalEstimator):
    """All-threshold ordinal logistic regression on the labeled rows (``mord.LogisticAT``).

    Parameters
    ----------
    alpha : float, default=1.0
        L2 penalty on the weights (mord's ``alpha``); the paper's grid 2^-3..2^3 when tuned.
    max_iter : int, default=1000
        Iterations of mord's L-BFGS solver.
    classes : array-like, optional
        Every ordinal level, when the labeled rows may miss some (they must not: see ``fit``).

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    coef_ : ndarray of shape (n_features,)
        ``f(x) = x @ coef_``.
    thresholds_ : ndarray of shape (k - 1,)
        Cut-points on ``f`` (mord's ``theta_``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(40, dtype=float).reshape(-1, 1) / 40
    >>> y = np.repeat([0, 1, 2, -1], 10)
    >>> LinearFloor(alpha=0.1).fit(X, y).predict(X[:30:10]).tolist()
    [0, 1, 2]
    """

    def __init__(self, *, alpha=1.0, max_iter=1000, classes=None):
        self.alpha = alpha
        self.max_iter = max_iter
        self.classes = classes

    def _check_params(self):
        check_positive(self.alpha, "alpha")
        check_positive(self.max_iter, "max_iter", integer=True)
        check_shared_params(self)

    def fit(self, X, y):
        """Fit on the labeled rows of ``X`` (rows with ``y == -1`` are ignored).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a class has no labeled row (the thresholds of an empty class are not identified).
        """
        from mord import LogisticAT

        self._check_params()
        X, codes, self.classes_, _ = check_semisupervised(X, y, classes=self.classes)
        labeled = codes != UNLABELED
        missing = np.setdiff1d(np.arange(self.classes_.size), codes[labeled])
        if missing.size:
            raise ValueError(f"the linear floor needs a labeled row in every class; classes "
                             f"{self.classes_[missing].tolist()} have none")
        # mord's L-BFGS stalls at w = 0 on features of size ~1e20 (the first gradient overflows its line
        # search). Features over 1 are divided by a power of two s (exact) and the penalty by s^2: the same
        # problem, f = (x / s) @ (s w) and alpha |w|^2 = (alpha / s^2) |s w|^2, whose solver does converge.
        largest = float(np.abs(X[labeled]).max())
        scale = 2.0 ** max(0, math.ceil(math.log2(largest))) if largest > 0 else 1.0
        model = LogisticAT(alpha=float(self.alpha) / scale / scale, max_iter=int(self.max_iter)).fit(
            X[labeled] / scale, codes[labeled])
        self.coef_ = np.asarray(model.coef_, dtype=np.float64) / scale
        self.thresholds_ = np.asarray(model.theta_, dtype=np.float64)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """The linear latent score ``f(x) = x @ coef_``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._check_X(X) @ self.coef_
