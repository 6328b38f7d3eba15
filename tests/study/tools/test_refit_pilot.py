"""The refit pilot: which fits it refits, that an unchanged refit is the committed fit, and its verdicts."""

import json
import logging

import numpy as np
import pandas as pd
import pytest
import yaml

from qs3study.stages.training import fit_and_score
from qs3study.tools import refit_pilot as pilot

DESIGN = {"name": "pilot-test", "results": "results.csv", "methods": ["qs3orao", "qs3orao-labeled"], "tuning_draw": 0,
          "trials": [0, 1], "candidate": {"step_offset": "auto-data"}, "reproduce_trials": [0], "n_labeled": 40,
          "bar": 0.95, "auc_tolerance": 0.005, "confidence": 0.95, "stopped_at": None, "reference": None, "margin": None,
          "decision": "bar"}
REFERENCE_DESIGN = {**DESIGN, "tuning_draw": [0, 1], "stopped_at": 200, "candidate": {"require_falling": True},
                    "reference": {"qs3orao": "qs3orao-exact", "qs3orao-labeled": "qs3orao-exact-labeled"},
                    "margin": 0.01, "decision": "reference"}
PARAMS = {"n_iter": 100, "max_iter": 400, "tol": 0.01, "n_components": 4, "batch_size": 4, "gamma": 1.0,
          "lam": 0.05, "step_offset": "auto"}


def results_row(dataset, method, trial, **values):
    row = {"dataset": dataset, "method": method, "base_method": "qs3orao-converged", "trial": trial, "seed": 100 + trial,
           "size": "120", "comparison": True, "tuning_draw": 0, "status": "ok", "kernel_width": "literal",
           "memory_budget_mb": 1024.0, "params": json.dumps({**PARAMS, "tradeoff": 1.0 if "labeled" in method else 0.5}),
           "n_iter_fitted": 400.0, "converged": False, "auc": 0.5}
    return {**row, **values}


def committed_results(datasets=("uci_bike", "uci_elevators")):
    return pd.DataFrame([results_row(d, m, t) for d in datasets for m in DESIGN["methods"] for t in (0, 1, 2)]
                        + [results_row("uci_bike", "m-samult", 0), results_row("uci_bike", "qs3orao", 0, tuning_draw=1)])


def test_the_design_selects_candidate_refits_and_the_harness_check():
    tasks = pilot.pilot_tasks(committed_results(), DESIGN)
    candidates = [(row["dataset"], row["method"], row["trial"]) for variant, row in tasks if variant == pilot.CANDIDATE]
    checks = [(row["dataset"], row["method"], row["trial"]) for variant, row in tasks if variant == pilot.COMMITTED]
    assert len(candidates) == 8 and {t for _, _, t in candidates} == {0, 1}
    assert len(checks) == 4 and {t for _, _, t in checks} == {0}
    assert all(row["tuning_draw"] == 0 and row["method"] != "m-samult" for _, row in tasks)


def test_a_selected_fit_missing_from_the_run_is_refused():
    results = committed_results()
    results = results.drop(results.index[(results["dataset"] == "uci_bike") & (results["method"] == "qs3orao")
                                         & (results["trial"] == 1)])
    with pytest.raises(ValueError, match="7 committed fits for the candidate refits, 8 expected"):
        pilot.pilot_tasks(results, DESIGN)


def test_a_design_with_a_missing_or_unknown_key_is_refused(tmp_path):
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump({**{k: v for k, v in DESIGN.items() if k != "bar"}, "seeds": 3}))
    with pytest.raises(ValueError, match=r"missing keys \['bar'\], unknown keys \['seeds'\]"):
        pilot.read_design(path)


def test_the_optional_keys_default_and_a_decision_without_its_reference_is_refused(tmp_path):
    path = tmp_path / "design.yaml"
    required = {k: v for k, v in DESIGN.items() if k not in ("stopped_at", "reference", "margin", "decision")}
    path.write_text(yaml.safe_dump(required))
    assert pilot.read_design(path) == DESIGN
    for changes, message in (({"decision": "share"}, "decision must be one of"),
                             ({"decision": "reference"}, "needs a reference and a margin"),
                             ({"margin": 0.01}, "given together")):
        path.write_text(yaml.safe_dump({**required, **changes}))
        with pytest.raises(ValueError, match=message):
            pilot.read_design(path)


