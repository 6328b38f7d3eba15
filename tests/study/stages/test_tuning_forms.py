"""The configuration's grid forms and the early-stopping option of the tuning."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from baselines.model_selection import CVResult, Halving
from baselines.registry import TRADEOFF_GRID, tuning_grid
from qs3study.configuration import check_methods, method_spec
from qs3study.datasets import semisupervised_split
from qs3study.design import trial_seed
from qs3study.grids import resolve_grid
from qs3study.kernel_width import edge_kind
from qs3study.stages import tuning
from qs3study.stages.tuning import halving, scaled_grid, tune_job

SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "config" / "schema.yaml"


def test_registry_is_the_paper_staged_search():
    assert resolve_grid("qs3orao", "registry") == tuning_grid("qs3orao")


def test_a_plain_mapping_is_its_product_only_without_trade_off_stages():
    grid = resolve_grid("qs3orao", {"lam": [0.5, 1.0], "gamma": [2.0]})
    assert grid.grid == {"lam": (0.5, 1.0), "gamma": (2.0,)}
    assert grid.split_param is None and grid.split_values == ()


def test_the_staged_form_keeps_the_trade_off_stages_with_the_user_grid():
    grid = resolve_grid("qs3orao", {"staged": {"lam": [0.5, 1.0], "gamma": [2.0]}})
    registered = tuning_grid("qs3orao")
    assert grid.grid == {"lam": (0.5, 1.0), "gamma": (2.0,)}
    assert (grid.split_param, grid.split_values, grid.split_default, grid.separable, grid.per_split) == (
        "tradeoff", TRADEOFF_GRID, registered.split_default, False, True)
    shrunk = resolve_grid("m-samult", {"staged": {"lam": [1.0]}, "split_values": [0.0, 1.0], "per_split": False})
    assert shrunk.split_values == (0.0, 1.0) and not shrunk.per_split and shrunk.separable
    # the kernel-width scaling keeps every field
    scaled = scaled_grid(resolve_grid("qs3orao", {"staged": {"gamma": [1.0, 2.0]}, "per_split": False}), 4.0)
    assert scaled.grid["gamma"] == (4.0, 8.0) and not scaled.per_split and scaled.split_param == "tradeoff"


def test_split_values_need_a_method_with_split_weights():
    with pytest.raises(ValueError, match="split weights"):
        resolve_grid("svorex", {"staged": {"C": [1.0]}, "split_values": [0.5]})


def test_the_schema_takes_the_staged_form_and_early_stopping_and_rejects_mixtures(tiny_config):
    def staged(config):
        config["methods"]["qs3orao"]["grid"] = {"staged": {"lam": [1.0, 2.0]}, "split_values": [0.0, 0.5],
                                                "per_split": False}
        config["tuning"]["early_stopping"] = {"eta": 2}
    config = tiny_config(staged=staged)
    assert halving(config["tuning"]["early_stopping"]) == Halving(eta=2, min_folds=1)
    check_methods(config, list(config["datasets"]))
    for bad in ({"staged": {"lam": [1.0]}, "lam": [2.0]}, {"staged": {"lam": [1.0]}, "per_split": "no"}):
        config["methods"]["qs3orao"]["grid"] = bad
        with pytest.raises(WorkflowError):
            validate(config, str(SCHEMA))
    config["methods"]["qs3orao"]["grid"] = {"lam": [1.0]}
    config["tuning"]["early_stopping"] = {"eta": 1}
    with pytest.raises(WorkflowError):
        validate(config, str(SCHEMA))


def test_early_stopping_is_off_unless_configured(tiny_config):
    config = tiny_config()
    assert config["tuning"]["early_stopping"] is None and halving(None) is None


@pytest.mark.parametrize("grid, key", [({"staged": {"lamda": [1.0]}}, "grid.lamda"),
                                       ({"staged": {"lam": [-1.0]}}, "grid.lam")])
def test_check_methods_names_the_bad_staged_value(grid, key, tiny_config):
    def bad(config):
        config["methods"]["qs3orao"]["grid"] = grid
    config = tiny_config(bad=bad)
    with pytest.raises(ValueError, match=key.split(".")[-1]):
        check_methods(config, list(config["datasets"]))


def tune_record(tmp_path, tiny_config, job, grid, **params):
    """The record of a ``tune`` job for QS3ORAO (40 iterations) on 300 generated rows, 90 labeled, 3 folds."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X.sum(axis=1), [0.8, 1.2])
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    config = tiny_config()
    spec = method_spec(config, "qs3orao", "swd")
    spec["params"] = {**spec["params"], "n_iter": 40}
    output = tmp_path / "tuned.json"
    tune_job(job(tmp_path, "tune", input={"X": str(tmp_path / "X.npy"), "y": str(tmp_path / "y.npy")},
                 output={"json": str(output)},
                 params={"spec": spec, "grid": grid, "n_labeled": 90, "n_unlabeled": "100", "n_folds": 3,
                         "early_stopping": None, "base_seed": 0, "kernel_width": "literal", **params},
                 wildcards={"dataset": "swd", "method": "qs3orao", "trial": "0"}))
    record = json.loads(output.read_text())
    assert record["status"] == "ok", record["reason"]
    return record


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_tune_job_records_early_stopping_and_the_folds_of_each_candidate(tmp_path, tiny_config, job):
    record = tune_record(tmp_path, tiny_config, job, {"staged": {"lam": [0.5, 1.0, 2.0, 4.0]},
                                                       "split_values": [0.0, 1.0], "per_split": False},
                         early_stopping={"eta": 2})
    assert record["early_stopping"] == {"eta": 2}
    folds = [row["n_folds"] for row in record["search"]]
    assert min(folds) < 3 and max(folds) == 3
    assert {row["stage"] for row in record["search"]} == {"grid", "shared"}
    # the paper's protocol (no grid_range) fits every candidate; its record has no round or fit columns
    assert all(not {"round", "fitted_folds"} & set(row) for row in record["search"])
    assert "whole_range" not in record  # and keeps the form it had before that option


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_widened_tune_job_records_every_round_and_fits_no_candidate_twice(tmp_path, tiny_config, job):
    far = [2.0 ** e for e in range(4, 11)]  # far above the optimum: the search moves down over overlapping windows
    record = tune_record(tmp_path, tiny_config, job, {"staged": {"lam": far}, "split_values": [0.0, 1.0],
                                                       "per_split": False},
                         grid_range={"lam": [-20, 12]})
    rounds = [row["round"] for row in record["search"]]
    assert len(record["rounds"]) >= 2 and sorted(set(rounds)) == list(range(1, len(record["rounds"]) + 1))
    seen = set()
    for round_, searched in enumerate(record["rounds"], 1):
        rows = [row for row in record["search"] if row["round"] == round_]
        assert {row["lam"] for row in rows if row["stage"] == "grid"} == set(searched["grid"]["lam"])
        for row in rows:
            candidate = (row["lam"], str(row["tradeoff"]))
            assert row["fitted_folds"] == (0 if candidate in seen else 3), (round_, candidate)
        seen |= {(row["lam"], str(row["tradeoff"])) for row in rows}
    assert any(row["fitted_folds"] == 0 for row in record["search"])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_tune_job_with_a_whole_range_searches_it_in_one_round_and_records_it(tmp_path, tiny_config, job):
    far = [2.0 ** e for e in range(4, 11)]  # the windowed search needs several rounds from here
    record = tune_record(tmp_path, tiny_config, job, {"staged": {"lam": far}, "split_values": [0.0, 1.0],
                                                       "per_split": False},
                         grid_range={"lam": [-6, 12]}, whole_range=["lam"])
    assert record["whole_range"] == ["lam"] and len(record["rounds"]) == 1
    assert record["rounds"][0]["grid"]["lam"] == [2.0 ** e for e in range(-6, 13)]
    assert {row["lam"] for row in record["search"] if row["stage"] == "grid"} == {2.0 ** e for e in range(-6, 13)}


