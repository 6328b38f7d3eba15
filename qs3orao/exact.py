r"""The exact minimiser ``f*`` of the paper's regularised objective (Equation (10)).

.. math::

    \mathcal{L}(f) = \frac{\lambda}{2}\|f\|_{\mathcal H}^2 + R_\mu(f)

with the squared pairwise loss and the Gaussian kernel.  By the representer
theorem ``f* = sum_i c_i k(x_i, .)`` over every labeled and unlabeled training
row.  ``R_mu`` is quadratic in the scores ``F = K c`` with constant Hessian
``H``, so the stationarity condition ``grad_F R(K c) + lam * c = 0`` (the
functional gradient ``sum_i (dR/dF_i + lam c_i) k(x_i, .)`` vanishes) is the
linear system ``(H K + lam I) c = -grad_F R(0)``, formed and solved by the
general pairwise algebra of :mod:`qs3orao.quadratic`: O(n^2) memory and
O(n^3) time, for n up to a few thousand.  It is the reference of every convergence
check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import gaussian_kernel
from .objective import ordinal_risk_value
from .quadratic import ordinal_pairwise_risk, solve_kernel_expansion, solve_kernel_expansion_path
from .validation import check_features, check_positive, check_semisupervised

__all__ = ["ExactSolution", "exact_solution", "exact_solution_path", "objective_value"]


@dataclass(frozen=True)
class ExactSolution:
    """``f* = sum_i coef[i] * k(X[i], .)`` and what it was solved from."""

    X: np.ndarray
    coef: np.ndarray
    gamma: float
    lam: float
    codes: np.ndarray
    tradeoff: np.ndarray
    kernel: np.ndarray

    @property
    def train_scores(self):
        """``f*`` at the training rows."""
        return self.kernel @ self.coef

    def decision_function(self, X):
        """``f*(x)`` for the rows of ``X``."""
        return gaussian_kernel(check_features(X), self.X, gamma=self.gamma) @ self.coef

    def objective(self):
        """``L(f*)``."""
        return objective_value(self.coef, self.kernel, self.codes, self.tradeoff, self.lam)


def objective_value(coef, kernel, codes, tradeoff, lam):
    """``L(f) = lam/2 ||f||^2 + R_mu(f)`` for ``f = sum_i coef[i] k(x_i, .)``."""
    scores = kernel @ coef
    return 0.5 * lam * coef @ scores + ordinal_risk_value(scores, codes, tradeoff)


def exact_solution(X, y, *, gamma, lam, tradeoff=1.0, classes=None):
    """Solve for the exact minimiser ``f*``.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
        Ordinal labels, ``-1`` for unlabeled rows.
    gamma : float
        Kernel parameter of ``exp(-gamma ||x - x'||^2)``.
    lam : float
        Regularisation ``lambda``.
    tradeoff : float or array-like of shape (k - 1,)
    classes : array-like, optional

    Returns
    -------
    ExactSolution
    """
    check_positive(gamma, "gamma")
    check_positive(lam, "lam")
    X, codes, levels, weights = check_semisupervised(X, y, tradeoff=tradeoff, classes=classes)
    K = gaussian_kernel(X, gamma=gamma)
    coef = solve_kernel_expansion(K, codes, ordinal_pairwise_risk(levels.size, weights), lam)
    return ExactSolution(X=X, coef=coef, gamma=gamma, lam=lam, codes=codes, tradeoff=weights, kernel=K)


def exact_solution_path(X, y, *, gamma, lams, tradeoff=1.0, classes=None):
    """:func:`exact_solution` for every ``lam`` of ``lams``, from one eigendecomposition.

    See :func:`qs3orao.quadratic.solve_kernel_expansion_path`: ``O(n^3)`` once,
    then ``O(n^2)`` per value, instead of one ``O(n^3)`` solve per value.

    Returns
    -------
    list of ExactSolution
        One per value of ``lams``, in order.
    """
    check_positive(gamma, "gamma")
    for lam in lams:
        check_positive(lam, "lam")
    X, codes, levels, weights = check_semisupervised(X, y, tradeoff=tradeoff, classes=classes)
    K = gaussian_kernel(X, gamma=gamma)
    coefs = solve_kernel_expansion_path(K, codes, ordinal_pairwise_risk(levels.size, weights), lams)
    return [ExactSolution(X=X, coef=coef, gamma=gamma, lam=lam, codes=codes, tradeoff=weights, kernel=K)
            for lam, coef in zip(lams, coefs)]
