"""Reliability of the pipeline: the plan refuses what the configuration alone decides,
failed searches never train silently, fit warnings and references reach the tables, Figure 2 stays legible.

The runs are tiny.
"""

import json
import logging
import tomllib
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

from qs3study.stages import figures, tables, training
from qs3study.configuration import check_methods
from test_local_data import write_csv_gz
from test_reliability_pipeline import tiny, validated, write_config
from test_workflow import REPO, snakemake

# --- values that fail every job are configuration errors at plan time ------------------------------

PLAN_ERRORS = [
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset="Auto"), "methods.qs3orao.params", "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset=-3), "methods.qs3orao.params", "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset=float("nan")), "methods.qs3orao.params",
     "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(tradeoff=1.5), "methods.qs3orao.params", "tradeoff"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(random_state="abc"), "methods.qs3orao.params",
     "random_state"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(classes=[0, 1]), "methods.qs3orao.params",
     "'classes' is not configurable"),
    (lambda c: c["methods"]["m-pnu-auc"]["params"].update(pnu_mix=5), "methods.m-pnu-auc.params", "pnu_mix"),
    (lambda c: c["methods"]["qs3orao"].update(grid={"step_offset": [0, "Auto"]}), "methods.qs3orao.grid.step_offset",
     "step_offset"),
]


@pytest.mark.parametrize("change, key, complaint", PLAN_ERRORS)
def test_values_that_fail_every_job_stop_the_plan(change, key, complaint):
    config = tiny()
    change(config)
    with pytest.raises(ValueError, match=f"configuration key '{key}'") as error:
        check_methods(validated(config), list(config["datasets"]))
    assert complaint in str(error.value)


def _local(tmp_path, name, **source):
    write_csv_gz(tmp_path / "houses.csv.gz", n=300)
    config = tiny()
    config["datasets"] = {name: {"source": {"path": str(tmp_path / "houses.csv.gz"), "format": "csv",
                                            "target": "price", **source}, "params": {"gamma": 1.0}}}
    config["sweep"] = {"datasets": "all", "n_unlabeled": [150]}
    config["protocol"]["n_unlabeled"] = 150
    return config


@pytest.mark.parametrize("name", ["Houses", "my-houses", "UCI-Protein"])
def test_a_dataset_name_the_pipeline_cannot_use_stops_even_a_dry_run(tmp_path, name):
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "-n", "--configfile", write_config(tmp_path, _local(tmp_path, name)), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"'{name}' does not match '^[a-z0-9_]+$'" in output and "lower-case letters, digits and '_'" in output


def test_review_columns_may_be_positions_in_the_schema():
    config = tiny()
    config["datasets"]["r"] = {"source": {"path": "r.csv", "format": "csv", "text": 1, "label": 0}}
    validated(config)


# --- a failed search never trains silently -----------------------------------------------------------

FAILED_SEARCH = {"status": "failed", "reason": "ValueError: split 3 has no positive row in fold 2", "best_params": {}}


def test_a_failed_search_fails_its_training_job_with_the_reason():
    failure, fallback = training.tuning_failure(FAILED_SEARCH, "fail")
    assert fallback is None and "tuning failed: ValueError: split 3 has no positive row" in failure
    assert "tuning.on_failure: configured" in failure


def test_a_declared_fallback_trains_and_says_so():
    failure, fallback = training.tuning_failure(FAILED_SEARCH, "configured")
    assert failure is None and "trained on the configured parameters (tuning.on_failure: configured)" in fallback
    assert training.tuning_failure({"status": "ok"}, "fail") == (None, None)


class _Job:
    """The parts of a Snakemake job object a training job reads."""

    def __init__(self, tmp_path, X, y, spec, tuned_file, on_failure, kernel_width="literal"):
        np.save(tmp_path / "X.npy", X)
        np.save(tmp_path / "y.npy", y)
        self.input = {"X": str(tmp_path / "X.npy"), "y": str(tmp_path / "y.npy"), "tuned": [tuned_file] if tuned_file else []}
        self.input = type("I", (dict,), {"__getattr__": dict.__getitem__})(self.input)
        self.log = [str(tmp_path / "train.log")]
        self.output = [str(tmp_path / "runs")]
        self.threads = 1
        self.wildcards = type("W", (), {"dataset": "d", "method": "m-pnu-auc", "size": "all"})
        self.params = type("P", (dict,), {"__getattr__": dict.__getitem__})(
            spec=spec, trials=[0], tuned=[tuned_file], n_labeled=60, base_seed=0, kernel_width=kernel_width,
            on_failure=on_failure)


def _data(n=200, scale=1.0):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, 3)) * scale
    return X, np.digitize(X.sum(axis=1) / scale, [1.0, 1.5, 2.0]).astype(np.int64)


