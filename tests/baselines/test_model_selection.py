"""The staged search scores a stage's candidates together: the one-pass shortcut, early stopping, the stage switches."""

import numpy as np
import pandas as pd
import pytest

from baselines import model_selection
from baselines.model_selection import Halving, ScoreMemo, cross_validate_params
from baselines.registry import TuningGrid


pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

QS3_GRID = TuningGrid({"gamma": (1.0, 4.0), "lam": (0.25, 1.0, 4.0)}, "tradeoff", (0.0, 0.5, 1.0), 0.5)
QS3_FIXED = dict(n_iter=60, batch_size=8, random_state=0, step_offset="auto")


@pytest.fixture
def problem(make_problem):
    X, y, _ = make_problem(n=240, n_labeled=90, n_classes=3, seed=1)
    return X, y


def count_fits(monkeypatch):
    """Count fits (a fit_path call counts its settings) of every estimator class."""
    calls = []
    real = model_selection.make_method

    def make(name, **params):
        estimator = real(name, **params)
        fit, fit_path = estimator.fit, getattr(estimator, "fit_path", None)
        estimator.fit = lambda X, y: calls.append(1) or fit(X, y)
        if fit_path is not None:
            estimator.fit_path = lambda X, y, s: calls.append(len(s)) or fit_path(X, y, s)
        return estimator

    monkeypatch.setattr(model_selection, "make_method", make)
    return calls


@pytest.mark.slow
def test_the_path_shortcut_picks_the_same_candidate_with_the_same_table(problem):
    X, y = problem
    fast = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED)
    slow = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED, use_path=False)
    assert fast.best_params == slow.best_params
    assert fast.best_score == pytest.approx(slow.best_score, abs=1e-12)
    fast_table, slow_table = pd.DataFrame(fast.table), pd.DataFrame(slow.table)
    pd.testing.assert_frame_equal(fast_table, slow_table, check_exact=False, atol=1e-12, rtol=0)
    # 6 grid + 2 shared (0.5 is stage 1's) + 3 per-split for split 0 (vectors, not the cached scalar) + 2 for split 1
    assert len(fast_table) == 13 and set(fast_table["stage"]) == {"grid", "shared", "per-split"}


def test_the_path_shortcut_fits_each_group_of_lam_values_in_one_call(problem, monkeypatch):
    X, y = problem
    calls = count_fits(monkeypatch)
    cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED)
    # stage 1: one call per (gamma, fold) with 3 lam values; later stages: one call per fold and stage
    assert calls[:6] == [3] * 6
    assert sum(calls) == 13 * 3


@pytest.mark.slow
@pytest.mark.parametrize("name, n_lams, path", [("qs3orao-exact", 24, False), ("qs3orao-exact", 27, True),
                                                 ("m-samult", 19, False), ("m-samult", 24, True)])
def test_a_kernel_expansion_takes_the_lam_path_from_its_measured_break_even(problem, monkeypatch, name, n_lams, path):
    X, y = problem
    calls = count_fits(monkeypatch)
    grid = TuningGrid({"gamma": (1.0,), "lam": tuple(2.0 ** -e for e in range(n_lams))}, "tradeoff", (0.5,), 0.5,
                      separable=name == "m-samult", per_split=False)
    cross_validate_params(name, X, y, grid, n_folds=2)
    assert calls == ([n_lams] * 2 if path else [1] * (2 * n_lams))


def test_halving_scores_fewer_fits_and_chooses_among_fully_scored_candidates(problem, monkeypatch):
    X, y = problem
    full = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED)
    calls = count_fits(monkeypatch)
    halved = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED,
                                   halving=Halving(eta=3))
    assert sum(calls) < 13 * 3
    table = pd.DataFrame(halved.table)
    assert set(table["n_folds"]) == {1, 3}
    chosen = table[table["cv_auc"] == halved.best_score]
    assert (chosen["n_folds"] == 3).all()
    # a stage-1 candidate scored on all folds has the score the full search gives it
    full_table = pd.DataFrame(full.table).set_index(["stage", "gamma", "lam"])
    survivors = table[(table["n_folds"] == 3) & (table["stage"] == "grid")]
    assert 0 < len(survivors) < 6
    for _, row in survivors.iterrows():
        assert full_table.loc[("grid", row["gamma"], row["lam"]), "cv_auc"] == pytest.approx(row["cv_auc"], abs=1e-12)


def test_halving_keeps_every_shared_weight_of_a_separable_method_on_all_folds(problem):
    X, y = problem
    grid = TuningGrid({"gamma": (1.0, 4.0), "lam": (0.25, 4.0)}, "tradeoff", (0.0, 0.5, 1.0), 0.5, separable=True)
    table = pd.DataFrame(cross_validate_params("m-samult", X, y, grid, n_folds=3, halving=Halving(eta=2)).table)
    assert (table.loc[table["stage"] == "shared", "n_folds"] == 3).all()
    assert (table.loc[table["stage"] == "grid", "n_folds"] < 3).any()


