"""The study package without Snakemake: one precedence rule, tuning and training agree, a method added at run time."""

import json

import numpy as np
import pandas as pd
import pytest

from baselines.registry import METHODS, Method, TuningGrid, get_method, register, unregister
from qs3orao.base import OrdinalEstimator
from qs3orao.thresholds import fit_thresholds
from qs3orao.validation import UNLABELED, check_semisupervised
from qs3study.stages import figures, tables
from qs3study.configuration import build_estimator, method_config, method_spec
from qs3study.stages.data import prepare_job
from qs3study.stages.training import train_job
from qs3study.grids import resolve_grid
from qs3study.stages.tuning import fixed_params, tune_job


# --- the precedence rule ---------------------------------------------------------------------

def test_method_params_win_over_dataset_params_and_tuned_values_over_both(tiny_config):
    def overlap(config):
        config["datasets"]["swd"]["params"] = {"gamma": 0.5, "lam": 3.0}
        config["methods"]["qs3orao"]["params"]["gamma"] = 2.0
    config = tiny_config(overlap=overlap)
    spec = method_spec(config, "qs3orao", "swd")
    assert spec["params"]["gamma"] == 2.0 and spec["params"]["lam"] == 0.1
    estimator, recorded = build_estimator(spec, seed=7, tuned={"lam": 0.5})
    assert estimator.gamma == 2.0 and estimator.lam == 0.5 and estimator.random_state == 7
    assert recorded == {**spec["params"], "lam": 0.5}


def test_a_dataset_parameter_reaches_only_the_methods_that_take_it(tiny_config):
    def svorex(config):
        config["methods"]["svorex"] = {"method": "svorex", "params": {}}
        config["datasets"]["swd"]["params"] = {"gamma": 0.5, "lam": 3.0}
    config = tiny_config(svorex=svorex)
    assert method_spec(config, "svorex", "swd")["params"] == {"gamma": 0.5}


def test_the_configured_random_state_and_budget_are_never_replaced(tiny_config):
    config = tiny_config(fix=lambda c: c["methods"]["m-pnu-auc"]["params"].update(random_state=3,
                                                                                   memory_budget=10**6))
    spec = method_spec(config, "m-pnu-auc", "swd")
    estimator, _ = build_estimator(spec, seed=99)
    assert estimator.random_state == 3 and estimator.memory_budget == 10**6
    grid = resolve_grid(spec["method"], method_config(config, "m-pnu-auc")["grid"])
    assert fixed_params(spec, grid, seed=99)["random_state"] == 3


def test_a_tuned_value_that_is_not_a_parameter_is_an_error(tiny_config):
    spec = method_spec(tiny_config(), "qs3orao", "swd")
    with pytest.raises(ValueError, match="lamda"):
        build_estimator(spec, seed=0, tuned={"lamda": 1.0})


@pytest.mark.parametrize("label", ["qs3orao", "m-pnu-auc"])
def test_tuning_and_training_build_the_same_estimator(label, tiny_config):
    config = tiny_config()
    spec = method_spec(config, label, "synthetic")
    grid = resolve_grid(spec["method"], method_config(config, label)["grid"] or {"lam": [0.5]})
    candidate = {name: values[0] for name, values in grid.grid.items()}
    # What a cross-validation fit is built from (baselines.model_selection) ...
    tuned_fit = get_method(spec["method"]).estimator(**fixed_params(spec, grid, seed=11), **candidate)
    # ... and what training builds once the candidate has won.
    trained, _ = build_estimator(spec, seed=11, tuned=candidate)
    assert tuned_fit.get_params() == trained.get_params()


# --- a method registered at run time ----------------------------------------------------------

class RidgeRanker(OrdinalEstimator):
    """Toy method: ridge regression of the class codes on the labeled rows, thresholds by the hinge LP."""

    def __init__(self, *, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y):
        X, codes, self.classes_, _ = check_semisupervised(X, y, tradeoff=1.0)
        labeled = codes != UNLABELED
        A = X[labeled]
        self.coef_ = np.linalg.solve(A.T @ A + self.alpha * np.eye(A.shape[1]), A.T @ codes[labeled])
        self.thresholds_ = fit_thresholds(A @ self.coef_, codes[labeled], self.classes_.size, "hinge")
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        return self._check_X(X) @ self.coef_


@pytest.fixture
def ridge_method():
    register(Method("ridge", RidgeRanker, TuningGrid({"alpha": (0.1, 10.0)}), "Ridge", "a toy ridge ranker",
                    labeled_only=True))
    yield METHODS["ridge"]
    unregister("ridge")


