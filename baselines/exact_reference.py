"""QS3ORAO's own objective solved exactly (``f*``), as an estimator: the reference column of the benchmark.

The estimator of :func:`qs3orao.exact.exact_solution`: the same objective,
kernel, trade-offs and threshold fit as :class:`qs3orao.QS3ORAO`, minimised
exactly over every labeled and unlabeled training row.  Beside QS3ORAO it
separates what the stochastic optimiser loses (``f*`` against QS3ORAO) from
what the objective loses (``f*`` against the other methods).
"""

from __future__ import annotations

from qs3orao.base import OrdinalEstimator
from qs3orao.exact import objective_value
from qs3orao.kernels import gaussian_kernel
from qs3orao.quadratic import kernel_root, ordinal_pairwise_risk, solve_kernel_expansion, solve_kernel_expansion_path
from qs3orao.thresholds import fit_thresholds
from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params

from ._budget import FLOAT_BYTES, check_budget, chunk_bytes
from ._common import LamPath, check_threshold_loss, kernel_scores
from .kernel_cache import cached

__all__ = ["QS3ORAOExact"]


class QS3ORAOExact(LamPath, OrdinalEstimator):
    """The exact minimiser ``f*`` of QS3ORAO's objective (the paper's Equation (10)).

    Parameters
    ----------
    gamma, lam, tradeoff, threshold_loss, classes :
        As in :class:`qs3orao.QS3ORAO`.
    memory_budget : int, optional
        Bytes the fit may allocate (the kernel matrix and the linear system, O(n^2));
        None means half of the available memory.

    Attributes
    ----------
    classes_, thresholds_, threshold_intervals_, train_scores_, n_features_in_
        As in :class:`qs3orao.QS3ORAO`.
    coef_ : ndarray of shape (n_samples,)
        ``f* = sum_i coef_[i] k(X_fit_[i], .)``.
    X_fit_ : ndarray of shape (n_samples, n_features)
    objective_ : float
        ``L(f*)``.
    tradeoff_ : ndarray of shape (n_classes - 1,)
    memory_estimate_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(200, 2))
    >>> y = np.digitize(X.sum(axis=1), [0.7, 1.0, 1.3])
    >>> y[60:] = -1
    >>> QS3ORAOExact(gamma=2.0, lam=0.1).fit(X, y).coef_.shape
    (200,)
    """

    #: At a tuning fold's size the path over 24 values costs more than 24 separate Cholesky solves
    #: (``timing/lam_path_break_even.py``): every search of up to 24 values solves each on its own.
    PATH_MIN_SETTINGS = 27

    def __init__(self, *, gamma=1.0, lam=1.0, tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 memory_budget=None):
        self.gamma = gamma
        self.lam = lam
        self.tradeoff = tradeoff
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.memory_budget = memory_budget

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`).

        The kernel, the system (factorised in place) and one row chunk.
        """
        n = n_samples
        return FLOAT_BYTES * (2 * n * n + (n_classes + 4) * n) + chunk_bytes(n, n, copies=1)

    def _check_params(self):
        check_positive(self.gamma, "gamma")
        check_positive(self.lam, "lam")
        check_threshold_loss(self.threshold_loss)
        check_shared_params(self)

    def fit(self, X, y):
        """Solve for ``f*`` on labeled rows (ordinal labels) and unlabeled rows (``y == -1``).

        Returns
        -------
        self
        """
        X, codes, (K, risk) = self._prepare(X, y)
        return self._finish(X, codes, (K, risk), solve_kernel_expansion(K, codes, risk, self.lam))

    def _prepare(self, X, y, path=False):
        """Validate, check the memory budget (of the path solver with ``path``), make the kernel and the risk."""
        self._check_params()
        X, codes, self.classes_, self.tradeoff_ = check_semisupervised(
            X, y, tradeoff=self.tradeoff, classes=self.classes)
        n = X.shape[0]
        self.memory_estimate_ = check_budget(
            "QS3ORAO-exact", self.estimate_memory(n, X.shape[1], self.classes_.size) + self.path_extra_bytes(n, path),
            self.memory_budget)
        K = cached("gaussian_kernel", (X,), (self.gamma,), lambda: gaussian_kernel(X, gamma=self.gamma))
        return X, codes, (K, ordinal_pairwise_risk(self.classes_.size, self.tradeoff_))

    def _solve_path(self, prepared, codes, lams):
        """Coefficients of ``f*`` for every ``lam``, shape ``(len(lams), n)``."""
        K, risk = prepared
        root = cached("kernel_root", (K,), (), lambda: kernel_root(K))
        return solve_kernel_expansion_path(K, codes, risk, lams, root=root)

    def _finish(self, X, codes, prepared, coef):
        K, _ = prepared
        self.X_fit_, self.coef_ = X, coef
        self.train_scores_ = K @ coef
        self.objective_ = float(objective_value(coef, K, codes, self.tradeoff_, self.lam))
        labeled = codes != UNLABELED
        self.thresholds_, self.threshold_intervals_ = fit_thresholds(
            self.train_scores_[labeled], codes[labeled], self.classes_.size, self.threshold_loss,
            return_intervals=True)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """``f*(x)`` for the rows of ``X``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        return kernel_scores(X, self.X_fit_, self.gamma, self.coef_)
