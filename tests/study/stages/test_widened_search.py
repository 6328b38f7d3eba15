"""The widened search of the best-effort protocol: grids extended until no choice sits on an edge."""

import itertools
import re
import logging
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from baselines import model_selection
from baselines.model_selection import CVResult, Halving, ScoreMemo, cross_validate_params
from baselines.registry import PAPER_GRID, TuningGrid
from qs3study.kernel_width import grid_edges
from qs3study.stages.tuning import WINDOW, SearchProgress, candidate_bound, widened_search


def fake_run(optimum, calls):
    """A search whose CV AUC peaks at ``optimum`` (log2 exponents), recording every grid it was given."""
    def run(grid):
        calls.append(grid)
        candidates = list(itertools.product(*grid.grid.values()))
        scores = [-sum((np.log2(v) - optimum[n]) ** 2 for n, v in zip(grid.grid, c)) for c in candidates]
        best = candidates[int(np.argmax(scores))]
        return CVResult(dict(zip(grid.grid, best)), 0.9 + 1e-3 * max(scores), [])
    return run


GRID = TuningGrid({"gamma": PAPER_GRID, "lam": PAPER_GRID}, "tradeoff", (0.0, 0.5, 1.0), 0.5)


def test_the_search_moves_until_the_choice_is_inside_what_was_searched():
    calls = []
    result, searched, rounds = widened_search(fake_run({"gamma": 1, "lam": -10}, calls), GRID,
                                              {"lam": (-20, 3), "gamma": (-6, 6)})
    assert result.best_params == {"gamma": 2.0, "lam": 2.0 ** -10}
    assert min(searched["lam"]) < 2.0 ** -10 < max(searched["lam"])
    assert grid_edges(result.best_params, searched) == []
    assert len(rounds) == len(calls) >= 3 and all(len(c.grid["lam"]) == WINDOW for c in calls)
    assert calls[0].grid["lam"] == PAPER_GRID and calls[0].split_param == "tradeoff"  # starts on the paper's grid
    # the paper's grid alone would have left lam on its lower edge
    assert grid_edges({"lam": 2.0 ** -3}, {"lam": PAPER_GRID})


def test_an_optimum_beyond_the_declared_limit_stops_there_and_is_counted_as_an_edge_hit():
    calls = []
    result, searched, _ = widened_search(fake_run({"gamma": 0, "lam": -30}, calls), GRID, {"lam": (-20, 3)})
    assert result.best_params["lam"] == 2.0 ** -20 == min(searched["lam"])
    assert calls[-1].grid["lam"] == tuple(2.0 ** e for e in range(-20, -13))
    assert grid_edges(result.best_params, searched) == [
        "grid edge: lam = 9.53674e-07 is the smallest value of its grid (9.53674e-07 .. 8)"]


def test_an_interior_optimum_costs_one_round():
    calls = []
    widened_search(fake_run({"gamma": 0, "lam": 0}, calls), GRID, {"lam": (-20, 3), "gamma": (-6, 6)})
    assert len(calls) == 1


def test_a_range_the_search_does_not_tune_is_refused():
    with pytest.raises(ValueError, match="grid_range names"):
        widened_search(fake_run({}, []), GRID, {"C": (-3, 20)})
    with pytest.raises(ValueError, match="low < high"):
        widened_search(fake_run({}, []), GRID, {"lam": (3, 3)})


def test_a_whole_range_parameter_is_searched_whole_from_the_first_round_and_never_moves():
    calls = []
    result, searched, rounds = widened_search(fake_run({"gamma": 5, "lam": -10}, calls), GRID,
                                              {"lam": (-20, 3), "gamma": (-6, 6)}, whole={"lam"})
    whole = tuple(2.0 ** e for e in range(-20, 4))
    assert all(call.grid["lam"] == whole for call in calls)
    assert [len(call.grid["gamma"]) for call in calls] == [WINDOW] * len(calls) and len(calls) >= 2  # gamma moves
    assert result.best_params == {"gamma": 32.0, "lam": 2.0 ** -10} and searched["lam"] == whole
    windowed = []
    widened_search(fake_run({"gamma": 5, "lam": -10}, windowed), GRID, {"lam": (-20, 3), "gamma": (-6, 6)})
    assert len(calls) < len(windowed)


def test_a_whole_range_parameter_on_its_limit_is_an_edge_hit_and_needs_no_second_round():
    calls = []
    result, searched, _ = widened_search(fake_run({"gamma": 0, "lam": -30}, calls), GRID, {"lam": (-20, 3)},
                                         whole=["lam"])
    assert len(calls) == 1 and result.best_params["lam"] == 2.0 ** -20
    assert grid_edges(result.best_params, searched) == [
        "grid edge: lam = 9.53674e-07 is the smallest value of its grid (9.53674e-07 .. 8)"]


