"""A training job's trials, each in a process forked from the job's (qs3study.runtime.run_forked, training.train_job)."""

import json
import logging
import os
import shutil
import signal
import time
from types import SimpleNamespace

import numpy as np
import pytest

from qs3study.stages import training
from qs3study.runtime import peak_rss_mb, run_forked
from qs3study.stages.tables import MEASUREMENT_COLUMNS

SPEC = {"method": "m-pnu-auc", "params": {"lam": 0.1}, "memory_budget_mb": 512}


def _job(tmp_path, trials, folder="runs"):
    """The parts of a Snakemake job object a training job reads: one method, one size, the trials given."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 3))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", np.digitize(X.sum(axis=1), [1.0, 1.5, 2.0]).astype(np.int64))
    params = dict(spec=SPEC, trials=list(trials), tuned=[None] * len(trials), n_labeled=60, base_seed=0,
                  kernel_width="literal", on_failure="fail")
    return SimpleNamespace(input=SimpleNamespace(X=str(tmp_path / "X.npy"), y=str(tmp_path / "y.npy")),
                           log=[str(tmp_path / f"{folder}.log")], output=[str(tmp_path / folder)], threads=1,
                           wildcards=SimpleNamespace(dataset="d", method="m-pnu-auc", size="100"),
                           params=SimpleNamespace(**params, get=params.get))


def _train(tmp_path, trials, folder="runs"):
    training.train_job(_job(tmp_path, trials, folder))
    logging.shutdown()
    return [json.loads((tmp_path / folder / f"trial{trial}.json").read_text()) for trial in trials]


def _before_fit(monkeypatch, action):
    """Make each trial's process call ``action(record)`` before it fits."""
    original = training.fit_and_score

    def fit_and_score(X_path, y_path, spec, tuned, record, log, **kwargs):
        action(record)
        return original(X_path, y_path, spec, tuned, record, log, **kwargs)

    monkeypatch.setattr(training, "fit_and_score", fit_and_score)


def _dies_on(trial):
    """An action for :func:`_before_fit`: the process of ``trial`` is killed as the out-of-memory killer would."""
    def action(record):
        if record["trial"] == trial:
            os.kill(os.getpid(), signal.SIGKILL)
    return action


