"""A tune job logs every candidate with an estimate of the time left."""

import logging

import numpy as np

from baselines.model_selection import cross_validate_params
from baselines.registry import tuning_grid
from qs3study.stages.tuning import SearchProgress, candidate_bound


def test_a_search_logs_every_candidate_with_the_time_left(caplog):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(150, 3))
    y = np.digitize(X.sum(axis=1), [1.2, 1.8])
    y[90:] = -1
    grid = tuning_grid("m-pnu-auc")
    grid = type(grid)({"gamma": (1.0,), "lam": (0.1, 1.0)}, grid.split_param, grid.split_values[:3],
                      grid.split_default, grid.separable)
    ticks = iter(range(0, 1000, 2))
    progress = SearchProgress(logging.getLogger("tune-test"), candidate_bound(grid, 3), clock=lambda: next(ticks))
    with caplog.at_level(logging.INFO, logger="tune-test"):
        result = cross_validate_params("m-pnu-auc", X, y, grid, n_folds=2, fixed_params={"random_state": 0},
                                       progress=progress)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == len(result.table) <= candidate_bound(grid, 3)
    # the clock is read after each of the 2 folds of the stage too (2, 4 s), then for its first candidate (6 s)
    assert lines[0] == (f"candidate 1 of at most {candidate_bound(grid, 3)} (grid stage): cv auc "
                        f"{result.table[0]['cv_auc']:.4f}; 6 s spent, at most about "
                        f"{6 * (candidate_bound(grid, 3) - 1)} s left")
