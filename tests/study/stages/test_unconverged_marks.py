"""A fit that reaches its iteration limit unconverged is marked in its trial record, results.csv and the AUC table."""

import json
import logging

import numpy as np
import pandas as pd
import pytest

from qs3study.datasets import equal_frequency_bins, make_latent_regression
from qs3study.stages import tables
from qs3study.stages.training import fit_and_score, trial_record

PARAMS = {"n_iter": 50, "n_components": 8, "gamma": 0.5, "lam": 0.01, "random_state": 0}


@pytest.fixture
def data(tmp_path):
    X, target = make_latent_regression(300, 4, random_state=0)
    y, _ = equal_frequency_bins(target, 3)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y.astype(np.int64))
    return tmp_path / "X.npy", tmp_path / "y.npy"


def _record(data, method, params):
    spec = {"method": method, "params": params, "memory_budget_mb": 512}
    record = trial_record("d", method, spec, 0, "100", {}, base_seed=0, kernel_width="literal", versions={})
    fit_and_score(*data, spec, {}, record, logging.getLogger("t"), n_labeled=100)
    return record


def test_the_trial_record_says_whether_a_fit_with_a_criterion_converged(data):
    # tol 1e-12 cannot be met in two doublings: the fit stops at max_iter unconverged and says so.
    limit = _record(data, "qs3orao-converged", {**PARAMS, "tol": 1e-12, "max_iter": 200})
    assert limit["status"] == "ok" and limit["converged"] is False and limit["n_iter_fitted"] == 200
    assert any("ConvergenceWarning" in text for text in limit["warnings"])
    settled = _record(data, "qs3orao-converged", {**PARAMS, "tol": 10.0, "max_iter": 200})
    assert settled["converged"] is True and settled["n_iter_fitted"] == 100
    plain = _record(data, "qs3orao", PARAMS)  # a fixed count states no criterion
    assert plain["converged"] is None


def _results(rows):
    base = {"size": "all", "comparison": True, "n_unlabeled": 100, "warnings": "", "status": "ok"}
    return pd.DataFrame([{**base, **row} for row in rows])


def _rows(converged_b):
    return [{"dataset": "d", "method": method, "trial": trial, "auc": 0.8 + trial / 100 - (method == "b") / 10,
             "mae": 0.5, "accuracy": 0.6, "converged": converged_b[trial] if method == "b" else None}
            for trial in range(3) for method in ("a", "b")]


def test_the_auc_table_marks_unconverged_trials_and_only_those(tmp_path):
    summary = tables.auc_summary(_results(_rows([False, True, False])), "a", ["a", "b"])
    assert summary.set_index("method")["n_unconverged"].to_dict() == {"a": 0, "b": 2}
    text = tables.summary_markdown(summary, "a", {"a": "A", "b": "B"})
    cells = text.splitlines()[2].split(" | ")
    assert "[2 unconverged]" in cells[3] and "unconverged" not in cells[2]
    assert "[n unconverged]: finished trials whose fit reached its iteration limit" in text
    converged = tables.auc_summary(_results(_rows([True, True, True])), "a", ["a", "b"])
    assert "unconverged" not in tables.summary_markdown(converged, "a", {"a": "A", "b": "B"})


def test_results_csv_keeps_the_mark_and_an_older_table_without_the_later_columns_reads_them_as_empty(tmp_path):
    paths = []
    for trial, converged in enumerate([False, True, None]):
        record = {"dataset": "d", "method": "b", "trial": trial, "size": "all", "status": "ok", "auc": 0.7,
                  "params": {}, "versions": {}, "warnings": [], "converged": converged}
        paths.append(tmp_path / f"trial{trial}.json")
        paths[-1].write_text(json.dumps(record))
    table = tables.build_results(paths, {"d": "all"})
    table.to_csv(tmp_path / "results.csv", index=False)
    read = tables.read_results(tmp_path / "results.csv")
    assert tables.unconverged(read).tolist() == [True, False, False]
    assert read["converged"].isna().tolist() == [False, False, True]
    later = ["converged", "tuning_draw", "machine_session", "calibration_s"]
    read.drop(columns=later).to_csv(tmp_path / "old.csv", index=False)
    old = tables.read_results(tmp_path / "old.csv")
    assert list(old.columns) == list(read.columns)
    assert old[["converged", "machine_session", "calibration_s"]].isna().all().all()
    assert old["tuning_draw"].tolist() == [0, 0, 0] and old["tuning_draw"].dtype == np.int64
    assert not tables.unconverged(old).any()
    summary = tables.auc_summary(old, "b", ["b"])
    assert summary["n_unconverged"].tolist() == [0]