def _train(tmp_path, on_failure, kernel_width="literal", scale=1.0):
    X, y = _data(scale=scale)
    (tmp_path / "tuned.json").write_text(json.dumps(FAILED_SEARCH))
    spec = {"method": "m-pnu-auc", "params": {"lam": 0.1}, "memory_budget_mb": 512}
    training.train_job(_Job(tmp_path, X, y, spec, str(tmp_path / "tuned.json"), on_failure, kernel_width))
    logging.shutdown()
    return json.loads((tmp_path / "runs" / "trial0.json").read_text())


def test_a_training_job_after_a_failed_search_is_failed(tmp_path):
    record = _train(tmp_path, "fail")
    assert record["status"] == "failed" and record["auc"] is None
    assert record["reason"].startswith("tuning failed: ValueError: split 3")


def test_the_fallback_gamma_is_on_the_data_scale(tmp_path):
    """M-PNU-AUC's registered gamma, used after a failed search, is relative under kernel_width: median."""
    record = _train(tmp_path, "configured", kernel_width="median", scale=100.0)
    assert record["status"] == "ok" and "tuning.on_failure: configured" in "; ".join(record["warnings"])
    assert record["params"]["gamma"] == 1.0 and record["gamma_absolute"] == pytest.approx(1.0 / record["gamma_scale"]
                                                                                           if record["gamma_scale"] > 1
                                                                                           else record["gamma_scale"])
    assert record["gamma_absolute"] < 1e-2  # features of size 100: an absolute width of 1 would be degenerate


# --- warnings of the fit and the constant reference reach the tables ---------------------------------

def test_warnings_raised_by_a_fit_are_recorded_but_library_deprecations_are_not():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("QS3ORAO ended after 60 iterations", RuntimeWarning)
        warnings.warn("QS3ORAO ended after 60 iterations", RuntimeWarning)
        warnings.warn("the disp option is deprecated", DeprecationWarning)
    assert training.fit_warnings(caught) == ["RuntimeWarning: QS3ORAO ended after 60 iterations"]


def test_a_fit_warning_lands_in_the_record(tmp_path, monkeypatch):
    from baselines.pnu_auc import MPNUAUC

    original = MPNUAUC.fit

    def warning_fit(self, X, y):
        warnings.warn("labeled scores decrease with the class", UserWarning)
        return original(self, X, y)

    monkeypatch.setattr(MPNUAUC, "fit", warning_fit)
    X, y = _data()
    spec = {"method": "m-pnu-auc", "params": {"lam": 0.1}, "memory_budget_mb": 512}
    training.train_job(_Job(tmp_path, X, y, spec, None, "fail"))
    logging.shutdown()
    record = json.loads((tmp_path / "runs" / "trial0.json").read_text())
    assert record["status"] == "ok" and "UserWarning: labeled scores decrease with the class" in record["warnings"]
    labeled_majority = np.bincount(y[:60]).argmax()  # the split is random: check the bounds only
    assert 0 <= record["constant_accuracy"] <= 1 and record["constant_mae"] >= 0 and labeled_majority >= 0


def _results(rows):
    base = {"size": "all", "comparison": True, "n_unlabeled": 100, "warnings": "", "status": "ok"}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_the_auc_table_marks_the_best_and_shows_mae_accuracy_and_the_constant_reference():
    rows = []
    for trial in range(2):
        rows += [{"dataset": "d", "method": "a", "trial": trial, "auc": 0.8 + trial / 100, "mae": 0.5, "accuracy": 0.6,
                  "constant_mae": 0.48, "constant_accuracy": 0.689},
                 {"dataset": "d", "method": "b", "trial": trial, "auc": 0.7, "mae": 0.7, "accuracy": 0.5,
                  "constant_mae": 0.48, "constant_accuracy": 0.689, "warnings": "UserWarning: x"}]
    summary = tables.auc_summary(_results(rows), "a", ["a", "b"])
    assert summary.set_index("method")["best"].to_dict() == {"a": True, "b": False}
    text = tables.summary_markdown(summary, "a", {"a": "A", "b": "B"})
    header, _, line = text.splitlines()[:3]
    assert header.endswith("| constant (majority class) |")
    assert "**0.8050 ± 0.0071**; MAE 0.500, acc. 0.600" in line
    assert "[2 warned]; MAE 0.700, acc. 0.500" in line and "MAE 0.480, acc. 0.689" in line


def test_the_auc_table_marks_a_mean_over_only_some_of_the_trials():
    rows = [{"dataset": "d", "method": method, "trial": trial, "auc": 0.8 + trial / 100, "mae": 0.5, "accuracy": 0.6}
            for trial in range(4) for method in ("a", "b")]
    rows[-1].update(status="failed", auc=np.nan, mae=np.nan, accuracy=np.nan)  # b's trial 3 was killed
    summary = tables.auc_summary(_results(rows), "a", ["a", "b"])
    text = tables.summary_markdown(summary, "a", {"a": "A", "b": "B"})
    cells = text.splitlines()[2].split(" | ")
    assert "of 4" not in cells[2] and cells[3].startswith("0.8100 ± 0.0100 [3 of 4 trials finished; failed: 1]")
    assert "[k of n trials finished" in text
    complete = tables.summary_markdown(tables.auc_summary(_results(rows[:-2]), "a", ["a", "b"]), "a",
                                       {"a": "A", "b": "B"})
    assert "trials finished" not in complete


