"""SVOREX: support vector ordinal regression with explicit threshold constraints (Chu and Keerthi, 2007)."""

from __future__ import annotations

import numpy as np

from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params

from ._budget import FLOAT_BYTES, check_budget
from qs3orao.base import OrdinalEstimator

from ._common import kernel_scores

__all__ = ["SVOREX", "CHU_DIAGONAL_JITTER"]

#: Chu's C code adds this to every diagonal kernel entry during training
#: (``smo_kernel.c``: ``kernel + 0.001`` when both points are the same row).
CHU_DIAGONAL_JITTER = 1e-3


class SVOREX(OrdinalEstimator):
    r"""Supervised support vector ordinal regression with explicit threshold constraints.

    Solves, on the labeled rows only (unlabeled rows are ignored),

    .. math::

        \min \tfrac12 \|w\|^2 + C \sum_{j} \sum_{i \in \text{class } j} (\xi_i^j + \xi_i^{*j}),
        \quad f(x_i) - b_j \le -1 + \xi_i^j, \quad f(x_i) - b_{j-1} \ge 1 - \xi_i^{*j},
        \quad b_{j-1} \le b_j,

    by Chu's own SMO implementation as shipped in ``skordinal``
    (``SVOR(constraints="explicit")``).  Its Gaussian kernel is
    ``exp(-kappa * ard * d * ||x - x'||^2)`` with ``ard = 1/d``, i.e. the
    project's ``exp(-gamma ||x - x'||^2)`` with ``kappa = gamma``; inputs are
    not normalised by the C code.  During training it adds
    ``CHU_DIAGONAL_JITTER`` to the kernel diagonal (a tiny ridge), which is
    kept here as part of the method.

    Parameters
    ----------
    gamma : float, default=1.0
        Kernel parameter of ``exp(-gamma ||x - x'||^2)``.
    C : float, default=1.0
        Slack penalty.
    tol : float, default=1e-3
        Tolerance of the SMO stopping rule.
    classes : array-like, optional
    memory_budget : int, optional
        Bytes the fit may allocate; None means half of the available memory.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    X_fit_ : ndarray of shape (n_labeled, n_features)
        The labeled training rows.
    y_fit_ : ndarray of shape (n_labeled,)
        Their class codes ``0..k-1``.
    coef_ : ndarray of shape (n_labeled,)
        Dual coefficients ``alpha*_i - alpha_i``: ``f(x) = sum_i coef_[i] k(x_i, x) + bias_``.
    bias_ : float
    thresholds_ : ndarray of shape (k - 1,)
        The thresholds ``b_j`` on the latent projection ``f``.
    svor_ : skordinal.classifiers.SVOR
        The fitted wrapper of Chu's code.
    memory_estimate_ : int
    n_features_in_ : int
    """

    def __init__(self, *, gamma=1.0, C=1.0, tol=1e-3, classes=None, memory_budget=None):
        self.gamma = gamma
        self.C = C
        self.tol = tol
        self.classes = classes
        self.memory_budget = memory_budget

    def _check_params(self):
        check_positive(self.gamma, "gamma")
        check_positive(self.C, "C")
        check_positive(self.tol, "tol")
        check_shared_params(self)

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`).

        Chu's triangular kernel cache, plus the Python-list copies of the rows and per-row state, all
        of the labeled rows only (the fit ignores the others).
        """
        n_labeled = n_samples if n_labeled is None else n_labeled
        return FLOAT_BYTES * n_labeled * (n_labeled + 1) // 2 + 64 * n_labeled * n_features + 512 * n_labeled

    def fit(self, X, y):
        """Fit on the labeled rows of ``X`` (rows with ``y == -1`` are ignored).

        Returns
        -------
        self
        """
        from skordinal.classifiers import SVOR

        self._check_params()
        X, codes, self.classes_, _ = check_semisupervised(X, y, classes=self.classes)
        labeled = codes != UNLABELED
        missing = np.setdiff1d(np.arange(self.classes_.size), codes[labeled])
        if missing.size:
            raise ValueError(f"SVOREX needs a labeled row in every class; classes "
                             f"{self.classes_[missing].tolist()} have none")
        self.X_fit_, self.y_fit_ = X[labeled], codes[labeled]
        self.memory_estimate_ = check_budget("SVOREX", self.estimate_memory(
            *X.shape, self.classes_.size, self.X_fit_.shape[0]), self.memory_budget)
        self.svor_ = SVOR(C=float(self.C), kernel="rbf", gamma=float(self.gamma), tol=float(self.tol),
                          constraints="explicit").fit(self.X_fit_, self.y_fit_)
        model = self.svor_.model_
        order = np.array([node["index"] for node in model["pairs"]["data_nodes_list"]]) - 1
        self.coef_ = np.empty(order.size)
        self.coef_[order] = model["alpha"]
        self.bias_ = float(model["bias"])
        self.thresholds_ = np.asarray(model["biasj"], dtype=np.float64)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """The latent projection ``f(x)`` that ``thresholds_`` cut into classes.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        return kernel_scores(X, self.X_fit_, self.gamma, self.coef_) + self.bias_