def test_a_whole_range_needs_a_declared_range(tiny_config):
    def whole(config):
        config["methods"]["qs3orao"]["grid"] = "registry"
        config["methods"]["qs3orao"]["grid_range"] = {"lam": [-20, 3]}
        config["methods"]["qs3orao"]["whole_range"] = ["gamma"]
    config = tiny_config(whole=whole)
    with pytest.raises(ValueError, match="whole_range"):
        check_methods(config, list(config["datasets"]))
    config["methods"]["qs3orao"]["whole_range"] = ["lam"]
    check_methods(config, list(config["datasets"]))
    config["methods"]["qs3orao"]["whole_range"] = "lam"
    with pytest.raises(WorkflowError):
        validate(config, str(SCHEMA))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_progress_never_counts_past_its_total_in_a_widened_search(tmp_path, tiny_config, job):
    """Every round's total is that round's own bound: a whole range of 19 values, beyond the configured 7."""
    far = [2.0 ** e for e in range(4, 11)]
    tune_record(tmp_path, tiny_config, job, {"staged": {"lam": far}, "split_values": [0.0, 1.0], "per_split": False},
                grid_range={"lam": [-6, 12]}, whole_range=["lam"])
    counts = [tuple(map(int, found)) for found in
              re.findall(r"candidate (\d+) of at most (\d+)", (tmp_path / "logs" / "tune.log").read_text())]
    assert counts and all(done <= total for done, total in counts)
    assert "np." not in (tmp_path / "logs" / "tune.log").read_text()  # parameters are logged as plain numbers
    assert max(total for _, total in counts) == 19 + 2  # the whole range's candidates, then the split weights


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_widen_tolerance_is_recorded_and_stops_the_rounds(tmp_path, tiny_config, job):
    far = [2.0 ** e for e in range(4, 11)]  # the search moves down over several rounds from here
    grid = {"staged": {"lam": far}, "split_values": [0.0, 1.0], "per_split": False}
    plain = tune_record(tmp_path, tiny_config, job, grid, grid_range={"lam": [-20, 12]})
    assert "widen_tolerance" not in plain  # unset: the record keeps its form, the rounds run as before
    stopped = tune_record(tmp_path, tiny_config, job, grid, grid_range={"lam": [-20, 12]}, widen_tolerance=1.0)
    assert stopped["widen_tolerance"] == 1.0 and len(stopped["rounds"]) == 2 < len(plain["rounds"])
    assert "improves on the previous best by less than widen_tolerance 1" in (tmp_path / "logs" /
                                                                              "tune.log").read_text()