def test_a_stopping_point_and_a_reference_select_the_stopped_fits_beside_their_minimiser():
    results = committed_results()
    results = results[results["tuning_draw"] == 0]
    results = pd.concat([results, results.assign(tuning_draw=1)], ignore_index=True)
    stopped = (results["dataset"] == "uci_bike") & results["trial"].isin([0, 1]) & (results["method"] == "qs3orao")
    results.loc[stopped, "n_iter_fitted"] = 200.0
    exact = results[results["method"].isin(DESIGN["methods"])].copy()
    exact["method"] = exact["method"].str.replace("qs3orao", "qs3orao-exact")
    exact["auc"] = 0.6 + 0.01 * exact["trial"] + 0.1 * exact["tuning_draw"]
    tasks = pilot.pilot_tasks(pd.concat([results, exact], ignore_index=True), REFERENCE_DESIGN)
    chosen = {(variant, row["method"], row["tuning_draw"], row["trial"]): row["reference_auc"] for variant, row in tasks}
    assert chosen == {(pilot.CANDIDATE, "qs3orao", draw, trial): 0.6 + 0.01 * trial + 0.1 * draw
                      for draw in (0, 1) for trial in (0, 1)} | {
                     (pilot.COMMITTED, "qs3orao", draw, 0): 0.6 + 0.1 * draw for draw in (0, 1)}
    with pytest.raises(ValueError, match="no qs3orao-exact fit for uci_bike tuning draw 1 trial 1"):
        pilot.pilot_tasks(pd.concat([results, exact.drop(exact.index[
            (exact["method"] == "qs3orao-exact") & (exact["dataset"] == "uci_bike") & (exact["tuning_draw"] == 1)
            & (exact["trial"] == 1)])], ignore_index=True), REFERENCE_DESIGN)


@pytest.fixture
def prepared(tmp_path):
    """A registered dataset's name over generated arrays: 4 ordered classes of a smooth latent function."""
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    latent = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(300)
    y = np.searchsorted(np.quantile(latent, [0.25, 0.5, 0.75]), latent)
    folder = tmp_path / "data" / "uci_bike"
    folder.mkdir(parents=True)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    return tmp_path / "data"


def committed_fit(prepared, method, **params):
    """A committed row as the pipeline writes it (``params`` changed): the same trial run through fit_and_score."""
    row = results_row("uci_bike", method, 0)
    row["params"] = json.dumps({**json.loads(row["params"]), **params})
    record = {"seed": row["seed"], "size": row["size"], "warnings": []}
    spec = {"method": row["base_method"], "params": json.loads(row["params"]), "memory_budget_mb": 1024.0}
    fit_and_score(prepared / "uci_bike" / "X.npy", prepared / "uci_bike" / "y.npy", spec, {}, record,
                  logging.getLogger("test"), n_labeled=DESIGN["n_labeled"], kernel_width="literal")
    return {**row, "n_iter_fitted": float(record["n_iter_fitted"]), "converged": record["converged"],
            "auc": record["auc"]}


def test_an_unchanged_refit_is_the_committed_fit_and_the_candidate_changes_only_the_offset(prepared):
    row = committed_fit(prepared, "qs3orao")
    same = pilot.refit(pilot.COMMITTED, row, DESIGN, prepared)
    assert same["status"] == "ok" and same["step_offset"] == "auto"
    assert (same["n_iter_fitted"], same["converged"], same["auc"]) == (row["n_iter_fitted"], row["converged"],
                                                                       row["auc"])
    candidate = pilot.refit(pilot.CANDIDATE, row, DESIGN, prepared)
    assert candidate["status"] == "ok" and candidate["step_offset"] == "auto-data"
    assert candidate["auc"] != row["auc"]  # a larger step: another trajectory on the same rows and seed
    assert pilot.reproduction_failures(pd.DataFrame([same])).empty


def test_a_larger_cap_keeps_a_converged_fit_and_runs_an_unconverged_one_on(prepared):
    design = {**DESIGN, "candidate": {"max_iter": 1600}}
    settled = committed_fit(prepared, "qs3orao", tol=0.5)  # met at the first doubling
    assert settled["converged"] and settled["n_iter_fitted"] < 400
    candidate = pilot.refit(pilot.CANDIDATE, settled, design, prepared)
    assert candidate["max_iter"] == "1600"
    assert (candidate["n_iter_fitted"], candidate["converged"], candidate["auc"]) == (
        settled["n_iter_fitted"], True, settled["auc"])
    moving = committed_fit(prepared, "qs3orao", tol=1e-12)  # never met
    assert not moving["converged"] and moving["n_iter_fitted"] == 400
    candidate = pilot.refit(pilot.CANDIDATE, moving, design, prepared)
    assert candidate["n_iter_fitted"] == 1600 and not candidate["converged"] and candidate["auc"] != moving["auc"]


def test_a_falling_change_moves_a_fit_that_met_the_criterion_at_the_first_reading(prepared):
    settled = committed_fit(prepared, "qs3orao", tol=0.5)
    assert settled["converged"] and settled["n_iter_fitted"] == 200
    candidate = pilot.refit(pilot.CANDIDATE, settled, REFERENCE_DESIGN, prepared)
    assert candidate["status"] == "ok" and candidate["require_falling"] == "True"
    assert candidate["n_iter_fitted"] > settled["n_iter_fitted"] and candidate["auc"] != settled["auc"]


def test_a_refit_that_raises_is_recorded_failed(prepared):
    row = {**results_row("uci_bike", "qs3orao", 0), "params": json.dumps({**PARAMS, "lam": -1.0, "tradeoff": 0.5})}
    record = pilot.refit(pilot.COMMITTED, row, DESIGN, prepared)
    assert record["status"] == "failed" and "lam" in record["reason"]


