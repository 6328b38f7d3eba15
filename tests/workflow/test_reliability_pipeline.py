"""Reliability of the pipeline's plan: bad values stop the plan, sizes follow the rows loaded.

* A dataset-level parameter no configured method takes (``gama``) is a configuration error.
* Invalid values (``lam: -0.1``, ``C: 'abc'``, a grid value, ``n_labeled`` over a dataset's
  rows) stop the plan before any job runs, with an error naming the key; each method's
  values are checked by its own estimator's parameter checks, without fitting.
* Sizes the plan cannot know (a local file) are checked by the prepare job on the rows it
  loaded: a clear error and a non-zero exit, not a table of failed rows.
* A sweep size over the rows actually loaded is recorded as ``beyond_pool``, not run and
  not failed; Figure 2 marks every failed or budget-stopped point.
"""

import copy

import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from qs3study.stages import figures, tables
from qs3study.configuration import check_methods, check_rows
from test_local_data import write_csv_gz
from test_workflow import CONFIGS, TINY, snakemake


def validated(config):
    config = copy.deepcopy(config)
    validate(config, str(CONFIGS / "schema.yaml"))  # fills the schema's defaults, as the Snakefile does
    return config


def tiny():
    return yaml.safe_load(TINY.read_text())


def add_svorex(config, **params):
    config["methods"]["svorex"] = {"method": "svorex", "params": params}


BAD_VALUES = [
    # (change, key named, word of the estimator's complaint)
    (lambda c: c["datasets"]["swd"]["params"].update(gama=0.5), "datasets.swd.params", "gama"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(lam=-0.1), "methods.qs3orao.params", "lam must be > 0"),
    (lambda c: add_svorex(c, C="abc"), "methods.svorex.params", "C must be a positive number"),
    (lambda c: c["datasets"]["swd"]["params"].update(gamma=-1.0), "datasets.swd.params", "gamma must be > 0"),
    (lambda c: c["methods"]["m-pnu-auc"].update(grid={"lam": [0.1, -1.0]}), "methods.m-pnu-auc.grid.lam",
     "lam must be > 0"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(n_iter=2.5), "methods.qs3orao.params", "n_iter"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(trig_backend="cuda"), "methods.qs3orao.params",
     "trig_backend"),
]


@pytest.mark.parametrize("change, key, complaint", BAD_VALUES)
def test_a_bad_method_value_is_a_configuration_error_naming_the_key(change, key, complaint):
    config = tiny()
    change(config)
    with pytest.raises(ValueError, match=f"configuration key '{key}'") as error:
        check_methods(validated(config), list(config["datasets"]))
    assert complaint in str(error.value)


@pytest.mark.parametrize("change, key", [
    (lambda c: c["methods"]["qs3orao"]["params"].update(max_memory=float("nan")), "methods.qs3orao.params.max_memory"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(max_memory=float("inf")), "methods.qs3orao.params.max_memory"),
    (lambda c: c["datasets"]["swd"]["params"].update(max_memory=float("nan")), "datasets.swd.params.max_memory"),
    (lambda c: add_svorex(c, memory_budget=-1), "methods.svorex.params.memory_budget"),
    (lambda c: c["protocol"].update(memory_budget_mb=float("nan")), "protocol.memory_budget_mb"),
    (lambda c: c["protocol"].update(memory_budget_mb=float("inf")), "protocol.memory_budget_mb"),
])
def test_a_memory_budget_must_be_a_finite_positive_number(change, key):
    config = tiny()
    change(config)
    with pytest.raises(ValueError, match=f"configuration key '{key}': .*finite positive number"):
        check_methods(validated(config), list(config["datasets"]))


def test_an_absent_or_null_memory_budget_is_accepted():
    config = tiny()
    add_svorex(config, memory_budget=None)
    check_methods(validated(config), list(config["datasets"]))


@pytest.mark.parametrize("name", ["default", "paper"])
def test_the_shipped_configurations_pass(name):
    config = validated(yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()))
    check_methods(config, list(config["datasets"]))


def test_a_dataset_parameter_taken_by_some_configured_method_is_accepted():
    config = tiny()
    add_svorex(config, C=1.0)
    config["datasets"]["swd"]["params"]["C"] = 2.0  # SVOREX takes C; QS3ORAO and M-PNU-AUC do not
    check_methods(validated(config), ["swd"])


@pytest.mark.parametrize("protocol, options, key", [
    ({"n_labeled": 1000, "n_unlabeled": 10}, {}, "protocol.n_labeled"),
    ({"n_labeled": 100, "n_unlabeled": 901}, {}, "protocol.n_unlabeled"),
    ({"n_labeled": 100, "n_unlabeled": 10}, {"n_unlabeled": 950}, "datasets.swd.n_unlabeled"),
])
def test_sizes_over_the_rows_name_their_key(protocol, options, key):
    with pytest.raises(ValueError, match=f"configuration key '{key}'"):
        check_rows("swd", 1000, protocol, options)