def test_per_split_false_stops_at_the_shared_weight(problem):
    X, y = problem
    grid = TuningGrid({"gamma": (1.0,), "lam": (1.0,)}, "tradeoff", (0.0, 1.0), 0.5, per_split=False)
    result = cross_validate_params("qs3orao", X, y, grid, n_folds=2, fixed_params=QS3_FIXED)
    assert [r["stage"] for r in result.table] == ["grid", "shared", "shared"]
    assert np.isscalar(result.best_params["tradeoff"])


@pytest.mark.parametrize("n_candidates, n_folds, eta, min_folds, rungs", [
    (49, 5, 3, 1, [(1, 17), (3, 6), (5, 6)]),
    (2, 5, 3, 1, [(1, 1), (5, 1)]),
    (1, 5, 3, 1, [(5, 1)]),
    (10, 5, 2, 5, [(5, 10)]),
    (8, 8, 2, 2, [(2, 4), (4, 2), (8, 2)]),
])
def test_halving_rungs(n_candidates, n_folds, eta, min_folds, rungs):
    assert Halving(eta=eta, min_folds=min_folds).rungs(n_candidates, n_folds) == rungs


@pytest.mark.parametrize("kwargs", [dict(eta=1), dict(min_folds=0), dict(eta=2.5), dict(eta=True)])
def test_halving_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError, match="Halving"):
        Halving(**kwargs)


def test_halving_must_be_a_halving(problem):
    X, y = problem
    with pytest.raises(TypeError, match="halving"):
        cross_validate_params("qs3orao", X, y, QS3_GRID, halving={"eta": 3})



@pytest.mark.parametrize("budget", [float("nan"), float("inf"), -1])
def test_a_memory_budget_that_is_not_a_finite_positive_number_is_refused_before_any_fit(problem, monkeypatch,
                                                                                        budget):
    X, y = problem
    calls = count_fits(monkeypatch)
    with pytest.raises(ValueError, match="memory_budget must be a finite positive number of bytes or None"):
        cross_validate_params("m-samult", X, y, fixed_params={"memory_budget": budget})
    assert not calls


# --- a memo of scored candidates shared by searches of one problem --------------------------------------------

def test_without_a_memo_the_table_is_the_memo_search_table_without_its_fit_column(problem):
    X, y = problem
    plain = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED)
    memoised = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED, memo=ScoreMemo())
    assert all("fitted_folds" not in row for row in plain.table)
    assert [{k: v for k, v in row.items() if k != "fitted_folds"} for row in memoised.table] == plain.table
    assert (memoised.best_params, memoised.best_score) == (plain.best_params, plain.best_score)
    assert [row["fitted_folds"] for row in memoised.table] == [3] * len(plain.table)  # a fresh memo reuses nothing


def test_a_second_search_with_the_memo_fits_nothing_and_chooses_the_same(problem, monkeypatch):
    X, y = problem
    memo = ScoreMemo()
    first = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED, memo=memo)
    calls = count_fits(monkeypatch)
    again = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED, memo=memo)
    assert calls == [] and len(memo) == 13 * 3
    assert [row["fitted_folds"] for row in again.table] == [0] * 13
    assert [{**row, "fitted_folds": 0} for row in first.table] == again.table
    # other fixed parameters are other candidates: fitted, not reused
    other = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params={**QS3_FIXED, "n_iter": 30},
                                  memo=memo)
    assert sum(calls) == 13 * 3 and {row["fitted_folds"] for row in other.table} == {3}


def test_a_candidate_stopped_early_reuses_its_folds_and_is_fitted_on_the_others(problem, monkeypatch):
    X, y = problem
    memo = ScoreMemo()
    halved = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED,
                                   halving=Halving(eta=3), memo=memo)
    folds_scored = {(r["stage"], r["gamma"], r["lam"], str(r["tradeoff"])): r["n_folds"] for r in halved.table}
    assert set(folds_scored.values()) == {1, 3}
    calls = count_fits(monkeypatch)
    full = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED, memo=memo)
    fitted = {(r["stage"], r["gamma"], r["lam"], str(r["tradeoff"])): r["fitted_folds"] for r in full.table}
    # stage 1 is the same in both searches; the later stages follow from its choice, which halving can change
    grid_rows = [key for key in fitted if key[0] == "grid"]
    assert len(grid_rows) == 6 and all(fitted[key] == 3 - folds_scored[key] for key in grid_rows)
    assert sum(calls) == sum(fitted.values())
    # the partly reused scores are those of a search that fits everything (a path over other settings: to rounding)
    fresh = cross_validate_params("qs3orao", X, y, QS3_GRID, n_folds=3, fixed_params=QS3_FIXED)
    pd.testing.assert_frame_equal(pd.DataFrame(full.table).drop(columns="fitted_folds"), pd.DataFrame(fresh.table),
                                  check_exact=False, atol=1e-12, rtol=0)


