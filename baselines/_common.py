"""What every estimator of the package shares: input checks, scoring, per-split thresholds."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from qs3orao._validation import UNLABELED, check_features
from qs3orao.kernels import gaussian_kernel
from qs3orao.metrics import ordinal_auc
from qs3orao.thresholds import assign_classes, check_threshold_loss, fit_thresholds

from ._budget import chunk_rows

__all__ = ["OrdinalScorer", "SplitwiseModel", "check_threshold_loss", "check_split_values", "kernel_map",
           "in_chunks", "shared_predict"]


def check_split_values(values, n_splits, name, low, high, *, open_ends=False):
    """A scalar or ``n_splits`` values in ``[low, high]`` (or ``(low, high)``), as a vector."""
    out = np.asarray(values, dtype=np.float64)
    if out.ndim == 0:
        out = np.full(n_splits, float(out))
    if out.shape != (n_splits,):
        raise ValueError(f"{name} must be a scalar or {n_splits} values (one per split), got shape {out.shape}")
    inside = (out > low) & (out < high) if open_ends else (out >= low) & (out <= high)
    if not np.all(inside):
        ends = "()" if open_ends else "[]"
        raise ValueError(f"{name} values must lie in {ends[0]}{low}, {high}{ends[1]}, got {out.tolist()}")
    return out


def kernel_map(centres, gamma):
    """``x -> [k(x, c_1), ..., k(x, c_b)]`` with the project's kernel ``exp(-gamma ||x - c||^2)``."""
    return lambda X: gaussian_kernel(X, centres, gamma=gamma)


def in_chunks(features, X, n_outputs, coef):
    """``features(X) @ coef`` evaluated in row chunks (``coef`` of shape (b,) or (b, m))."""
    out = np.empty((X.shape[0],) + coef.shape[1:])
    step = chunk_rows(n_outputs)
    for start in range(0, X.shape[0], step):
        out[start:start + step] = features(X[start:start + step]) @ coef
    return out


class OrdinalScorer(BaseEstimator):
    """``score`` (ordinal AUC on labeled rows) and the input check of ``decision_function``."""

    def _check_X(self, X):
        check_is_fitted(self, "classes_")
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                             f"was fitted with {self.n_features_in_}")
        return X

    def score(self, X, y):
        """Ordinal AUC of ``decision_function`` on the labeled rows (``y != -1``).

        With one score column per split (M-PNU-AUC, M-SAMULT), split ``j`` is
        ranked by its own column.
        """
        y = np.asarray(y)
        labeled = y != UNLABELED
        return ordinal_auc(y[labeled], self.decision_function(np.asarray(X)[labeled]), classes=self.classes_)


class SplitwiseModel(OrdinalScorer):
    """Shared tail of M-PNU-AUC and M-SAMULT: one function ``f_j`` per split ``j``.

    ``decision_function`` returns the ``k - 1`` columns ``f_j(x)``.  The
    squared pairwise loss is blind to a constant shift of ``f_j``, so each
    ``f_j`` gets its own threshold, fitted like QS3ORAO's thresholds (the
    all-threshold loss, here with one threshold) on the split's labeled rows;
    ``predict`` counts the splits whose threshold ``x`` passes.
    """

    def _fit_thresholds(self, train_scores, codes):
        labeled = codes != UNLABELED
        self.thresholds_ = np.array([
            fit_thresholds(train_scores[labeled, j], (codes[labeled] > j).astype(np.int64), 2,
                           self.threshold_loss)[0]
            for j in range(train_scores.shape[1])])

    def decision_function(self, X):
        """Scores ``f_j(x) = sum_i coef_[j, i] k(centres_[i], x)`` of every split.

        Returns
        -------
        ndarray of shape (n_samples, k - 1)
        """
        X = self._check_X(X)
        return in_chunks(kernel_map(self.centres_, self.gamma), X, self.centres_.shape[0], self.coef_.T)

    def predict(self, X):
        """Ordinal labels: ``classes_[#{j : f_j(x) > threshold_j}]``."""
        passed = (self.decision_function(X) > self.thresholds_).sum(axis=1)
        return self.classes_[passed]


def shared_predict(estimator, X):
    """Ordinal labels of a one-function model from its ordered thresholds."""
    scores = estimator.decision_function(X)  # checks that the estimator is fitted
    return estimator.classes_[assign_classes(scores, estimator.thresholds_)]
