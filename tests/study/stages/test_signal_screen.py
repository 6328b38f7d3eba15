"""The signal screen and the datasets the claims count."""

import numpy as np
import pandas as pd
import pytest

from baselines.model_selection import cross_validate_params
from baselines.registry import TuningGrid
from qs3study.datasets import load_ordinal, semisupervised_split
from qs3study.claims.empirical import counted_datasets, empirical_claims
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
    screened = pd.DataFrame({"dataset": ["c"], "status": ["no_signal"]})
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