def test_a_work_folder_of_another_design_or_commit_is_refused_and_its_own_is_resumed(tmp_path):
    stamp = {"design": DESIGN, "git": {"commit": "a" * 40, "dirty": False}}
    pilot.claim_work_folder(tmp_path, stamp)
    pilot.claim_work_folder(tmp_path, stamp)
    other_design = {**stamp, "design": {**DESIGN, "candidate": {"step_offset": "auto"}}}
    with pytest.raises(ValueError, match=r"another pilot \(design differ\)"):
        pilot.claim_work_folder(tmp_path, other_design)
    with pytest.raises(ValueError, match=r"another pilot \(git differ\)"):
        pilot.claim_work_folder(tmp_path, {**stamp, "git": {"commit": "b" * 40, "dirty": False}})


def fits_frame(converged, n=33, reproduced=True, auc_change=0.0):
    rows = [{"dataset": f"d{i % 11}", "method": "qs3orao", "trial": i // 11, "variant": pilot.CANDIDATE, "status": "ok",
             "converged": i < converged, "auc": 0.8 + auc_change, "committed_auc": 0.8, "committed_converged": False,
             "n_iter_fitted": 1000, "committed_n_iter": 2000} for i in range(n)]
    check = {"dataset": "d0", "method": "qs3orao", "trial": 0, "variant": pilot.COMMITTED, "status": "ok",
             "converged": False, "auc": 0.8 if reproduced else 0.81, "committed_auc": 0.8,
             "committed_converged": False, "n_iter_fitted": 2000, "committed_n_iter": 2000}
    return pd.DataFrame(rows + [check])


@pytest.mark.parametrize(("converged", "verdict"), [(33, "reaches the bar"), (32, "reaches the bar"),
                                                    (31, "inconclusive"), (29, "inconclusive"),
                                                    (28, "below the bar"), (0, "below the bar")])
def test_the_verdict_follows_the_share_and_its_interval(converged, verdict):
    summary = pilot.summarise(fits_frame(converged), DESIGN)
    assert summary["verdict"].tolist() == [verdict]
    assert summary["interval_low"].item() <= converged / 33 <= summary["interval_high"].item()


def test_no_verdict_when_the_harness_check_fails_and_the_decision_needs_accuracy():
    summary = pilot.summarise(fits_frame(33, reproduced=False), DESIGN)
    assert summary["verdict"].tolist() == ["not reproduced"]
    fits = fits_frame(33, auc_change=-0.01)
    summary = pilot.summarise(fits, DESIGN)
    assert summary["verdict"].tolist() == ["reaches the bar"] and not summary["no_worse"].item()
    assert "not adopted" in pilot.summary_markdown(fits, summary, DESIGN)
    fits = fits_frame(33)
    assert "is adopted" in pilot.summary_markdown(fits, pilot.summarise(fits, DESIGN), DESIGN)


def reference_fits(off_committed, off_candidate, n=10, near_committed=0.895):
    """``n`` converged refits against a minimiser at 0.9: the first ``off_*`` at 0.85, the others near it."""
    rows = [{"dataset": f"d{i}", "method": "qs3orao", "tuning_draw": 0, "trial": 0, "variant": pilot.CANDIDATE,
             "status": "ok", "converged": True, "committed_converged": True, "reference_auc": 0.9,
             "committed_auc": 0.85 if i < off_committed else near_committed,
             "auc": 0.85 if i < off_candidate else 0.895, "n_iter_fitted": 8000, "committed_n_iter": 4000}
            for i in range(n)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("off_committed", "off_candidate", "near_committed", "adopt"),
                         [(6, 2, 0.895, True), (6, 6, 0.895, False), (6, 7, 0.895, False), (2, 0, 0.95, False)])
def test_the_reference_decision_counts_converged_fits_off_their_minimiser(off_committed, off_candidate, near_committed,
                                                                          adopt):
    fits = reference_fits(off_committed, off_candidate, near_committed=near_committed)
    summary = pilot.summarise(fits, REFERENCE_DESIGN)
    assert summary[["off_reference", "committed_off_reference"]].values.tolist() == [[off_candidate, off_committed]]
    assert pilot.adopted(summary, REFERENCE_DESIGN) is adopt
    text = pilot.summary_markdown(fits, summary, REFERENCE_DESIGN)
    assert f"| {off_candidate} / {off_committed} of 10 |" in text
    assert ("is adopted" in text) is adopt


def test_a_measurement_adopts_nothing_even_when_both_columns_reach_the_bar(tmp_path):
    design_file = tmp_path / "design.yaml"
    design_file.write_text(yaml.safe_dump({**DESIGN, "decision": "measurement"}))
    design = pilot.read_design(design_file)
    fits = fits_frame(33)
    summary = pilot.summarise(fits, design)
    assert summary["verdict"].tolist() == ["reaches the bar"]
    assert pilot.adopted(summary, design) is False
    assert "not adopted: the design is a measurement" in pilot.summary_markdown(fits, summary, design)
