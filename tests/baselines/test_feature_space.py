"""RFF-AUC and Nystrom-AUC: the feature-space optimum, and its limits towards the exact f*."""

import numpy as np
import pytest

from baselines import NystromAUC, RFFAUC
from baselines.registry import METHODS
from qs3orao.exact import exact_solution


def sized(cls, size, **params):
    """``cls`` with a map of width ``size`` (random features or landmarks)."""
    size_param, = {m.size_param for m in METHODS.values() if m.estimator is cls}
    return cls(**{size_param: size}, **params)


def codes_of(model, y):
    return np.where(y == -1, -1, np.searchsorted(model.classes_, y))


@pytest.mark.parametrize("cls", [RFFAUC, NystromAUC])
def test_gradient_in_feature_space_vanishes(problem, cls):
    X, y, _ = problem
    model = sized(cls, 60, gamma=2.0, lam=0.05, tradeoff=[0.3, 0.9], random_state=0).fit(X, y)
    Phi = model.feature_map(X)
    _, grad_F = model.risk_.value(Phi @ model.coef_, codes_of(model, y))
    assert np.abs(Phi.T @ grad_F + model.lam * model.coef_).max() < 1e-10
    np.testing.assert_allclose(model.train_scores_, model.decision_function(X), atol=1e-12)


def test_nystrom_with_every_row_is_the_exact_solution(problem):
    X, y, _ = problem
    reference = exact_solution(X, y, gamma=2.0, lam=0.1, tradeoff=0.4)
    model = NystromAUC(n_landmarks=X.shape[0], gamma=2.0, lam=0.1, tradeoff=0.4, random_state=0).fit(X, y)
    X_test = np.random.default_rng(7).uniform(size=(30, 2))
    scale = np.abs(reference.train_scores).max()
    np.testing.assert_allclose(model.train_scores_, reference.train_scores, atol=1e-7 * scale)
    np.testing.assert_allclose(model.decision_function(X_test), reference.decision_function(X_test),
                               atol=1e-7 * scale)
    assert model.score(X, y) == pytest.approx(
        NystromAUC(n_landmarks=X.shape[0], gamma=2.0, lam=0.1, tradeoff=0.4).fit(X, y).score(X, y))


@pytest.mark.slow
def test_random_features_approach_the_exact_solution(problem):
    X, y, _ = problem
    reference = exact_solution(X, y, gamma=2.0, lam=0.1, tradeoff=0.4).train_scores

    def error(D):
        return np.mean([np.abs(RFFAUC(n_random_features=D, gamma=2.0, lam=0.1, tradeoff=0.4, random_state=s)
                               .fit(X, y).train_scores_ - reference).max() for s in range(4)])

    small, large = error(40), error(2000)
    assert large < 0.4 * small
    assert large < 0.05 * np.abs(reference).max()


def test_rff_needs_an_even_feature_count(problem):
    X, y, _ = problem
    with pytest.raises(ValueError, match="even"):
        RFFAUC(n_random_features=31).fit(X, y)


def test_nystrom_caps_landmarks_at_the_row_count(problem):
    X, y, _ = problem
    with pytest.warns(UserWarning, match="every row"):
        model = NystromAUC(n_landmarks=10_000, gamma=0.5, random_state=0).fit(X, y)
    assert model.landmarks_.shape[0] == X.shape[0]
    assert model.n_map_features_ <= X.shape[0]


@pytest.mark.parametrize("cls", [RFFAUC, NystromAUC])
def test_fit_is_reproducible_and_predicts_labels(problem, cls):
    X, y, truth = problem
    a = sized(cls, 40, random_state=3).fit(X, y)
    b = sized(cls, 40, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert set(np.unique(a.predict(X))) <= set(a.classes_)
    assert np.all(np.diff(a.thresholds_) >= 0)
    assert a.score(X, truth) > 0.8