def test_a_whole_range_without_a_declared_range_is_refused():
    with pytest.raises(ValueError, match="whole_range names \\['gamma'\\]"):
        widened_search(fake_run({}, []), GRID, {"lam": (-20, 3)}, whole={"gamma"})


# --- the rounds share a memo of scored candidates: nothing fitted twice, the same choice ---------------------

QS3_FIXED = dict(n_iter=60, batch_size=8, random_state=0, step_offset="auto")
# The configured lam values sit far above the optimum, so the search moves down over several overlapping windows.
FAR_LAM = tuple(2.0 ** np.arange(4, 11))
SEARCHES = {"qs3orao": ("qs3orao", TuningGrid({"gamma": (1.0,), "lam": FAR_LAM}, "tradeoff", (0.0, 0.5, 1.0), 0.5),
                        QS3_FIXED, None),
            "qs3orao-halving": ("qs3orao", TuningGrid({"gamma": (1.0,), "lam": FAR_LAM}, "tradeoff", (0.0, 0.5, 1.0),
                                                      0.5), QS3_FIXED, Halving(eta=2)),
            "m-samult": ("m-samult", TuningGrid({"gamma": PAPER_GRID, "lam": FAR_LAM}, "tradeoff", (0.0, 0.5, 1.0),
                                                0.5, separable=True), {}, None)}
RANGES = {"lam": (-20, 12), "gamma": (-6, 6)}


