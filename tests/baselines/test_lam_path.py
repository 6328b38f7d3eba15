"""The exact solvers over a lam path (M-SAMULT, M-PNU-AUC, f*, RFF-AUC, Nystroem-AUC): one eigendecomposition
per split, the models of separate fits.

The solvers' agreement is checked system by system in tests/core/test_lam_path.py
(backward errors at rounding level, forward difference within the condition number);
here the fitted models are compared down to ``lam = 2^-10``, where that bound is below 1e-8.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from baselines import MPNUAUC, MSAMULT, MemoryBudgetExceeded, NystromAUC, QS3ORAOExact, RFFAUC
from baselines.model_selection import cross_validate_params
from baselines.registry import TuningGrid, make_method

LAMS = [2.0 ** e for e in range(-10, 4)]

pytestmark = pytest.mark.filterwarnings("ignore:the regularised risk is not convex")


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [MSAMULT(gamma=2.0, tradeoff=[0.3, 1.0]), MSAMULT(gamma=0.5, tradeoff=0.0),
                                       MPNUAUC(gamma=2.0, pnu_mix=[0.4, -0.6]),
                                       MPNUAUC(gamma=2.0, pnu_mix=0.5, n_basis=40, random_state=3),
                                       QS3ORAOExact(gamma=2.0, tradeoff=[0.3, 1.0]),
                                       RFFAUC(n_random_features=64, gamma=2.0, tradeoff=0.5, random_state=5),
                                       NystromAUC(n_landmarks=50, gamma=2.0, tradeoff=[0.0, 0.7], random_state=5)])
def test_fit_path_gives_the_models_of_separate_fits(estimator, make_problem):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=3, seed=2)
    Z = np.random.default_rng(1).uniform(size=(40, X.shape[1]))
    fits = estimator.fit_path(X, y, [dict(lam=lam) for lam in LAMS])
    for lam, path in zip(LAMS, fits):
        own = clone(estimator).set_params(lam=lam).fit(X, y)
        assert path.lam == lam and path.get_params() == own.get_params()
        scale = np.abs(own.train_scores_).max()
        np.testing.assert_allclose(path.train_scores_, own.train_scores_, rtol=0, atol=1e-8 * scale)
        np.testing.assert_allclose(path.decision_function(Z), own.decision_function(Z), rtol=0, atol=1e-8 * scale)
        np.testing.assert_allclose(path.thresholds_, own.thresholds_, rtol=0, atol=1e-6 * scale)
        assert path.score(X, y) == pytest.approx(own.score(X, y), abs=1e-12)


def test_fit_path_varies_only_lam(make_problem):
    X, y, _ = make_problem()
    with pytest.raises(ValueError, match="may vary only"):
        MSAMULT().fit_path(X, y, [dict(lam=1.0), dict(tradeoff=0.2)])
    with pytest.raises(ValueError, match="lam"):
        MPNUAUC().fit_path(X, y, [dict(lam=0.0)])


@pytest.mark.parametrize("estimator, matrix", [(MSAMULT(low_memory=False), "n"), (QS3ORAOExact(), "n"),
                                               (NystromAUC(n_landmarks=100, random_state=0), "D")])
def test_a_path_counts_its_extra_matrices_in_the_budget(estimator, matrix, make_problem):
    X, y, _ = make_problem(n=150)
    side = X.shape[0] if matrix == "n" else 100
    one = clone(estimator).fit(X, y).memory_estimate_
    assert clone(estimator).fit_path(X, y, [dict(lam=1.0)])[0].memory_estimate_ - one == 2 * 8 * side * side
    budget = one + 8 * side * side  # one fit fits, the path needs two more side x side matrices
    clone(estimator).set_params(memory_budget=budget).fit(X, y)
    with pytest.raises(MemoryBudgetExceeded):
        clone(estimator).set_params(memory_budget=budget).fit_path(X, y, [dict(lam=1.0), dict(lam=2.0)])



def test_a_samult_path_over_the_budget_takes_the_low_memory_solver(make_problem):
    X, y, _ = make_problem(n=150)
    one = MSAMULT().fit(X, y)
    budget = one.memory_estimate_ + 8 * 150 * 150  # one fast fit fits, the fast path does not
    settings = [dict(lam=1.0), dict(lam=0.01)]
    path = MSAMULT(memory_budget=budget).fit_path(X, y, settings)
    assert not one.low_memory_ and all(model.low_memory_ for model in path)
    assert path[0].memory_estimate_ == MSAMULT(low_memory=True).fit(X, y).memory_estimate_ <= budget
    for model, setting in zip(path, settings):
        own = MSAMULT(low_memory=False, **setting).fit(X, y)
        np.testing.assert_allclose(model.coef_, own.coef_, rtol=0, atol=1e-10 * np.abs(own.coef_).max())


@pytest.mark.slow
@pytest.mark.parametrize("name, split_param, values, separable", [
    ("m-samult", "tradeoff", (0.0, 0.5, 1.0), True), ("m-pnu-auc", "pnu_mix", (-0.5, 0.0, 0.5), True),
    ("qs3orao-exact", "tradeoff", (0.0, 0.5, 1.0), False), ("rff-auc", "tradeoff", (0.0, 0.5, 1.0), False),
    ("nystrom-auc", "tradeoff", (0.0, 0.5, 1.0), False)])
def test_the_tuning_picks_the_same_candidate_with_the_lam_path(name, split_param, values, separable, make_problem):
    X, y, _ = make_problem(n=150, n_labeled=60, n_classes=3, seed=4)
    grid = TuningGrid({"gamma": (1.0, 4.0), "lam": tuple(2.0 ** np.arange(-8, 4))}, split_param, values, 0.0,
                      separable=separable)
    # a seeded map, as the pipeline's tuning gives it (random_state None would draw a new map per separate fit)
    fixed = {"random_state": 0} if "random_state" in make_method(name).get_params() else None
    fast = cross_validate_params(name, X, y, grid, n_folds=3, fixed_params=fixed)
    slow = cross_validate_params(name, X, y, grid, n_folds=3, fixed_params=fixed, use_path=False)
    assert fast.best_params == slow.best_params
    pd.testing.assert_frame_equal(pd.DataFrame(fast.table), pd.DataFrame(slow.table), check_exact=False,
                                  atol=1e-9, rtol=0)