def test_a_memo_refuses_another_problem_and_must_be_a_memo(problem):
    X, y = problem
    grid = TuningGrid({"gamma": (1.0,), "lam": (1.0,)}, "tradeoff", (0.0, 1.0), 0.5, per_split=False)
    memo = ScoreMemo()
    cross_validate_params("qs3orao", X, y, grid, n_folds=2, fixed_params=QS3_FIXED, memo=memo)
    for changed in (dict(n_folds=3), dict(random_state=1)):
        with pytest.raises(ValueError, match="memo holds the scores of another search problem"):
            cross_validate_params("qs3orao", X, y, grid, **{"n_folds": 2, **changed}, fixed_params=QS3_FIXED,
                                  memo=memo)
    with pytest.raises(ValueError, match="another search problem"):
        cross_validate_params("qs3orao", X + 1.0, y, grid, n_folds=2, fixed_params=QS3_FIXED, memo=memo)
    with pytest.raises(ValueError, match="another search problem"):
        cross_validate_params("m-samult", X, y, grid, n_folds=2, memo=memo)
    with pytest.raises(TypeError, match="memo must be a ScoreMemo"):
        cross_validate_params("qs3orao", X, y, grid, n_folds=2, fixed_params=QS3_FIXED, memo={})
    with pytest.raises(TypeError, match="fixed_params values must be scalars or arrays"):
        cross_validate_params("qs3orao", X, y, grid, n_folds=2, fixed_params={**QS3_FIXED, "step_offset": {"t0": 1}})


def test_a_fixed_parameter_that_cannot_key_a_candidate_is_named_without_numpy_reprs():
    X = np.random.default_rng(0).uniform(size=(40, 2))
    y = np.repeat([0, 1, 2, -1], 10)
    with pytest.raises(TypeError) as error:
        cross_validate_params("m-samult", X, y, n_folds=2,
                              fixed_params={"gamma": np.float64(0.5), "memory_budget": {"mb": np.int64(4)}})
    assert "memory_budget" in str(error.value) and "np." not in str(error.value)


def grouped_problem(n_groups=12, per_group=10, seed=0):
    """Rows of ``n_groups`` groups, column 0 the group; labels mostly the group's; half the rows unlabeled."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), per_group)
    X = np.column_stack([groups, rng.random(groups.size)]).astype(float)
    y = (groups % 3 + (rng.random(groups.size) < 0.2)) % 3
    y[rng.random(groups.size) < 0.5] = -1
    return X, y, groups


def test_grouped_folds_never_fit_and_hold_out_one_group(monkeypatch):
    X, y, groups = grouped_problem()
    fitted, held = [], []
    real = model_selection.make_method

    def make(name, **params):  # column 0 of every row a fit or a prediction sees is its group
        estimator = real(name, **params)
        fit, decide = estimator.fit, estimator.decision_function
        estimator.fit = lambda X, y: fitted.append(set(X[y != -1, 0])) or fit(X, y)
        estimator.decision_function = lambda X: held.append(set(X[:, 0])) or decide(X)
        return estimator

    monkeypatch.setattr(model_selection, "make_method", make)
    grid = TuningGrid({"gamma": (1.0,), "lam": (1.0,)}, "tradeoff", (0.5,), 0.5, per_split=False)
    cross_validate_params("qs3orao", X, y, grid, n_folds=3, fixed_params=QS3_FIXED, groups=groups)
    assert len(fitted) == len(held) == 3
    assert all(not fit & out for fit, out in zip(fitted, held))
    assert set.union(*held) == set(groups[y != -1])
    # the same search without groups fits and holds out rows of one group in some fold
    fitted.clear(), held.clear()
    cross_validate_params("qs3orao", X, y, grid, n_folds=3, fixed_params=QS3_FIXED)
    assert any(fit & out for fit, out in zip(fitted, held))


def test_grouped_folds_need_a_group_per_fold_and_a_group_per_row():
    X, y, groups = grouped_problem(n_groups=4)
    grid = TuningGrid({"gamma": (1.0,), "lam": (1.0,)}, "tradeoff", (0.5,), 0.5, per_split=False)
    with pytest.raises(ValueError, match="the labeled rows hold 4 groups, fewer than n_folds=5"):
        cross_validate_params("qs3orao", X, y, grid, n_folds=5, fixed_params=QS3_FIXED, groups=groups)
    with pytest.raises(ValueError, match=r"groups must have one value per row \(40\), got shape \(39,\)"):
        cross_validate_params("qs3orao", X, y, grid, n_folds=2, fixed_params=QS3_FIXED, groups=groups[1:])


def test_a_memo_refuses_the_same_search_over_other_groups():
    X, y, groups = grouped_problem()
    grid = TuningGrid({"gamma": (1.0,), "lam": (1.0,)}, "tradeoff", (0.5,), 0.5, per_split=False)
    memo = ScoreMemo()
    cross_validate_params("qs3orao", X, y, grid, n_folds=3, fixed_params=QS3_FIXED, memo=memo, groups=groups)
    for other in (None, groups // 2):
        with pytest.raises(ValueError, match="another search problem"):
            cross_validate_params("qs3orao", X, y, grid, n_folds=3, fixed_params=QS3_FIXED, memo=memo, groups=other)
