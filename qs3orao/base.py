"""What every ordinal estimator of the project shares: the input check of prediction, ``predict`` and ``score``.

:class:`OrdinalEstimator` is public so that other methods (the baselines, a
user's own) behave like :class:`qs3orao.QS3ORAO` on the same input.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .metrics import ordinal_auc
from .thresholds import assign_classes
from .validation import UNLABELED, check_features

__all__ = ["OrdinalEstimator"]


class OrdinalEstimator(BaseEstimator):
    """Base of a fitted ordinal ranking model with ``classes_``, ``thresholds_`` and ``decision_function``.

    Subclasses implement ``fit`` (setting ``classes_``, ``thresholds_`` and
    ``n_features_in_``) and ``decision_function`` (calling :meth:`_check_X`
    first).  ``predict`` assumes one score per row and ordered thresholds;
    models with one score column per split override it.
    """

    def _check_params(self):
        """Check the parameters alone, before any data: raise ``ValueError``/``TypeError`` naming the bad one.

        ``fit`` calls it first; the study calls it when it plans a run, so that a bad
        configured value stops the plan instead of every job. Subclasses override it.
        """

    def _check_X(self, X):
        """``X`` as a finite float64 matrix with the fitted number of features."""
        check_is_fitted(self, "classes_")
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input")
        return X

    def predict(self, X):
        """Ordinal labels: ``classes_[#{j : f(x) > thresholds_[j]}]``."""
        return self.predict_from_scores(self.decision_function(X))

    def predict_from_scores(self, scores):
        """The labels :meth:`predict` gives the rows whose ``decision_function`` is ``scores``.

        For a caller that already holds the scores (the fit's own
        ``train_scores_``, or an evaluation it timed): the model is not
        evaluated again.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Or ``(n_samples, k - 1)`` for models with one score column per split.

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            If ``scores`` does not have the shape ``decision_function`` gives.
        """
        scores = self._check_scores(scores, columns=None)
        return self.classes_[assign_classes(scores, self.thresholds_)]

    def _check_scores(self, scores, columns):
        """``scores`` as float64, one per row (``columns`` None) or ``columns`` per row; ValueError otherwise."""
        check_is_fitted(self, "classes_")
        scores = np.asarray(scores, dtype=np.float64)
        shape = "(n_samples,)" if columns is None else f"(n_samples, {columns})"
        if scores.ndim != (1 if columns is None else 2) or (columns is not None and scores.shape[1] != columns):
            raise ValueError(f"{type(self).__name__} scores have the shape {shape}, got {scores.shape}")
        return scores

    def score(self, X, y):
        """Ordinal AUC of ``decision_function`` on the labeled rows (``y != -1``).

        With one score column per split (M-PNU-AUC, M-SAMULT), split ``j`` is
        ranked by its own column.
        """
        y = np.asarray(y)
        labeled = y != UNLABELED
        return ordinal_auc(y[labeled], self.decision_function(np.asarray(X)[labeled]), classes=self.classes_)
