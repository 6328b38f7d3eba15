"""What a training job records: a failed search fails it with the reason, unless a fallback is declared, and
the fit's own warnings reach the record (library deprecations do not)."""

import json
import logging
import warnings

import numpy as np
import pytest

from qs3study.stages import training


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
