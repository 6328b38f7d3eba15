"""The signal screens (permutation and fixed level) and the datasets the claims count."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from baselines.model_selection import cross_validate_params
from baselines.registry import TuningGrid
from qs3study.datasets import DATASETS, load_ordinal, semisupervised_split
from qs3study.claims.empirical import counted_datasets, empirical_claims
from qs3study.stages.data import data_checks_job, screen_job
from qs3study.stages.data_checks import data_checks, permutation_screen_table, signal_check
from qs3study.stages.tuning_records import edge_markdown, edge_table, signal_screen

LEVEL = 0.55
GRIDS = {"linear-floor": TuningGrid({"alpha": (0.125, 1.0, 8.0)}),
         "m-samult": TuningGrid({"gamma": (0.5, 2.0), "lam": (0.125, 1.0)})}


def _records(name, X, y):
    split = semisupervised_split(y, n_labeled=150, seed=0, n_unlabeled=150)
    records = []
    for method, grid in GRIDS.items():
        result = cross_validate_params(method, X[split.train_idx], split.y_train, grid, n_folds=3, random_state=0)
        records.append({"dataset": name, "method": method, "seed": 0, "status": "ok",
                        "best_params": result.best_params, "best_score": result.best_score,
                        "grid_edges": [], "rounds": []})
    return records


@pytest.mark.slow
def test_a_signal_free_generated_set_is_screened_and_a_signal_set_is_not():
    rng = np.random.default_rng(0)
    noise_X, noise_y = rng.uniform(size=(400, 5)), rng.integers(0, 4, 400)  # labels independent of the features
    signal = load_ordinal("synthetic", n_samples=400, n_bins=4)
    screen = signal_screen(_records("noise", noise_X, noise_y) + _records("synthetic", signal.X, signal.y), LEVEL)
    screen = screen.set_index("dataset")
    assert screen.loc["noise", "status"] == "no_signal" and screen.loc["noise", "best_cv_auc"] < LEVEL
    assert screen.loc["synthetic", "status"] == "signal" and screen.loc["synthetic", "best_cv_auc"] > 0.7
    assert "linear-floor" in screen.loc["noise", "reason"] and "m-samult" in screen.loc["noise", "reason"]


def _results(datasets, unfinished=()):
    rows = []
    for dataset in datasets:
        for method, auc in (("qs3orao", 0.8), ("m-pnu-auc", 0.78), ("m-samult", 0.79), ("svorex", 0.81)):
            for trial in range(3):
                failed = (dataset, method, trial) in unfinished
                rows.append({"dataset": dataset, "method": method, "trial": trial, "comparison": True,
                             "status": "failed" if failed else "ok", "auc": np.nan if failed else auc + 0.01 * trial,
                             "n_unlabeled": 100, "fit_time": 1.0})
    return pd.DataFrame(rows)


def test_claims_count_only_datasets_with_signal_where_every_paper_method_finished_every_trial():
    table = _results(["a", "b", "c"], unfinished={("b", "m-pnu-auc", 1)})
    screened = pd.DataFrame({"dataset": ["c"], "screen": ["level"], "status": ["no_signal"], "reason": ["0.52"]})
    counted, left_out = counted_datasets(table, ["qs3orao", "m-pnu-auc", "m-samult", "svorex"], screened)
    assert counted == ["a"]
    assert left_out["b"] == "m-pnu-auc finished 2/3 trials (failed 1)" and left_out["c"].startswith("screened")
    claims = empirical_claims(table, {"reported_margins": [0.005, 0.01, 0.02]}, screened)
    assert "on 0/1 datasets" in claims["highest_auc"]["evidence"]
    assert "not counted: b (m-pnu-auc finished 2/3 trials" in claims["highest_auc"]["evidence"]
    evidence = claims["similar_generalisation"]["evidence"]
    assert "margin 0.005:" in evidence and "margin 0.02:" in evidence and "margin 0.01:" not in evidence
    # without the screen, every finished dataset counts
    assert "on 0/2 datasets" in empirical_claims(table)["highest_auc"]["evidence"]


PAPER = ["qs3orao", "m-pnu-auc", "m-samult", "svorex"]
CHECKS = {"rank_level": 0.999, "group_level": 0.9, "group_min_groups": 10, "group_max_distinct_fraction": 0.02,
          "max_rows": 20000, "on_trip": "warn", "signal_permutations": 19, "signal_alpha": 0.05,
          "signal_widths": [-1, 0, 1], "signal_lams": [1e-4, 1e-2]}


def _checks():
    """data_checks rows of a signal-free generated set (``noise``) and one with signal (``signal``)."""
    rng = np.random.default_rng(3)
    X = rng.random((400, 4))
    signal = np.digitize(np.sin(4 * X[:, 0]) + X[:, 1], np.quantile(np.sin(4 * X[:, 0]) + X[:, 1], [0.25, 0.5, 0.75]))
    spec = replace(DATASETS["uci_parkinsons"], group_column=None, drop_features=())
    table = pd.concat([part for name, y in (("noise", rng.integers(0, 4, 400)), ("signal", signal))
                       for part in (data_checks(name, spec, X, y, None, CHECKS, n_labeled=150, base_seed=0),
                                    signal_check(name, spec, X, y, CHECKS, n_labeled=150, base_seed=0))],
                      ignore_index=True)
    tripped = table[table["check"] == "signal_null"].set_index("dataset")["tripped"]
    assert tripped["noise"] and not tripped["signal"]
    return table


def _screen(tmp_path, job, checks, *, signal_level=None, records=()):
    """``screened_datasets.csv`` of :func:`screen_job` on ``checks`` (and tuning ``records`` for a level)."""
    checks.to_csv(tmp_path / "data_checks.csv", index=False)
    paths = []
    for i, record in enumerate(records):
        paths.append(str(tmp_path / f"record{i}.json"))
        (tmp_path / f"record{i}.json").write_text(json.dumps(record))
    job_ = job(tmp_path, "screened_datasets", input={"checks": str(tmp_path / "data_checks.csv"), "records": paths},
               output=[str(tmp_path / "screened_datasets.csv")],
               params={"screen": {}, "cache_dir": str(tmp_path), "mirror": None, "seed": 0,
                       "signal_level": signal_level, "permutation_screen": True, "signal_alpha": 0.05,
                       "datasets": ["noise", "signal"]})
    screen_job(job_)
    return pd.read_csv(tmp_path / "screened_datasets.csv")


def test_a_tripped_signal_null_check_is_screened_out_of_the_claims(tmp_path, job):
    screened = _screen(tmp_path, job, _checks())
    rows = screened.set_index("dataset")
    assert (rows["screen"] == "permutation").all() and len(rows) == 2
    assert rows.loc["noise", "status"] == "no_signal" and rows.loc["signal", "status"] == "signal"
    for reason in rows["reason"]:
        assert "proxy search's best cross-validated AUC" in reason and "1 - alpha quantile" in reason
        assert "p = " in reason and "over 19 permutations at alpha 0.05" in reason
    claims = empirical_claims(_results(["noise", "signal"]), {}, screened, ["permutation"])
    evidence = claims["highest_auc"]["evidence"]
    assert "on 0/1 datasets" in evidence
    assert "not counted: noise (screened by the permutation screen: the proxy search's CV AUC does not beat" in evidence
    assert "no method reaches the declared CV AUC level" not in evidence


def test_with_both_screens_declared_a_dataset_counts_only_when_it_passes_both(tmp_path, job):
    records = [{"dataset": "noise", "method": "svorex", "best_score": 0.8},  # passes the level, not the null
               {"dataset": "signal", "method": "svorex", "best_score": 0.7}]  # passes the null, not the level
    screened = _screen(tmp_path, job, _checks(), signal_level=0.75, records=records)
    assert sorted(zip(screened["dataset"], screened["screen"], screened["status"])) == [
        ("noise", "level", "signal"), ("noise", "permutation", "no_signal"),
        ("signal", "level", "no_signal"), ("signal", "permutation", "signal")]
    counted, left_out = counted_datasets(_results(["noise", "signal", "clean"]), PAPER, screened)
    assert counted == ["clean"]
    assert left_out["noise"].startswith("screened by the permutation screen") and "level" not in left_out["noise"]
    assert left_out["signal"].startswith("screened: no method reaches the declared CV AUC level (best")
    assert "permutation" not in left_out["signal"]


def test_a_dataset_without_its_screen_never_counts_silently():
    checks = _checks()
    without = checks[~((checks["dataset"] == "signal") & (checks["check"] == "signal_null"))]
    with pytest.raises(ValueError, match="signal has 0: rerun its signal_screen job"):
        permutation_screen_table(without, ["noise", "signal"], 0.05)
    with pytest.raises(ValueError, match="noise has 2"):
        permutation_screen_table(pd.concat([checks, checks[checks["dataset"] == "noise"]]), ["noise", "signal"], 0.05)
    screened = permutation_screen_table(checks, ["noise"], 0.05)  # a results table with a dataset it lacks
    with pytest.raises(ValueError, match=r"does not list, under a declared signal screen: signal \(permutation\)"):
        empirical_claims(_results(["noise", "signal"]), {}, screened, ["permutation"])
    with pytest.raises(ValueError, match="no screen column"):
        counted_datasets(_results(["noise"]), PAPER, screened.drop(columns="screen"))


def test_edge_table_counts_hits_per_dataset_and_method():
    records = [{"dataset": "a", "method": "svorex", "seed": 1, "status": "ok", "best_params": {"C": 8.0},
                "best_score": 0.8, "grid_edges": ["grid edge: C = 8 is the largest value of its grid (0.125 .. 8)"],
                "rounds": [{}, {}, {}]},
               {"dataset": "a", "method": "qs3orao", "seed": 1, "status": "ok", "best_params": {}, "best_score": 0.7,
                "grid_edges": [], "rounds": []}]
    table = edge_table(records)
    assert table.set_index("method").loc["svorex", "n_edge_hits"] == 1
    assert "| a | 0 + 0 + 0 (1) | 1 + 0 + 0 (3) |" in edge_markdown(table)


def test_edge_table_counts_natural_bounds_apart_from_search_limits():
    edges = ["grid edge: gamma = 64 is the largest value of its grid (0.125 .. 64)",
             "grid edge: tradeoff[0] = 1 is the largest value of its grid (0 .. 1)",
             "grid edge: tradeoff[2] = 0 is the smallest value of its grid (0 .. 1)"]
    records = [{"dataset": "a", "method": "m-samult", "seed": 1, "status": "ok", "best_params": {}, "best_score": 0.8,
                "grid_edges": edges, "rounds": [{}, {}]}]
    table = edge_table(records)
    assert table[["n_edge_hits", "n_natural_bound", "n_settled"]].values.tolist() == [[3, 2, 0]]
    assert "| a | 1 + 0 + 2 (2) |" in edge_markdown(table)


def test_edge_table_counts_settled_hits_apart_from_limits_and_natural_bounds():
    settled = ("grid edge: gamma = 0.000244141 is the smallest value of its grid (0.000244141 .. 0.125) "
               "(widening settled: the last round moved the best CV AUC by +0.0002, less than widen_tolerance 0.001)")
    edges = [settled, "grid edge: lam = 9.53674e-07 is the smallest value of its grid (9.53674e-07 .. 8)",
             "grid edge: tradeoff[0] = 1 is the largest value of its grid (0 .. 1)"]
    records = [{"dataset": "a", "method": "m-samult", "seed": 1, "status": "ok", "best_params": {}, "best_score": 0.8,
                "grid_edges": edges, "rounds": [{}, {}, {}]}]
    table = edge_table(records)
    assert table[["n_edge_hits", "n_natural_bound", "n_settled"]].values.tolist() == [[3, 1, 1]]
    markdown = edge_markdown(table)
    assert "| a | 1 + 1 + 1 (3) |" in markdown and "s settled" in markdown


def test_the_data_checks_table_puts_each_datasets_signal_row_after_its_checks(tmp_path, job):
    checks = _checks()
    assert list(data_checks("noise", replace(DATASETS["uci_parkinsons"], group_column=None, drop_features=()),
                            np.random.default_rng(0).random((400, 4)), np.arange(400) % 4, None, CHECKS,
                            n_labeled=150, base_seed=0)["check"]) == ["rank_leak", "group_lookup", "nearest_neighbour"]
    inputs = {"checks": [], "signal": []}
    for name in ("noise", "signal"):
        rows = checks[checks["dataset"] == name]
        for part, selected in (("checks", rows["check"] != "signal_null"), ("signal", rows["check"] == "signal_null")):
            inputs[part].append(str(tmp_path / f"{name}-{part}.csv"))
            rows[selected].to_csv(inputs[part][-1], index=False)
    data_checks_job(job(tmp_path, "data_checks", input=inputs, output=[str(tmp_path / "data_checks.csv")]))
    table = pd.read_csv(tmp_path / "data_checks.csv")
    assert list(zip(table["dataset"], table["check"])) == list(zip(checks["dataset"], checks["check"]))
