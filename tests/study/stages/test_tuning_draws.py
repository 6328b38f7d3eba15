"""Tuning draws (``tuning.draws``): draw 0 is the single tuning, every other draw its own folds and streams."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from baselines.model_selection import cross_validate_params
from qs3study.configuration import check_tuning_draws, method_spec
from qs3study.datasets import semisupervised_split
from qs3study.design import trial_seed, tuning_seed
from qs3study.grids import resolve_grid
from qs3study.stages import tables, training
from qs3study.stages.tuning import fixed_params, tune_job

GRID = {"lam": [0.25, 1.0, 4.0]}


def test_draw_zero_keeps_the_trial_seed_and_every_other_draw_has_its_own():
    seed = trial_seed("swd", 3)
    seeds = [tuning_seed(seed, draw) for draw in range(4)]
    assert seeds[0] == seed and len(set(seeds)) == 4
    assert seeds[1:] == [int(np.random.SeedSequence([seed, d]).generate_state(1, dtype=np.uint32)[0] >> 1)
                         for d in (1, 2, 3)]
    assert all(0 <= s < 2**31 for s in seeds)
    with pytest.raises(ValueError, match="draw must be >= 0"):
        tuning_seed(seed, -1)


def _data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X.sum(axis=1) + 0.3 * rng.normal(size=300), [0.8, 1.2])
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    return X, y


def _spec(tiny_config):
    spec = method_spec(tiny_config(), "qs3orao", "swd")
    return {**spec, "params": {**spec["params"], "n_iter": 40}}


def _tune(tmp_path, tiny_config, job, draw=None):
    """The record of a ``tune`` job (QS3ORAO, 40 iterations, 3 folds) on 300 rows, 90 labeled; ``draw`` is rule
    ``tune_draw``'s wildcard (None: rule ``tune``)."""
    wildcards = {"dataset": "swd", "method": "qs3orao", "trial": "0"}
    if draw is not None:
        wildcards["draw"] = str(draw)
    output = tmp_path / f"tuned{draw}.json"
    tune_job(job(tmp_path, "tune", input={"X": str(tmp_path / "X.npy"), "y": str(tmp_path / "y.npy")},
                 output={"json": str(output)},
                 params={"spec": _spec(tiny_config), "grid": GRID, "n_labeled": 90, "n_unlabeled": "100",
                         "n_folds": 3, "early_stopping": None, "base_seed": 0, "kernel_width": "literal"},
                 wildcards=wildcards))
    record = json.loads(output.read_text())
    assert record["status"] == "ok", record["reason"]
    return record


def test_draw_zero_is_the_search_seeded_by_the_trial_and_other_draws_search_other_folds(tmp_path, tiny_config,
                                                                                         job):
    X, y = _data(tmp_path)
    single = _tune(tmp_path, tiny_config, job)
    # The search as the single tuning runs it, computed directly: the trial's split, folds and fits seeded by
    # the trial's seed.
    seed = trial_seed("swd", 0, 0)
    split = semisupervised_split(y, n_labeled=90, seed=seed, n_unlabeled=100)
    spec, grid = _spec(tiny_config), resolve_grid("qs3orao", GRID)
    direct = cross_validate_params("qs3orao", X[split.train_idx], split.y_train, grid, n_folds=3,
                                   random_state=seed, fixed_params=fixed_params(spec, grid, seed))
    assert single["best_params"] == direct.best_params and single["best_score"] == direct.best_score
    assert [row["cv_auc"] for row in single["search"]] == [row["cv_auc"] for row in direct.table]
    assert "tuning_draw" not in single and "search_seed" not in single  # the single tuning's record, as before
    draws = {draw: _tune(tmp_path, tiny_config, job, draw) for draw in (1, 2)}
    for draw, record in draws.items():
        assert record["seed"] == seed and record["n_labeled"] == single["n_labeled"]  # the same split
        assert record["tuning_draw"] == draw and record["search_seed"] == tuning_seed(seed, draw)
    scores = [tuple(row["cv_auc"] for row in record["search"]) for record in (single, *draws.values())]
    assert len(set(scores)) == 3  # other folds and streams, other cross-validated scores