def generated_problem(n=200, n_labeled=90, seed=0):
    """Three classes from a noisy sum of two uniform features; rows past ``n_labeled`` unlabeled."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    latent = X.sum(axis=1) + 0.05 * rng.normal(size=n)
    y = np.digitize(latent, np.quantile(latent, [1 / 3, 2 / 3]))
    y[n_labeled:] = -1
    return X, y


def record_fits(monkeypatch):
    """Every (parameters as fitted, training rows) pair fitted; a ``fit_path`` call adds each of its settings."""
    fits = []
    real = model_selection.make_method

    def frozen(params):
        return repr(sorted((k, np.asarray(v).tolist()) for k, v in params.items()))

    def make(name, **params):
        estimator = real(name, **params)
        fit, fit_path = estimator.fit, getattr(estimator, "fit_path", None)

        def counted_fit(X, y):
            fits.append((frozen(params), hash(X.tobytes())))
            return fit(X, y)

        def counted_path(X, y, settings):
            fits.extend((frozen({**params, **s}), hash(X.tobytes())) for s in settings)
            return fit_path(X, y, settings)

        estimator.fit = counted_fit
        if fit_path is not None:
            estimator.fit_path = counted_path
        return estimator

    monkeypatch.setattr(model_selection, "make_method", make)
    return fits


def run_widened(search, memo):
    """The widened search of ``SEARCHES[search]`` on the generated problem, and every round's table."""
    name, grid, fixed, halving = SEARCHES[search]
    X, y = generated_problem()
    tables = []

    def run(candidates):
        result = cross_validate_params(name, X, y, candidates, n_folds=3, fixed_params=fixed, halving=halving,
                                       memo=memo)
        tables.append(result.table)
        return result

    result, _, rounds = widened_search(run, grid, RANGES)
    return result, rounds, tables


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning", "ignore::RuntimeWarning")
@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_a_memo_fits_no_candidate_twice_and_changes_no_choice(search, monkeypatch):
    plain_fits = record_fits(monkeypatch)
    plain, plain_rounds, plain_tables = run_widened(search, None)
    memo_fits = record_fits(monkeypatch)
    memo = ScoreMemo()
    memoised, rounds, tables = run_widened(search, memo)
    assert len(rounds) >= 2
    # Without the memo every round refits what earlier rounds fitted; with it no (candidate, fold) is fitted twice.
    assert max(Counter(plain_fits).values()) > 1
    assert max(Counter(memo_fits).values()) == 1 and len(memo_fits) == len(memo) < len(plain_fits)
    # The records say which work was done: fitted_folds adds up to the fits, and later rounds reuse scores.
    assert sum(row["fitted_folds"] for table in tables for row in table) == len(memo_fits)
    assert any(row["fitted_folds"] == 0 for row in tables[1])
    # Reused scores are the floats a refit gives (a fit_path over other settings agrees to rounding): every round
    # sees the same scores, keeps the same rows and makes the same choices.
    assert rounds == plain_rounds
    assert memoised.best_params == plain.best_params
    assert memoised.best_score == pytest.approx(plain.best_score, abs=1e-12)
    assert len(tables) == len(plain_tables)
    for table, plain_table in zip(tables, plain_tables):
        pd.testing.assert_frame_equal(pd.DataFrame(table).drop(columns="fitted_folds"), pd.DataFrame(plain_table),
                                      check_exact=False, atol=1e-12, rtol=0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning", "ignore::RuntimeWarning")
def test_progress_counts_reused_candidates_and_says_so(caplog):
    X, y = generated_problem()
    name, grid, fixed, _ = SEARCHES["m-samult"]
    grid = TuningGrid({"gamma": (1.0,), "lam": (0.5, 1.0)}, "tradeoff", (0.0, 1.0), 0.0, separable=True,
                      per_split=False)
    memo, log = ScoreMemo(), logging.getLogger("memo-test")
    for _ in range(2):
        ticks = iter(range(0, 1000, 2))
        with caplog.at_level(logging.INFO, logger="memo-test"):
            cross_validate_params(name, X, y, grid, n_folds=2, memo=memo,
                                  progress=SearchProgress(log, candidate_bound(grid, 3), clock=lambda: next(ticks)))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 * 3  # 2 grid candidates + 1 new trade-off per search
    assert all("reused" not in line for line in lines[:3])
    # The second search fits nothing: every candidate is counted, with the first search's score; no candidate
    # fitted yet, the time spent stands for one candidate's cost (2, 4, 6 s spent, 3, 2, 1 candidates left).
    aucs = [line.split("cv auc ")[1][:6] for line in lines[:3]]
    assert lines[3:] == [f"candidate {i} of at most 4 ({stage} stage, scores reused): cv auc {auc}; "
                         f"{spent} s spent, at most about {left} s left"
                         for i, stage, auc, spent, left in zip((1, 2, 3), ("grid", "grid", "shared"), aucs,
                                                               (2, 4, 6), (6, 8, 6))]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_whole_lam_range_is_one_path_per_width_and_fold_and_chooses_as_the_plain_search(monkeypatch):
    """With lam whole, every (width, fold) of stage 1 is one ``fit_path`` over the whole range (past
    ``PATH_MIN_SETTINGS``), and the choice is that of the plain search of the same product grid."""
    X, y = generated_problem()
    ranges, lams = {"lam": (-20, 3)}, tuple(2.0 ** e for e in range(-20, 4))  # 24 values, past M-SAMULT's 20
    grid = TuningGrid({"gamma": (0.5, 2.0), "lam": (1.0,)}, "tradeoff", (0.0, 1.0), 0.5, separable=True,
                      per_split=False)
    paths = []
    real = model_selection.make_method

    def make(name, **params):
        estimator = real(name, **params)
        fit_path = estimator.fit_path
        estimator.fit_path = lambda X, y, settings: paths.append(len(settings)) or fit_path(X, y, settings)
        return estimator

    monkeypatch.setattr(model_selection, "make_method", make)
    def run(candidates):
        return cross_validate_params("m-samult", X, y, candidates, n_folds=3)

    result, searched, rounds = widened_search(run, grid, ranges, whole={"lam"})
    assert len(rounds) == 1 and searched["lam"] == lams
    assert paths == [len(lams)] * (2 * 3)  # the trade-off stage's 2 candidates per fold are fitted one by one
    plain = cross_validate_params("m-samult", X, y, replace(grid, grid={"gamma": (0.5, 2.0), "lam": lams}), n_folds=3)
    assert result.best_params == plain.best_params
    assert result.best_score == pytest.approx(plain.best_score, abs=1e-12)


def test_a_widen_tolerance_stops_the_rounds_once_the_best_score_stops_moving():
    calls = []
    widened_search(fake_run({"gamma": 0, "lam": -10}, calls), GRID, {"lam": (-20, 3)})
    # The fake best scores gain 0.033, 0.015, then 0.001 in rounds 2, 3, 4.
    for tolerance, rounds in ((None, len(calls)), (0.0, len(calls)), (0.02, 3), (1.0, 2)):
        stopped = []
        _, _, record = widened_search(fake_run({"gamma": 0, "lam": -10}, stopped), GRID, {"lam": (-20, 3)},
                                      widen_tolerance=tolerance)
        assert len(stopped) == len(record) == rounds, tolerance
    assert len(calls) >= 4


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_progress_reports_each_fold_of_a_long_stage_at_most_every_interval(caplog):
    """Within a stage, whose candidates are all scored together at its end, a line says which fold of
    how many is done, when ``interval`` seconds passed since the last line."""
    X, y = generated_problem()
    grid = TuningGrid({"gamma": (0.5, 2.0), "lam": (0.5, 1.0)}, "tradeoff", (0.0, 1.0), 0.5, separable=True,
                      per_split=False)
    ticks = iter(range(0, 10_000, 20))  # 20 s per clock reading
    log = logging.getLogger("fold-progress")
    with caplog.at_level(logging.INFO, logger="fold-progress"):
        cross_validate_params("m-samult", X, y, grid, n_folds=3,
                              progress=SearchProgress(log, candidate_bound(grid, 3), clock=lambda: next(ticks),
                                                      interval=30))
    lines = [r.getMessage() for r in caplog.records]
    folds = [line for line in lines if line.startswith("grid stage:")]
    assert folds and lines.index(folds[0]) < min(i for i, line in enumerate(lines) if line.startswith("candidate"))
    assert all(re.fullmatch(r"grid stage: fold \d of 3 fitted for 4 candidates; \d+ s spent", line) for line in folds)
    assert len([line for line in lines if line.startswith("candidate")]) == 4 + 2


# --- widen_limits: the declared limits themselves widened while a tuned value sits on one ---------------------

@pytest.mark.parametrize("whole", [(), ("lam",)])
def test_a_widened_limit_lets_the_search_pass_it_and_end_inside_what_it_searched(whole):
    calls = []
    result, searched, rounds = widened_search(fake_run({"gamma": 0, "lam": -30}, calls), GRID, {"lam": (-20, 3)},
                                              whole=whole, widen_tolerance=1e-9, widen_limits=["lam"])
    assert result.best_params["lam"] == 2.0 ** -30
    assert min(searched["lam"]) < 2.0 ** -30 and grid_edges(result.best_params, searched) == []
    if whole:  # the whole range grows by a window of powers below its edge each round: -20, -27, -34
        assert [min(call.grid["lam"]) for call in calls] == [2.0 ** -20, 2.0 ** -27, 2.0 ** -34]
        assert all(max(call.grid["lam"]) == 8.0 for call in calls)


def test_a_widened_limit_moves_only_once_a_value_sits_on_it():
    """An optimum just inside the limit: the windows reach it within the declared range, as without
    widen_limits, and nothing past the limit is searched."""
    plain, widened = [], []
    widened_search(fake_run({"gamma": 0, "lam": -19}, plain), GRID, {"lam": (-20, 3)})
    result, searched, _ = widened_search(fake_run({"gamma": 0, "lam": -19}, widened), GRID, {"lam": (-20, 3)},
                                         widen_tolerance=1e-9, widen_limits=["lam"])
    assert result.best_params["lam"] == 2.0 ** -19 and min(searched["lam"]) == 2.0 ** -20
    assert [call.grid for call in widened] == [call.grid for call in plain]


def test_a_widened_limit_on_a_score_that_keeps_creeping_stops_by_the_tolerance():
    """CV AUC rising toward 0.7 as lam shrinks, the gap halving every 7 powers of two: each round past the
    limit gains half the one before, so the rounds stop at the first gain below the tolerance."""
    calls = []

    def creeping(grid):
        calls.append(grid)
        lam = min(grid.grid["lam"])
        return CVResult({"gamma": 1.0, "lam": lam}, 0.7 - 0.1 * 2.0 ** (np.log2(lam) / 7), [])

    _, searched, rounds = widened_search(creeping, GRID, {"lam": (-20, 3)}, whole=["lam"], widen_tolerance=0.001,
                                         widen_limits=["lam"])
    gains = np.diff([r["best_score"] for r in rounds])
    assert len(rounds) >= 3 and np.all(gains[:-1] >= 0.001) and gains[-1] < 0.001
    assert min(searched["lam"]) == 2.0 ** (-20 - 7 * (len(rounds) - 1))


def test_widened_limits_must_be_declared_and_need_a_positive_tolerance():
    with pytest.raises(ValueError, match="widen_limits names \\['gamma'\\]"):
        widened_search(fake_run({}, []), GRID, {"lam": (-20, 3)}, widen_tolerance=0.001, widen_limits=["gamma"])
    for tolerance in (None, 0.0):
        with pytest.raises(ValueError, match="needs a positive widen_tolerance"):
            widened_search(fake_run({}, []), GRID, {"lam": (-20, 3)}, widen_tolerance=tolerance,
                           widen_limits=["lam"])
