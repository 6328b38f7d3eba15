"""M-SAMULT: SAMULT (Xie and Li, 2018) trained once per ordinal split, exact kernel."""

from __future__ import annotations

import numpy as np

from qs3orao.validation import check_positive, check_semisupervised, check_shared_params
from qs3orao.kernels import gaussian_kernel

from ._budget import FLOAT_BYTES, check_budget, chunk_bytes, chunk_rows
from ._common import SplitwiseModel, check_threshold_loss
from .kernel_cache import cached
from qs3orao.quadratic import kernel_root, samult_risk, solve_kernel_expansion, solve_kernel_expansion_path

__all__ = ["MSAMULT"]


def _kernel_matrix(X, gamma):
    """``K[i, j] = k(x_i, x_j)``, filled in row chunks."""
    n = X.shape[0]
    K = np.empty((n, n))
    step = chunk_rows(n)
    for start in range(0, n, step):
        K[start:start + step] = gaussian_kernel(X[start:start + step], X, gamma=gamma)
    return K


class MSAMULT(SplitwiseModel):
    r"""Multi-class SAMULT: one semi-supervised AUC model per ordinal split, without a class prior.

    For split ``j`` it minimises, over the Gaussian RKHS,

    .. math::

        \frac{\lambda}{2}\|f_j\|_{\mathcal H}^2 + \gamma^j L(P_j, N_j)
        + (1 - \gamma^j)\big(L(P_j, U) + L(U, N_j) - \tfrac12\big),

    treating each unlabeled row as both a positive and a negative (Xie and Li,
    2018), with the squared pairwise loss.  Every training row is a kernel
    centre; the representer theorem turns each split into one ``n x n``
    linear system ``(H_j K + lam I) c_j = -g_j`` (see
    :func:`qs3orao.quadratic.solve_kernel_expansion`): O(k n^3) time,
    O(n^2) memory (the kernel and one system).  With two classes this is the
    paper's own objective, so it equals :func:`qs3orao.exact.exact_solution`.

    Parameters
    ----------
    gamma : float, default=1.0
        Kernel parameter of ``exp(-gamma ||x - x'||^2)``.
    lam : float, default=1.0
        Regularisation ``lambda``.
    tradeoff : float or array-like of shape (k - 1,), default=0.5
        ``gamma^j`` in [0, 1], per split or shared.
    threshold_loss : {"ordinal_logistic", "hinge", "squared_hinge", "logistic"}, default="ordinal_logistic"
    classes : array-like, optional
    memory_budget : int, optional
        Bytes the fit may allocate; None means half of the available memory.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    centres_ : ndarray of shape (n_samples, n_features)
        The training rows, every one a kernel centre.
    coef_ : ndarray of shape (k - 1, n_samples)
    tradeoff_ : ndarray of shape (k - 1,)
    thresholds_ : ndarray of shape (k - 1,)
    train_scores_ : ndarray of shape (n_samples, k - 1)
    memory_estimate_ : int
    n_features_in_ : int
    """

    #: At a tuning fold's size the path over 24 values (one eigendecomposition per split) costs fewer than
    #: 24 separate solves (one Cholesky factorisation per split and value), so a long grid takes the path
    #: (``timing/lam_path_break_even.py`` measures the break-even).
    PATH_MIN_SETTINGS = 20

    def __init__(self, *, gamma=1.0, lam=1.0, tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 memory_budget=None):
        self.gamma = gamma
        self.lam = lam
        self.tradeoff = tradeoff
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.memory_budget = memory_budget

    def _check_params(self):
        check_positive(self.gamma, "gamma")
        check_positive(self.lam, "lam")
        check_threshold_loss(self.threshold_loss)
        check_shared_params(self)

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`).

        The kernel, then the larger of its row chunks or one system with its update chunk.
        """
        n = n_samples
        return FLOAT_BYTES * (n * n + n_classes * n) + max(
            FLOAT_BYTES * (n * n + (n_classes + 10) * n) + chunk_bytes(n, n, copies=1), chunk_bytes(n, n, copies=2))

    def fit(self, X, y):
        """Fit one SAMULT model per split on labeled rows and unlabeled rows (``y == -1``).

        Returns
        -------
        self
        """
        X, codes, K = self._prepare(X, y)
        work = np.empty_like(K)
        coef = np.array([solve_kernel_expansion(K, codes, risk, self.lam, system=work) for risk in self.risks_])
        del work
        return self._finish(X, codes, K, coef)

    def _prepare(self, X, y, path=False):
        """Validate, check the memory budget (of the path solver with ``path``), make the kernel and the risks."""
        self._check_params()
        X, codes, self.classes_, self.tradeoff_ = check_semisupervised(
            X, y, tradeoff=self.tradeoff, classes=self.classes)
        n, k = X.shape[0], self.classes_.size
        self.memory_estimate_ = check_budget(
            "M-SAMULT", self.estimate_memory(n, X.shape[1], k) + self.path_extra_bytes(n, path), self.memory_budget)
        K = cached("gaussian_kernel", (X,), (self.gamma,), lambda: _kernel_matrix(X, self.gamma))
        self.risks_ = [samult_risk(j, k, weight) for j, weight in enumerate(self.tradeoff_)]
        return X, codes, K

    def _solve_path(self, K, codes, lams):
        """Coefficients of every split for every ``lam``, shape ``(len(lams), k - 1, n)``."""
        root = cached("kernel_root", (K,), (), lambda: kernel_root(K))
        return np.stack([solve_kernel_expansion_path(K, codes, risk, lams, root=root) for risk in self.risks_],
                        axis=1)

    def _finish(self, X, codes, K, coef):
        self.coef_ = coef
        self.train_scores_ = K @ self.coef_.T
        self.centres_ = X
        self.n_features_in_ = X.shape[1]
        self._fit_thresholds(self.train_scores_, codes)
        return self
