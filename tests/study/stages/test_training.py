"""A training job (qs3study.stages.training.fit_and_score): what it evaluates, and the labels it scores."""

import logging

import numpy as np
import pytest

from baselines.registry import get_method, make_method
from qs3study.datasets import equal_frequency_bins, make_latent_regression, semisupervised_split
from qs3orao.metrics import mean_absolute_error
from qs3study.stages.training import BeyondPool, fit_and_score

N_LABELED = 100
SPECS = {
    # fitted on every row: the AUC and the labels come from the fit's own scores
    "qs3orao": ({"n_iter": 200, "n_components": 8, "gamma": 0.5, "lam": 0.01, "step_offset": "auto",
                 "random_state": 0}, 0),
    # fitted on the labeled rows: one timed evaluation of the unlabeled rows gives both
    "svorex": ({"gamma": 0.5, "C": 1.0}, 1),
}


@pytest.fixture
def data(tmp_path):
    X, target = make_latent_regression(400, 4, random_state=0)
    y, _ = equal_frequency_bins(target, 3)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y.astype(np.int64))
    return tmp_path / "X.npy", tmp_path / "y.npy", X, y


@pytest.mark.parametrize("method", sorted(SPECS))
def test_a_job_evaluates_the_model_at_most_once_and_labels_what_it_ranks(data, monkeypatch, method):
    X_path, y_path, X, y = data
    params, evaluations = SPECS[method]
    cls = get_method(method).estimator
    calls = []
    original = cls.decision_function
    monkeypatch.setattr(cls, "decision_function", lambda self, rows: calls.append(len(rows)) or original(self, rows))
    spec = {"method": method, "params": params, "memory_budget_mb": 512}
    record = {"seed": 0, "size": "200", "warnings": []}
    fit_and_score(X_path, y_path, spec, {}, record, logging.getLogger("t"), n_labeled=N_LABELED)
    assert record["status"] == "ok" and len(calls) == evaluations
    # The labels the record scores are those predict gives the unlabeled rows.
    split = semisupervised_split(y, n_labeled=N_LABELED, seed=0, n_unlabeled=200)
    X_train, labeled = X[split.train_idx], split.labeled_mask
    fit_rows = labeled if get_method(method).labeled_only else slice(None)
    model = make_method(method, **params).fit(X_train[fit_rows], split.y_train[fit_rows])
    assert record["mae"] == mean_absolute_error(split.y_true[~labeled], model.predict(X_train[~labeled]))


def test_a_grouped_job_splits_by_its_group_column_fits_without_it_and_says_when_a_side_is_short(tmp_path):
    rng = np.random.default_rng(1)
    subject = np.repeat(np.arange(20), 20)
    X = np.column_stack([subject, rng.random((subject.size, 3))])
    y = np.arange(subject.size) % 3
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    spec = {"method": "svorex", "params": {"gamma": 0.5, "C": 1.0}, "memory_budget_mb": 512}
    record = {"seed": 0, "size": "150", "warnings": []}
    fit_and_score(tmp_path / "X.npy", tmp_path / "y.npy", spec, {}, record, logging.getLogger("t"),
                  n_labeled=60, group_column=0)
    assert record["status"] == "ok" and record["n_features"] == 3 and record["n_unlabeled"] == 150
    # the unlabeled side's 10 subjects hold 200 rows, not the 340 a row split leaves
    with pytest.raises(BeyondPool, match="n_unlabeled=201 rows requested, but the unlabeled side's 10 of 20 "
                                         "groups hold 200 rows"):
        fit_and_score(tmp_path / "X.npy", tmp_path / "y.npy", spec, {}, {**record, "size": "201"},
                      logging.getLogger("t"), n_labeled=60, group_column=0)
