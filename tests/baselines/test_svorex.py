"""SVOREX: KKT conditions, ordered thresholds, the two-class C-SVM, and the kernel convention."""

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.svm import SVC

from baselines import SVOREX
from baselines.svorex import CHU_DIAGONAL_JITTER
from qs3orao.kernels import gaussian_kernel


def kkt_residual(f, codes, thresholds, beta, C, tol):
    """Smallest violation of the dual equalities over multipliers that satisfy complementary slackness.

    Each row of class ``j`` has a multiplier for ``f - b_j <= -1 + xi`` (``j < k - 1``)
    and one for ``f - b_{j-1} >= 1 - xi*`` (``j > 0``); only their difference
    ``beta`` is returned by the solver, so we search (a linear program) for a
    split of ``beta`` that complementary slackness allows and that balances the
    multipliers at every threshold.
    """
    n, k = codes.size, thresholds.size + 1
    bounds = []
    for side in ("upper", "lower"):
        for i in range(n):
            if side == "upper" and codes[i] == k - 1 or side == "lower" and codes[i] == 0:
                bounds.append((0.0, 0.0))
                continue
            margin = (f[i] - thresholds[codes[i]] + 1 if side == "upper" else 1 - f[i] + thresholds[codes[i] - 1])
            bounds.append((0.0, 0.0) if margin < -tol else (C, C) if margin > tol else (0.0, C))
    rows = [np.concatenate([-np.eye(n), np.eye(n)], axis=1)]
    rhs = [beta]
    for j in range(k - 1):
        rows.append(np.concatenate([(codes == j).astype(float), -(codes == j + 1).astype(float)])[None, :])
        rhs.append([0.0])
    A, b = np.vstack(rows), np.concatenate(rhs)
    m = A.shape[0]
    # slack pairs absorb equality violations; minimise their total
    A_slack = np.hstack([A, np.eye(m), -np.eye(m)])
    cost = np.concatenate([np.zeros(2 * n), np.ones(2 * m)])
    result = linprog(cost, A_eq=A_slack, b_eq=b, bounds=bounds + [(0, None)] * (2 * m), method="highs")
    assert result.status == 0
    return result.fun


@pytest.mark.parametrize("C", [0.5, 4.0])
def test_kkt_conditions_hold_at_the_solution(make_problem, C):
    X, y, _ = make_problem(n=120, n_labeled=120, n_classes=4, seed=2)
    model = SVOREX(gamma=2.0, C=C, tol=1e-5).fit(X, y)
    K = gaussian_kernel(X, gamma=2.0) + CHU_DIAGONAL_JITTER * np.eye(X.shape[0])
    f = K @ model.coef_ + model.bias_
    assert np.all(np.abs(model.coef_) <= C + 1e-9)
    assert np.all(np.diff(model.thresholds_) > 0)
    assert kkt_residual(f, model.y_fit_, model.thresholds_, model.coef_, C, tol=1e-3) < 1e-3


def test_thresholds_are_non_decreasing_even_when_classes_overlap():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 2))
    y = rng.integers(5, size=150)
    model = SVOREX(gamma=1.0, C=2.0).fit(X, y)
    assert np.all(np.diff(model.thresholds_) >= 0)
    assert model.thresholds_.shape == (4,)


def test_two_classes_agree_with_a_c_svm(make_problem):
    X, y, _ = make_problem(n=100, n_labeled=100, n_classes=2, seed=4)
    model = SVOREX(gamma=1.5, C=2.0, tol=1e-6).fit(X, y)
    train_kernel = gaussian_kernel(X, gamma=1.5) + CHU_DIAGONAL_JITTER * np.eye(100)
    svc = SVC(C=2.0, kernel="precomputed", tol=1e-8).fit(train_kernel, y)
    X_test = np.random.default_rng(0).uniform(size=(50, 2))
    ours = model.decision_function(X_test) - model.thresholds_[0]
    theirs = svc.decision_function(gaussian_kernel(X_test, X, gamma=1.5))
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    dual = np.zeros(100)
    dual[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(model.coef_, dual, atol=1e-3)


def test_projection_uses_the_project_kernel_convention(problem):
    X, y, _ = problem
    model = SVOREX(gamma=3.0, C=1.0).fit(X, y)
    X_test = np.random.default_rng(1).uniform(size=(20, 2))
    # skordinal evaluates Chu's kernel in C; ours is exp(-gamma ||x - x'||^2) with kappa = gamma
    np.testing.assert_allclose(model.decision_function(X_test), model.svor_.predict_projection(X_test), atol=1e-10)
    np.testing.assert_array_equal(model.predict(X_test), model.classes_[model.svor_.predict(X_test)])


def test_unlabeled_rows_are_ignored(problem):
    X, y, _ = problem
    labeled = y != -1
    with_unlabeled = SVOREX(gamma=2.0).fit(X, y)
    without = SVOREX(gamma=2.0).fit(X[labeled], y[labeled])
    np.testing.assert_allclose(with_unlabeled.decision_function(X), without.decision_function(X))


def test_every_class_needs_a_labeled_row(problem):
    X, y, _ = problem
    with pytest.raises(ValueError, match="every class"):
        SVOREX(classes=[0, 1, 2]).fit(X, np.where(y == 1, -1, y))
