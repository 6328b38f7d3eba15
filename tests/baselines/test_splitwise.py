"""M-PNU-AUC and M-SAMULT: stationarity of the closed forms and agreement with independent routes."""

import numpy as np
import pytest

from baselines import MPNUAUC, MSAMULT
from qs3orao.exact import exact_solution
from qs3orao.kernels import gaussian_kernel
from qs3orao.metrics import ordinal_auc


def codes_of(model, y):
    return np.where(y == -1, -1, np.searchsorted(model.classes_, y))


@pytest.mark.parametrize("params", [dict(pnu_mix=0.6), dict(pnu_mix=-0.5), dict(pnu_mix=0.0), dict(pnu_mix=[0.3, -1.0]),
                                    dict(pnu_mix=0.4, n_basis=40, random_state=1), dict(pnu_mix=1.0, priors=[0.6, 0.3])])
def test_pnu_gradient_vanishes_at_the_solution(problem, params):
    X, y, _ = problem
    model = MPNUAUC(gamma=2.0, lam=0.05, **params).fit(X, y)
    Phi = gaussian_kernel(X, model.centres_, gamma=2.0)
    codes = codes_of(model, y)
    for coef, risk in zip(model.coef_, model.risks_):
        _, grad_F = risk.value(Phi @ coef, codes)
        gradient = Phi.T @ grad_F + model.lam * coef
        assert np.abs(gradient).max() < 1e-9 * max(1.0, np.abs(coef).max())


def test_samult_gradient_vanishes_at_the_solution(problem):
    X, y, _ = problem
    model = MSAMULT(gamma=2.0, lam=0.05, tradeoff=[0.2, 0.7]).fit(X, y)
    K = gaussian_kernel(X, gamma=2.0)
    codes = codes_of(model, y)
    for coef, risk in zip(model.coef_, model.risks_):
        _, grad_F = risk.value(K @ coef, codes)
        # functional gradient sum_i (dR/dF_i + lam c_i) k(x_i, .) vanishes iff its coefficients do
        assert np.abs(grad_F + model.lam * coef).max() < 1e-10
    np.testing.assert_allclose(model.train_scores_, model.decision_function(X), atol=1e-12)


def test_binary_samult_is_the_papers_exact_solution(problem):
    X, y, _ = problem
    binary = np.where(y == -1, -1, (y > 0).astype(int))
    model = MSAMULT(gamma=3.0, lam=0.2, tradeoff=0.4).fit(X, binary)
    reference = exact_solution(X, binary, gamma=3.0, lam=0.2, tradeoff=0.4)
    np.testing.assert_allclose(model.coef_[0], reference.coef, atol=1e-10)


def test_each_split_model_matches_a_binary_fit(problem):
    X, y, _ = problem
    model = MSAMULT(gamma=2.0, lam=0.1, tradeoff=[0.3, 0.8]).fit(X, y)
    split_1 = np.where(y == -1, -1, (y > 1).astype(int))
    alone = MSAMULT(gamma=2.0, lam=0.1, tradeoff=0.8).fit(X, split_1)
    np.testing.assert_allclose(model.coef_[1], alone.coef_[0], atol=1e-10)


def test_pnu_with_eta_zero_is_supervised(problem):
    X, y, _ = problem
    low = MPNUAUC(gamma=2.0, lam=0.1, pnu_mix=0.0, priors=[0.2, 0.1]).fit(X, y)
    high = MPNUAUC(gamma=2.0, lam=0.1, pnu_mix=0.0, priors=[0.9, 0.8]).fit(X, y)
    np.testing.assert_allclose(low.coef_, high.coef_, atol=1e-12)


def test_pnu_warns_when_the_risk_is_not_convex(problem):
    X, y, _ = problem
    with pytest.warns(RuntimeWarning, match="not convex"):
        model = MPNUAUC(gamma=2.0, lam=1e-3, pnu_mix=1.0, priors=[0.97, 0.97]).fit(X, y)
    Phi = gaussian_kernel(X, model.centres_, gamma=2.0)
    _, grad_F = model.risks_[0].value(Phi @ model.coef_[0], codes_of(model, y))
    assert np.abs(Phi.T @ grad_F + model.lam * model.coef_[0]).max() < 1e-6 * np.abs(model.coef_[0]).max()


def test_estimated_priors_are_recorded_and_clipped(problem):
    X, y, truth = problem
    model = MPNUAUC(gamma=2.0, lam=0.1, pnu_mix=0.5).fit(X, y)
    unlabeled = truth[y == -1]
    np.testing.assert_allclose(model.priors_, [np.mean(unlabeled > 0), np.mean(unlabeled > 1)], atol=0.15)
    assert np.all((model.priors_ >= 0.01) & (model.priors_ <= 0.99))


@pytest.mark.parametrize("cls", [MPNUAUC, MSAMULT])
def test_outputs_have_one_column_per_split(problem, cls):
    X, y, truth = problem
    model = cls(gamma=2.0, lam=0.1).fit(X, y)
    scores = model.decision_function(X)
    assert scores.shape == (X.shape[0], 2)
    assert set(np.unique(model.predict(X))) <= set(model.classes_)
    assert model.score(X, truth) == pytest.approx(ordinal_auc(truth, scores))
    assert model.score(X, truth) > 0.8
    np.testing.assert_array_equal(model.predict(X), model.classes_[(scores > model.thresholds_).sum(axis=1)])