def test_a_widening_stopped_by_its_tolerance_marks_the_edge_it_leaves_settled(tmp_path, tiny_config, job, monkeypatch):
    """A search whose CV AUC creeps up by 1e-5 per halving of lam: with widen_tolerance 0.001 it stops after
    round 2 on the edge of what it searched (settled); without, it runs on to the declared limit (search limit)."""
    def creeping(method, X, y, grid, **kwargs):
        lam = min(grid.grid["lam"])
        return CVResult({"lam": lam}, 0.9 - 1e-5 * np.log2(lam), [])

    monkeypatch.setattr(tuning, "cross_validate_params", creeping)
    grid = {"staged": {"lam": [2.0 ** e for e in range(4, 11)]}, "split_values": [0.0, 1.0], "per_split": False}
    stopped = tune_record(tmp_path, tiny_config, job, grid, grid_range={"lam": [-20, 12]}, widen_tolerance=0.001)
    assert len(stopped["rounds"]) == 2 and stopped["best_params"] == {"lam": 2.0}
    [edge] = stopped["grid_edges"]
    assert edge_kind(edge) == "settled" and "moved the best CV AUC by +3e-05, less than widen_tolerance 0.001" in edge
    limit = tune_record(tmp_path, tiny_config, job, grid, grid_range={"lam": [-20, 12]})
    assert limit["best_params"] == {"lam": 2.0 ** -20} and [edge_kind(e) for e in limit["grid_edges"]] == ["search limit"]


def test_a_widened_limit_is_recorded_and_a_creeping_search_ends_past_it_settled(tmp_path, tiny_config, job,
                                                                                   monkeypatch):
    """A creeping search (CV AUC up 2e-4 per halving of lam) with lam's limit widened: round 2 goes 7 powers
    past 2^-20, gains 0.0014, less than widen_tolerance 0.002, and the edge it leaves is settled, not a
    search-limit hit."""
    def creeping(method, X, y, grid, **kwargs):
        lam = min(grid.grid["lam"])
        return CVResult({"lam": lam}, 0.9 - 2e-4 * np.log2(lam), [])

    monkeypatch.setattr(tuning, "cross_validate_params", creeping)
    grid = {"staged": {"lam": [2.0 ** e for e in range(-6, 1)]}, "split_values": [0.0, 1.0], "per_split": False}
    record = tune_record(tmp_path, tiny_config, job, grid, grid_range={"lam": [-20, 3]}, whole_range=["lam"],
                         widen_tolerance=0.002, widen_limits=["lam"])
    assert record["widen_limits"] == ["lam"]
    assert len(record["rounds"]) == 2 and record["best_params"] == {"lam": 2.0 ** -27}
    [edge] = record["grid_edges"]
    assert edge_kind(edge) == "settled" and "less than widen_tolerance 0.002" in edge