def test_a_training_record_names_its_draw_and_keeps_the_trials_seed():
    spec = {"method": "m-pnu-auc", "params": {"lam": 0.1}, "memory_budget_mb": 512}
    record = training.trial_record("d", "m", spec, 2, "all", {"best_params": {"lam": 1.0}, "status": "ok"},
                                   base_seed=0, kernel_width="literal", versions={}, tuning_draw=2)
    assert record["tuning_draw"] == 2 and record["seed"] == trial_seed("d", 2)
    assert training.trial_record("d", "m", spec, 2, "all", {}, base_seed=0, kernel_width="literal",
                                 versions={})["tuning_draw"] == 0


def _rows(method, size, draw, aucs):
    return [{"dataset": "a", "method": method, "size": size, "trial": t, "tuning_draw": draw, "auc": auc}
            for t, auc in enumerate(aucs)]


def test_one_draw_takes_a_draws_rows_where_it_was_trained_and_draw_zero_elsewhere():
    table = pd.DataFrame(_rows("qs3orao", "200", 0, [0.7, 0.8]) + _rows("qs3orao", "900", 0, [0.75])
                         + _rows("svorex", "200", 0, [0.6, 0.6]) + _rows("qs3orao", "200", 1, [0.5, 0.55]))
    assert tables.tuning_draws(table) == [0, 1]
    zero, one = tables.one_draw(table, 0), tables.one_draw(table, 1)
    assert (zero["tuning_draw"] == 0).all() and len(zero) == 5
    assert sorted(zip(one["method"], one["size"], one["tuning_draw"], one["auc"])) == [
        ("qs3orao", "200", 1, 0.5), ("qs3orao", "200", 1, 0.55), ("qs3orao", "900", 0, 0.75),
        ("svorex", "200", 0, 0.6), ("svorex", "200", 0, 0.6)]
    with pytest.raises(ValueError, match="tuning draws"):
        tables.one_draw(table, 2)
    with pytest.raises(ValueError, match="1 rows of the results table have no tuning_draw"):
        tables.tuning_draws(table.assign(tuning_draw=table["tuning_draw"].where(table["auc"] != 0.75)))
    without = table[table["tuning_draw"] == 0].drop(columns="tuning_draw")
    assert tables.tuning_draws(without) == [0] and tables.one_draw(without) is without


def test_a_table_written_before_the_draws_reads_as_draw_zero(tmp_path):
    # the first reproduction's table: a committed run kept as it was, written before the draws
    committed = pd.read_csv(Path(__file__).resolve().parents[3] / "figures" / "reproduction" / "results.csv",
                            nrows=5)
    assert "tuning_draw" not in committed
    committed.to_csv(tmp_path / "results.csv", index=False)
    table = tables.read_results(tmp_path / "results.csv")
    assert (table["tuning_draw"] == 0).all() and tables.tuning_draws(table) == [0]
    assert list(table.columns).index("tuning_draw") == list(table.columns).index("tuning_status") + 1


@pytest.mark.parametrize("tuning, message", [
    ({"draws": 3, "draw_methods": []}, "name the methods"),
    ({"draws": 1, "draw_methods": ["m-pnu-auc"]}, "no other draw"),
    ({"draws": 2, "draw_methods": ["svorex"]}, "not a configured method"),
    ({"draws": 2, "draw_methods": ["qs3orao"]}, "no search"),
])
def test_the_draws_and_their_methods_are_checked_before_the_run(tiny_config, tuning, message):
    with pytest.raises(ValueError, match=message):
        check_tuning_draws(tuning, tiny_config()["methods"])
    check_tuning_draws({"draws": 2, "draw_methods": ["m-pnu-auc"]}, tiny_config()["methods"])