def test_a_method_registered_at_run_time_runs_through_tuning_training_table_and_figures(tmp_path, ridge_method,
                                                                                           tiny_config, job):
    def only_ridge(config):
        config["datasets"] = {"swd": {"params": {"gamma": 0.5}}}
        config["methods"] = {"qs3orao": config["methods"]["qs3orao"],
                             "ridge": {"method": "ridge", "grid": "registry"}}
    config = tiny_config(only_ridge=only_ridge)
    data = {name: str(tmp_path / "data" / f"{name}") for name in ("X.npy", "y.npy", "info.json", "checks.csv")}
    prepare_job(job(tmp_path, "prepare", output={"X": data["X.npy"], "y": data["y.npy"], "info": data["info.json"],
                                                 "checks": data["checks.csv"]},
                    params={"options": config["datasets"]["swd"], "cache_dir": str(tmp_path / "resources"),
                            "mirror": None, "seed": 0, "sha256": None, "protocol": config["protocol"],
                            "checks": config["data_checks"]}, wildcards={"dataset": "swd"}))
    results = []
    for label in config["methods"]:
        spec = method_spec(config, label, "swd")
        grid = method_config(config, label)["grid"]
        tuned = [None, None]
        for trial in range(2) if grid is not None else ():
            tuned[trial] = str(tmp_path / "tuning" / f"{label}{trial}.json")
            tune_job(job(tmp_path, "tune", input={"X": data["X.npy"], "y": data["y.npy"]}, output={"json": tuned[trial]},
                         params={"spec": spec, "grid": grid, "n_labeled": 100, "n_unlabeled": "100",
                                 "n_folds": 2, "early_stopping": None, "base_seed": 0,
                                 "kernel_width": "literal"},
                         wildcards={"dataset": "swd", "method": label, "trial": str(trial)}))
            tune_output = json.loads(open(tuned[trial]).read())
            assert tune_output["status"] == "ok" and set(tune_output["best_params"]) == {"alpha"}
            assert tune_output["job_cpu_s"] > 0
        folder = tmp_path / "runs" / label
        smk = job(tmp_path, "train", input={"X": data["X.npy"], "y": data["y.npy"]}, output=[str(folder)],
                  params={"spec": spec, "trials": [0, 1], "tuned": tuned, "n_labeled": 100, "base_seed": 0,
                          "kernel_width": "literal"},
                  wildcards={"dataset": "swd", "method": label, "size": "all"})
        train_job(smk)
        results += [folder / f"trial{trial}.json" for trial in range(2)]
        assert json.loads((folder / "batch.json").read_text())["trials"] == [0, 1]
    table = tables.build_results(results, {"swd": "all"})
    ridge = table[table["method"] == "ridge"]
    assert (ridge["status"] == "ok").all() and ridge["tuned"].all() and ridge["auc"].between(0.5, 1).all()
    assert (ridge["n_labeled"] == 100).all()
    # each trial's process: its CPU time as it measured itself, its wall time as its job measured it
    assert (table["job_cpu_s"] > 0).all() and (table["trial_wall_s"] > 0).all()
    path = tmp_path / "results.csv"
    table.to_csv(path, index=False)
    labels = {label: method_config(config, label)["label"] for label in config["methods"]}
    assert labels["ridge"] == "Ridge"  # the registered label, since the configuration gives none
    for rule, name in (("figure_time", "fig2.png"), ("figure_auc", "fig3.png")):
        figures.figure_job(job(tmp_path, rule, input={"table": str(path)}, output={"png": str(tmp_path / name)},
                               params={"datasets": ["swd"], "labels": labels}))
        assert (tmp_path / name).stat().st_size > 0
    figures.figure_job(job(tmp_path, "auc_table", input={"table": str(path)},
                           output={"md": str(tmp_path / "auc.md"), "csv": str(tmp_path / "auc.csv")},
                           params={"labels": labels, "reference": "qs3orao"}))
    summary = pd.read_csv(tmp_path / "auc.csv")
    assert set(summary["method"]) == {"qs3orao", "ridge"} and "Ridge" in (tmp_path / "auc.md").read_text()


def test_a_dataset_prepared_from_the_cache_is_prepared_identically(tmp_path, tiny_config, job):
    # The second preparation reads the first one's cache entry; the prepared files must not say so, or a
    # run restored on another machine (qs3study.tools.run_archive) finds its prepared data changed.
    config = tiny_config()
    prepared = []
    for name in ("first", "second"):
        data = {f: str(tmp_path / name / f) for f in ("X.npy", "y.npy", "info.json", "checks.csv")}
        prepare_job(job(tmp_path, "prepare", output={"X": data["X.npy"], "y": data["y.npy"],
                                                     "info": data["info.json"], "checks": data["checks.csv"]},
                        params={"options": config["datasets"]["swd"], "cache_dir": str(tmp_path / "resources"),
                                "mirror": None, "seed": 0, "sha256": None, "protocol": config["protocol"],
                                "checks": config["data_checks"]}, wildcards={"dataset": "swd"}))
        prepared.append({f: (tmp_path / name / f).read_bytes() for f in data})
    assert list((tmp_path / "resources").rglob("*.npz"))  # the second preparation had a cache entry to read
    assert prepared[0] == prepared[1]