def test_a_child_reports_its_own_memory_peak_and_cpu_not_its_parents():
    np.ones(300 * 2**20 // 8)  # the parent's peak: 300 MiB more than the child will ever hold
    parent_peak = peak_rss_mb()

    def child():
        busy = time.process_time() + 0.2
        while time.process_time() < busy:
            pass
        np.ones(50 * 2**20 // 8)

    end = run_forked(child)
    assert end.exit_code == 0 and end.failure is None
    assert 50 < end.max_rss_mb < parent_peak - 200
    assert 0.2 <= end.cpu_s < 5 and end.wall_s >= end.cpu_s * 0.5


def test_a_child_that_raises_or_is_killed_says_how_it_ended(capfd):
    def raises():
        raise ValueError("no such trial")

    end = run_forked(raises)
    assert end.exit_code == 1 and end.failure == "its process exited with status 1"
    assert "ValueError: no such trial" in capfd.readouterr().err
    end = run_forked(lambda: os.kill(os.getpid(), signal.SIGKILL))
    assert end.exit_code == -signal.SIGKILL and "signal 9 (SIGKILL)" in end.failure and "out-of-memory" in end.failure


def test_an_interrupted_job_takes_its_trials_process_with_it(tmp_path):
    pid_file = tmp_path / "pid"

    def sleeper():
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(1)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_forked(sleeper)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ProcessLookupError):  # killed and waited for: no such process left
        os.kill(int(pid_file.read_text()), 0)


def test_a_batch_of_trials_gives_each_trial_what_it_gives_alone(tmp_path):
    together = _train(tmp_path, [0, 1, 2])
    alone = [_train(tmp_path, [trial], folder=f"runs/alone{trial}")[0] for trial in range(3)]
    measured = {*MEASUREMENT_COLUMNS, "versions"}
    for a, b in zip(together, alone):
        assert a["status"] == "ok"
        assert {k: v for k, v in a.items() if k not in measured} == {k: v for k, v in b.items() if k not in measured}
    assert len({record["seed"] for record in together}) == 3
    batch = json.loads((tmp_path / "runs" / "batch.json").read_text())
    assert batch["trials"] == [0, 1, 2] and batch["own_cpu_s"] > 0
    assert not list((tmp_path / "runs").glob(".*"))  # no child's scratch file left


def test_a_trial_whose_process_dies_is_recorded_failed_and_the_next_runs(tmp_path, monkeypatch):
    _before_fit(monkeypatch, _dies_on(1))
    records = _train(tmp_path, [0, 1, 2])
    assert [r["status"] for r in records] == ["ok", "failed", "ok"]
    assert records[1]["reason"].startswith("trial not finished: its process was ended by signal 9 (SIGKILL)")
    # what the dead process used, measured from outside
    assert records[1]["auc"] is None and records[1]["trial_wall_s"] > 0 and records[1]["peak_memory_mb"] > 0


def test_a_trials_memory_peak_is_its_own_not_an_earlier_trials(tmp_path, monkeypatch):
    original = training.fit_and_score

    def trial_0_allocates(X_path, y_path, spec, tuned, record, log, **kwargs):
        if record["trial"] == 0:
            np.ones(400 * 2**20 // 8)  # written, so resident, then freed
        return original(X_path, y_path, spec, tuned, record, log, **kwargs)

    monkeypatch.setattr(training, "fit_and_score", trial_0_allocates)
    first, second = _train(tmp_path, [0, 1])
    assert first["peak_memory_mb"] > second["peak_memory_mb"] + 300
    for record in (first, second):
        assert record["trial_wall_s"] > 0 and record["job_cpu_s"] > 0


def test_without_fork_the_job_says_why(monkeypatch):
    monkeypatch.delattr(os, "fork", raising=False)
    with pytest.raises(RuntimeError, match="POSIX"):
        run_forked(lambda: None)


def _interrupted_at(trial_number, monkeypatch):
    """Make the job stop (as Snakemake stops it) while it waits for its ``trial_number``-th trial."""
    calls = []

    def run_forked_until(func):
        calls.append(func)
        if len(calls) == trial_number:
            raise KeyboardInterrupt
        return run_forked(func)

    monkeypatch.setattr(training, "run_forked", run_forked_until)


def test_a_stopped_jobs_finished_trials_are_taken_by_its_next_run(tmp_path, monkeypatch):
    _interrupted_at(2, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path, [0, 1])
    first = json.loads((tmp_path / "runs" / "trial0.json").read_text())
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["key0.json", "trial0.json"]
    shutil.rmtree(tmp_path / "runs")  # what Snakemake does before it runs an unfinished job again
    monkeypatch.setattr(training, "run_forked", run_forked)
    trained = tmp_path / "trained"  # the fits run in the trials' processes: they count in a file

    def count(record):
        with open(trained, "a") as out:
            out.write(f"{record['trial']} ")

    _before_fit(monkeypatch, count)
    again, second = _train(tmp_path, [0, 1])
    assert trained.read_text() == "1 " and again == first and second["status"] == "ok"
    assert "trial 0 (1 of 2) taken from an interrupted run" in (tmp_path / "runs.log").read_text()
    assert not list((tmp_path / "kept").rglob("*.json"))  # the job finished: a rerun on purpose trains every trial
    _train(tmp_path, [0, 1])
    assert trained.read_text() == "1 0 1 "


def test_a_taken_trial_keeps_the_machine_session_it_was_timed_in(tmp_path, monkeypatch):
    _interrupted_at(2, monkeypatch)
    monkeypatch.setattr(training, "machine_session", lambda: "first machine")
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path, [0, 1])
    shutil.rmtree(tmp_path / "runs")
    monkeypatch.setattr(training, "run_forked", run_forked)
    monkeypatch.setattr(training, "machine_session", lambda: "second machine")
    taken, trained = _train(tmp_path, [0, 1])
    assert (taken["machine_session"], trained["machine_session"]) == ("first machine", "second machine")
    assert taken["calibration_s"] > 0 and trained["calibration_s"] > 0


def test_a_kept_trial_under_other_data_or_a_dead_process_is_trained_again(tmp_path, monkeypatch):
    _interrupted_at(2, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path, [0, 1])
    X = np.load(tmp_path / "X.npy")
    monkeypatch.setattr(training, "run_forked", run_forked)
    job = _job(tmp_path, [0, 1])
    np.save(tmp_path / "X.npy", X[::-1])  # the data changed since the trial was kept
    shutil.rmtree(tmp_path / "runs")
    training.train_job(job)
    logging.shutdown()
    log = (tmp_path / "runs.log").read_text()
    assert "trial 0: kept under another key (data_sha256 differ); trained again" in log and "taken from" not in log

    _before_fit(monkeypatch, _dies_on(0))
    _interrupted_at(2, monkeypatch)
    shutil.rmtree(tmp_path / "runs")
    with pytest.raises(KeyboardInterrupt):
        _train(tmp_path, [0, 1])
    assert not list((tmp_path / "kept").glob("*.json"))  # its process may have died with the job


def test_the_kept_folder_mirrors_the_jobs_under_kept():
    from qs3study.stages.kept_trials import kept_folder
    assert str(kept_folder("results/x/runs/d/m/n10/part0")) == "results/x/kept/d/m/n10/part0"
    with pytest.raises(ValueError, match="runs"):
        kept_folder("results/x/d/m/n10/part0")