def test_sizes_that_fit_pass():
    check_rows("swd", 1000, {"n_labeled": 100, "n_unlabeled": 900}, {})
    check_rows("swd", 1000, {"n_labeled": 999, "n_unlabeled": 5000}, {"n_unlabeled": "all"})


def write_config(tmp_path, config, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("change, key, complaint", [
    BAD_VALUES[0], BAD_VALUES[1], BAD_VALUES[2],
    (lambda c: c["protocol"].update(n_labeled=1000), "protocol.n_labeled", "swd"),  # swd has 1000 rows
])
def test_the_plan_stops_before_any_job_runs(tmp_path, change, key, complaint):
    config = tiny()
    change(config)
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "--configfile", write_config(tmp_path, config), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"configuration key '{key}'" in output and complaint in output
    assert not (workdir / "results").exists() and not (workdir / "logs").exists()


def local_config(tmp_path, n_rows, *, n_labeled, n_unlabeled, sweep):
    write_csv_gz(tmp_path / "houses.csv.gz", n=n_rows)
    return {
        "name": "local",
        "data": {"cache_dir": "resources", "mirror": None},
        "datasets": {"houses": {"source": {"path": str(tmp_path / "houses.csv.gz"), "format": "csv",
                                           "target": "price"}, "params": {"gamma": 1.0}}},
        "methods": {"qs3orao": {"method": "qs3orao", "params": {"n_iter": 40, "batch_size": 8, "lam": 0.1}}},
        "protocol": {"n_labeled": n_labeled, "n_unlabeled": n_unlabeled, "trials": 1},
        "sweep": {"datasets": ["houses"], "n_unlabeled": sweep},
        "tuning": {},
    }


def test_sizes_a_local_file_cannot_hold_stop_its_prepare_job(tmp_path):
    """The plan cannot know a local file's rows; prepare checks them and the run exits non-zero."""
    config = local_config(tmp_path, 150, n_labeled=100, n_unlabeled=200, sweep=[20])
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "--configfile", write_config(tmp_path, config), "--keep-going", check=False)
    log = (workdir / "logs" / "prepare" / "houses.log").read_text()
    assert result.returncode != 0
    assert "configuration key 'protocol.n_unlabeled'" in log and "150 rows leave 50" in log
    assert not (workdir / "results" / "data" / "houses" / "X.npy").exists()
    assert not (workdir / "results" / "runs").exists() and not (workdir / "results" / "tables").exists()


def test_a_sweep_size_over_the_rows_loaded_is_recorded_beyond_pool(tmp_path):
    """Sizes follow the rows loaded: a point over the pool is recorded with its reason; the run succeeds."""
    config = local_config(tmp_path, 300, n_labeled=100, n_unlabeled=100, sweep=[150, 1000, "all"])
    workdir = tmp_path / "run"
    workdir.mkdir()
    snakemake(workdir, "--configfile", write_config(tmp_path, config), "--keep-going")
    table = tables.read_results(workdir / "results" / "tables" / "results.csv").set_index("size")
    assert table.loc["1000", "status"] == "beyond_pool"
    assert "300 loaded rows leave 200" in table.loc["1000", "reason"]
    assert (table.drop(index="1000")["status"] == "ok").all()
    assert table.loc["all", "n_unlabeled"] == 200


def test_figure_2_marks_every_failed_or_budget_stopped_point(monkeypatch, tmp_path):
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, paths: drawn.setdefault("fig", fig))
    rows = [("a", "100", 100, "ok", 1.0), ("a", "200", 200, "ok", 2.0), ("a", "400", 400, "failed", None),
            ("b", "100", 100, "ok", 1.5), ("b", "200", 200, "out_of_memory_budget", None),
            ("b", "400", 400, "out_of_memory_budget", None),
            ("c", "100", None, "failed", None),  # failed before its split: placed at its size
            ("c", "all", None, "failed", None),  # placed at the largest pool of the panel
            ("a", "800", None, "beyond_pool", None)]  # not run: not drawn
    table = pd.DataFrame(rows, columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A", "b": "B", "c": "C"}, [tmp_path / "f.png"])
    ax = drawn["fig"].axes[0]
    marks = {(line.get_marker(), x) for line in ax.get_lines() if line.get_transform() != ax.transData
             for x in line.get_xdata()}
    assert marks == {("v", 400), ("x", 200), ("x", 400), ("v", 100)}
    # Before the fix no failed point was drawn at all, and only the first budget stop of a method.
    assert not any(800 in np.atleast_1d(line.get_xdata()) for line in ax.get_lines())
    matplotlib.pyplot.close(drawn["fig"])
