"""M-SAMULT: SAMULT (Xie and Li, 2018) trained once per ordinal split, exact kernel."""

from __future__ import annotations

import numpy as np

from qs3orao.validation import check_positive, check_semisupervised, check_shared_params
from qs3orao.kernels import gaussian_kernel

from ._budget import FLOAT_BYTES, check_budget, chunk_bytes, chunk_rows, takes_low_memory
from ._common import ChunkedKernel, SplitwiseModel, check_threshold_loss
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
    :func:`qs3orao.quadratic.solve_kernel_expansion`): O(k n^3) time.  The
    fast solver holds the kernel matrix and one system, 2 ``n^2`` floats; the
    low-memory solver holds the system alone, about ``n^2`` floats, and reads
    the kernel from row chunks computed when a solve asks for them
    (:class:`baselines._common.ChunkedKernel`: the system's rows once, and a
    few kernel products per split, each ``O(n^2 d)``).  With two classes this
    is the paper's own objective, so it equals :func:`qs3orao.exact.exact_solution`.

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
    low_memory : bool or None, default=None
        True: the low-memory solver, the kernel never held (a ``lam`` path is then
        one solve per value, each a Cholesky factorisation, instead of one
        eigendecomposition with the kernel's root); False: the fast solver; None:
        the fast one when it (with a path's extra matrices) fits ``memory_budget``,
        else the low-memory one.  Both give the same model to rounding.

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
        Bytes the fit was estimated to allocate.
    low_memory_ : bool
        Whether the fit took the low-memory solver.
    n_features_in_ : int
    """

    #: At a tuning fold's size the path over 24 values (one eigendecomposition per split) costs fewer than
    #: 24 separate solves (one Cholesky factorisation per split and value), so a long grid takes the path
    #: (``timing/lam_path_break_even.py`` measures the break-even).
    PATH_MIN_SETTINGS = 20

    def __init__(self, *, gamma=1.0, lam=1.0, tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 memory_budget=None, low_memory=None):
        self.gamma = gamma
        self.lam = lam
        self.tradeoff = tradeoff
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.memory_budget = memory_budget
        self.low_memory = low_memory

    def _check_params(self):
        check_positive(self.gamma, "gamma")
        check_positive(self.lam, "lam")
        check_threshold_loss(self.threshold_loss)
        check_shared_params(self)

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`), with the solver it takes.

        Both solvers hold the coefficients and scores (``k n`` floats) and one system
        with the ``O(k n)`` vectors of its solve.  The fast solver adds the kernel, and
        the larger of the row chunks that make it or the chunk a system's update takes;
        the low-memory one the chunks of a kernel row block, made when a solve asks.
        """
        fast, low = self._solver_bytes(n_samples, n_classes)
        return low if takes_low_memory(self.low_memory, fast, self.memory_budget) else fast

    @staticmethod
    def _solver_bytes(n, n_classes):
        """Bytes of the fast and of the low-memory solver (see :meth:`estimate_memory`)."""
        system = FLOAT_BYTES * (n * n + (n_classes + 10) * n)
        fast = FLOAT_BYTES * (n * n + n_classes * n) + max(system + chunk_bytes(n, n, copies=1),
                                                            chunk_bytes(n, n, copies=2))
        return fast, FLOAT_BYTES * n_classes * n + system + chunk_bytes(n, n, copies=2)

    def fit(self, X, y):
        """Fit one SAMULT model per split on labeled rows and unlabeled rows (``y == -1``).

        Returns
        -------
        self
        """
        X, codes, K = self._prepare(X, y)
        return self._finish(X, codes, K, self._solve_each(K, codes, [self.lam])[0])

    def _prepare(self, X, y, path=False):
        """Validate, choose the solver and check its budget (that of the path with ``path``), the kernel and the risks.

        The kernel is the matrix (the fast solver) or a :class:`baselines._common.ChunkedKernel`
        (the low-memory one, whose path holds nothing extra: one solve per value).
        """
        self._check_params()
        X, codes, self.classes_, self.tradeoff_ = check_semisupervised(
            X, y, tradeoff=self.tradeoff, classes=self.classes)
        n, k = X.shape[0], self.classes_.size
        fast, low = self._solver_bytes(n, k)
        fast += self.path_extra_bytes(n, path)
        self.low_memory_ = takes_low_memory(self.low_memory, fast, self.memory_budget)
        self.memory_estimate_ = check_budget("M-SAMULT (low-memory solver)" if self.low_memory_ else "M-SAMULT",
                                             low if self.low_memory_ else fast, self.memory_budget)
        if self.low_memory_:
            K = ChunkedKernel(X, self.gamma)
        else:
            K = cached("gaussian_kernel", (X,), (self.gamma,), lambda: _kernel_matrix(X, self.gamma))
        self.risks_ = [samult_risk(j, k, weight) for j, weight in enumerate(self.tradeoff_)]
        return X, codes, K

    def _solve_each(self, K, codes, lams):
        """Coefficients of every split for every ``lam``, one solve each in one work array: ``(len(lams), k - 1, n)``."""
        work = np.empty(K.shape)
        return np.array([[solve_kernel_expansion(K, codes, risk, lam, system=work) for risk in self.risks_]
                         for lam in lams])

    def _solve_path(self, K, codes, lams):
        """Coefficients of every split for every ``lam``, shape ``(len(lams), k - 1, n)``."""
        if self.low_memory_:
            return self._solve_each(K, codes, lams)
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
