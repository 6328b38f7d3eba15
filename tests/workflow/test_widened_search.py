"""The widened search of the best-effort protocol (issue 19): grids extended until no choice sits on an edge."""

import itertools

import numpy as np
import pytest

from baselines.model_selection import CVResult
from baselines.registry import PAPER_GRID, TuningGrid
from qs3study.kernel_width import grid_edges
from qs3study.tuning import WINDOW, widened_search


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
