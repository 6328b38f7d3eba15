"""QS3ORAOExact: the registered f* reference method."""

import numpy as np
import pytest

from baselines import MemoryBudgetExceeded, QS3ORAOExact
from baselines.registry import get_method, make_method
from qs3orao import QS3ORAO, ordinal_auc
from qs3orao.exact import exact_solution


def _problem(n=300, n_labeled=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.digitize(X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=n), [0.5, 0.9, 1.3])
    y_train = y.copy()
    y_train[n_labeled:] = -1
    return X, y, y_train


def test_registered_as_a_reference_column_not_a_paper_method():
    entry = get_method("qs3orao-exact")
    assert entry.estimator is QS3ORAOExact and entry.role == "alternative" and not entry.labeled_only
    assert set(entry.tuning.grid) == {"gamma", "lam"} and entry.tuning.split_param == "tradeoff"


def test_is_the_exact_solution_with_the_shared_threshold_fit():
    X, _, y_train = _problem()
    params = dict(gamma=2.0, lam=0.05, tradeoff=[0.3, 0.5, 0.7])
    model = make_method("qs3orao-exact", **params).fit(X, y_train)
    reference = exact_solution(X, y_train, **params)
    np.testing.assert_allclose(model.train_scores_, reference.train_scores, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.decision_function(X[:50]), reference.decision_function(X[:50]), rtol=1e-9,
                               atol=1e-12)
    assert model.objective_ == pytest.approx(reference.objective())
    assert np.all(np.diff(model.thresholds_) >= 0) and set(model.predict(X)) <= set(model.classes_)


def test_qs3orao_with_many_iterations_approaches_it():
    X, y, y_train = _problem()
    params = dict(gamma=2.0, lam=0.1, tradeoff=0.5)
    exact = QS3ORAOExact(**params).fit(X, y_train)
    sgd = QS3ORAO(n_iter=3000, batch_size=16, n_components=16, step_offset="auto", random_state=0, **params)
    sgd.fit(X, y_train)
    unlabeled = y_train == -1
    gap = ordinal_auc(y[unlabeled], exact.train_scores_[unlabeled]) - ordinal_auc(y[unlabeled],
                                                                                  sgd.train_scores_[unlabeled])
    assert abs(gap) < 0.02
    assert np.corrcoef(exact.train_scores_, sgd.train_scores_)[0, 1] > 0.95


def test_refuses_a_size_over_its_memory_budget_before_allocating():
    X, _, y_train = _problem()
    with pytest.raises(MemoryBudgetExceeded, match="QS3ORAO-exact"):
        QS3ORAOExact(memory_budget=10**5).fit(X, y_train)
    with pytest.raises(ValueError, match="lam"):
        QS3ORAOExact(lam=0.0).fit(X, y_train)