def test_widened_limits_must_be_declared_and_stopped_by_a_tolerance(tiny_config):
    def widened(config):
        config["methods"]["qs3orao"].update(grid="registry", grid_range={"lam": [-20, 3]}, widen_limits=["gamma"],
                                            widen_tolerance=0.001)
    config = tiny_config(widened=widened)
    with pytest.raises(ValueError, match="methods.qs3orao.widen_limits"):
        check_methods(config, list(config["datasets"]))
    config["methods"]["qs3orao"]["widen_limits"] = ["lam"]
    check_methods(config, list(config["datasets"]))
    validate(config, str(SCHEMA))
    config["methods"]["qs3orao"]["widen_tolerance"] = None
    with pytest.raises(ValueError, match="positive widen_tolerance"):
        check_methods(config, list(config["datasets"]))
    config["methods"]["qs3orao"].update(widen_tolerance=0.001, widen_limits="lam")
    with pytest.raises(WorkflowError):
        validate(config, str(SCHEMA))


@pytest.mark.parametrize("tolerance", [0.001, None])
def test_the_schema_takes_a_widen_tolerance(tolerance, tiny_config):
    config = tiny_config()
    config["methods"]["qs3orao"].update(grid="registry", grid_range={"lam": [-20, 3]}, widen_tolerance=tolerance)
    validate(config, str(SCHEMA))
    config["methods"]["qs3orao"]["widen_tolerance"] = -1
    with pytest.raises(WorkflowError):
        validate(config, str(SCHEMA))


def test_a_widen_tolerance_needs_a_widened_search(tiny_config):
    def tolerance_alone(config):
        config["methods"]["qs3orao"].update(grid="registry", widen_tolerance=0.001)
    config = tiny_config(tolerance_alone=tolerance_alone)
    with pytest.raises(ValueError, match="methods.qs3orao.widen_tolerance"):
        check_methods(config, list(config["datasets"]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_tune_job_of_a_grouped_dataset_folds_by_group_without_the_group_column(tmp_path, tiny_config, job,
                                                                                  monkeypatch):
    rng = np.random.default_rng(0)
    subject = np.repeat(np.arange(30), 10)
    X = np.column_stack([rng.uniform(size=(300, 2)), subject])
    y = np.digitize(X[:, :2].sum(axis=1), [0.8, 1.2])
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    seen = []
    real = tuning.cross_validate_params
    monkeypatch.setattr(tuning, "cross_validate_params",
                        lambda name, X, y, grid, **kw: seen.append((X, kw["groups"])) or real(name, X, y, grid, **kw))
    spec = method_spec(tiny_config(), "qs3orao", "swd")
    spec["params"] = {**spec["params"], "n_iter": 40}
    output = tmp_path / "tuned.json"
    tune_job(job(tmp_path, "tune", input={"X": str(tmp_path / "X.npy"), "y": str(tmp_path / "y.npy")},
                 output={"json": str(output)},
                 params={"spec": spec, "grid": {"lam": [1.0]}, "n_labeled": 60, "n_unlabeled": "100", "n_folds": 3,
                         "early_stopping": None, "base_seed": 0, "kernel_width": "literal", "group_column": 2},
                 wildcards={"dataset": "swd", "method": "qs3orao", "trial": "0"}))
    assert json.loads(output.read_text())["status"] == "ok"
    split = semisupervised_split(y, n_labeled=60, seed=trial_seed("swd", 0, 0), n_unlabeled=100, groups=subject)
    features, groups = seen[0]
    np.testing.assert_array_equal(features, X[split.train_idx][:, :2])
    np.testing.assert_array_equal(groups, subject[split.train_idx])