# --- Figure 2 ----------------------------------------------------------------------------------------

def _drawn(monkeypatch):
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, paths: drawn.setdefault("fig", fig))
    return drawn


def test_figure_2_when_every_sweep_point_failed_says_so(monkeypatch, tmp_path):
    drawn = _drawn(monkeypatch)
    table = pd.DataFrame([("a", "100", 100, "failed", None), ("a", "200", None, "failed", None)],
                         columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A"}, [tmp_path / "f.png"])
    drawn["fig"].canvas.draw()
    assert "no finished run" in drawn["fig"].axes[0].get_title()
    matplotlib.pyplot.close(drawn["fig"])


def test_figure_2_every_point_failed_writes_a_file(tmp_path):
    table = pd.DataFrame([("a", "100", 100, "failed", None)],
                         columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A"}, [tmp_path / "f.png"])
    assert (tmp_path / "f.png").stat().st_size > 0


def test_figure_2_ticks_titles_and_markers_stay_legible(monkeypatch, tmp_path):
    drawn = _drawn(monkeypatch)
    rows = [(m, str(n), n, "ok", 0.1 * n / 2000) for m in "abcde" for n in (2000, 3000, 4000)]
    rows += [(m, str(n), n, "ok", 1.0) for m in "abcde" for n in (1000, 5000, 6408)]
    table = pd.DataFrame(rows, columns=["method", "size", "n_unlabeled", "status", "fit_time"])
    table["dataset"] = np.where(table["n_unlabeled"].isin([2000, 3000, 4000]), "d", "e")
    title = "a rather long dataset title (substitute of a paper dataset)"
    figures.time_vs_unlabeled(table, ["d", "e"], {m: m.upper() for m in "abcde"}, [tmp_path / "f.png"],
                              {"d": title, "e": title})
    fig = drawn["fig"]
    fig.canvas.draw()
    for ax in fig.axes[:2]:
        labels = [t for t in ax.get_xticklabels() if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0]
                  <= ax.get_xlim()[1]]
        boxes = [t.get_window_extent() for t in labels]
        assert len(boxes) >= 2 and all(not a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    assert not fig.axes[0].title.get_window_extent().overlaps(fig.axes[1].title.get_window_extent())
    styles = figures.method_styles(list("abcdefghij"))
    assert not {s["marker"] for s in styles.values()} & set(figures.UNFINISHED.values())
    matplotlib.pyplot.close(fig)


# --- a failed prepare job says why, in Snakemake's own output ----------------------------------------

def test_a_failed_prepare_job_shows_its_reason_with_dataset_path_and_line(tmp_path):
    config = _local(tmp_path, "houses")
    path = tmp_path / "houses.csv"
    lines = ["a,b,price"] + [f"{i % 7},{i % 11},{i}" for i in range(300)]
    lines[8] = "1,2,five"
    path.write_text("\n".join(lines) + "\n")
    config["datasets"]["houses"]["source"]["path"] = str(path)
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "results/data/houses/y.npy", "--configfile", write_config(tmp_path, config),
                       check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "dataset 'houses' (datasets.houses.source.path: " in output and str(path) in output
    assert "line 9, column 'price': 'five' is not a number" in output and "logs/prepare/houses.log" in output


def test_the_report_holds_the_results_claims_and_manifest_of_its_configuration():
    rules = (REPO / "workflow" / "rules" / "figures.smk").read_text()
    for output in ('report(f"{FIGURES}/results.csv"', 'report(f"{FIGURES}/empirical_claims.csv"',
                   'report(f"{FIGURES}/manifest.json"'):
        assert output in rules
    text = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    assert "figures/manifest.json" not in text and 'figures/{{ snakemake.config["name"] }}/manifest.json' in text
    workflow_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["workflow"]
    assert any(requirement.startswith("pygments") for requirement in workflow_extra)


# --- tune jobs log progress with a time estimate -----------------------------------------------------

def test_a_search_logs_every_candidate_with_the_time_left(caplog):
    from baselines.model_selection import cross_validate_params
    from baselines.registry import tuning_grid
    from qs3study.stages.tuning import SearchProgress, candidate_bound

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


@pytest.mark.parametrize("policy", ["refuse", "drop", "keep"])
def test_the_schema_declares_what_to_do_with_records_without_text(policy):
    config = tiny()
    config["datasets"]["r"] = {"source": {"path": "r.jsonl", "format": "json-lines", "text": "body",
                                          "label": "stars", "empty_text": policy}}
    validated(config)
