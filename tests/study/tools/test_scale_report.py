"""The scale report command: its three files from a results table, and never another's file."""

import json

import numpy as np
import pandas as pd

from qs3study.tools.scale_report import OUTPUTS, RECORD, main


def _results(path):
    """Two sizes of one dataset: the exact baselines ran at 5,000 and refused 20,000 for memory."""
    rows = []
    for size in (5000, 20000):
        for method, auc, seconds in (("qs3orao", 0.85, 0.001 * size), ("m-samult", 0.86, 1e-10 * size ** 3),
                                     ("m-pnu-auc", 0.87, 2e-10 * size ** 3), ("rff-auc", 0.80, 1.0)):
            for trial in range(3):
                refused = method.startswith("m-") and size == 20000
                rows.append({"dataset": "d", "method": method, "size": str(size), "trial": trial,
                             "n_unlabeled": size, "status": "out_of_memory_budget" if refused else "ok",
                             "auc": np.nan if refused else auc + 0.001 * trial,
                             "fit_time": np.nan if refused else seconds * (1 + 0.05 * trial),
                             "trial_wall_s": np.nan if refused else seconds * (1 + 0.05 * trial) + 0.5,
                             "job_cpu_s": np.nan if refused else seconds * (1 + 0.05 * trial) + 0.4,
                             "memory_estimate_mb": 7e-5 * size ** 2, "memory_budget_mb": 20480.0,
                             "peak_memory_mb": 150.0 if refused else 200.0 + 7e-5 * size ** 2})
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_the_command_writes_its_three_files(tmp_path, capsys):
    results, out = _results(tmp_path / "results.csv"), tmp_path / "out"
    assert main([results, "--out", str(out), "--machine-mb", "24576"]) == 0
    assert {p.name for p in out.iterdir()} == {*OUTPUTS, RECORD}
    frame = pd.read_csv(out / "time_at_accuracy.csv")
    assert frame.set_index(["n_unlabeled", "method"]).loc[(5000, "qs3orao"), "reached"] == False  # noqa: E712
    summary = (out / "scale_summary.md").read_text()
    assert "| d | m-pnu-auc | 5,000 | 1,950 | 20,000 | memory budget | 20,000 | 28,000 | 20,480 | above |" in summary
    assert "| d | m-samult | 5,000 | faster at every measured size;" in summary
    assert (out / "time_at_accuracy.png").read_bytes()[:4] == b"\x89PNG"
    assert summary in capsys.readouterr().out
    # its own files it overwrites
    assert main([results, "--out", str(out), "--machine-mb", "24576"]) == 0


def test_the_command_never_overwrites_a_file_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "scale_summary.md").write_text("someone else's")
    assert main([_results(tmp_path / "results.csv"), "--out", str(out), "--machine-mb", "24576"]) == 1
    assert "scale_summary.md" in capsys.readouterr().err
    assert (out / "scale_summary.md").read_text() == "someone else's"


def test_a_table_without_the_memory_columns_is_named(tmp_path, capsys):
    path = _results(tmp_path / "results.csv")
    pd.read_csv(path).drop(columns="memory_budget_mb").to_csv(path, index=False)
    assert main([path, "--out", str(tmp_path / "out")]) == 1
    assert "memory_budget_mb" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_the_machine_memory_comes_from_the_run_s_manifest_or_is_asked_for(tmp_path, capsys):
    results = _results(tmp_path / "results.csv")
    assert main([results, "--out", str(tmp_path / "out")]) == 1
    assert "pass --machine-mb" in capsys.readouterr().err and not (tmp_path / "out").exists()
    (tmp_path / "manifest.json").write_text('{"machine": {"memory_gib": 16}}')
    assert main([results, "--out", str(tmp_path / "out")]) == 0
    assert "Machine memory: 16,384 MiB." in (tmp_path / "out" / "scale_summary.md").read_text()


def test_the_summary_lists_the_trials_timed_beside_another_load(tmp_path, capsys):
    path = _results(tmp_path / "results.csv")
    table = pd.read_csv(path)
    slow = (table["method"] == "m-samult") & (table["n_unlabeled"] == 5000) & (table["trial"] == 1)
    table.loc[slow, ["fit_time", "trial_wall_s", "job_cpu_s"]] = [30.0, 30.2, 10.0]
    table.to_csv(path, index=False)
    assert main([path, "--out", str(tmp_path / "out"), "--machine-mb", "24576"]) == 0
    summary = (tmp_path / "out" / "scale_summary.md").read_text()
    assert "| d | m-samult | 5,000 | 1 | 30.0 | 30.2 | 10.0 | 3.02 |" in summary
    assert main([_results(tmp_path / "plain.csv"), "--out", str(tmp_path / "plain"), "--machine-mb", "24576"]) == 0
    assert "overstates the method's.\n\nNone.\n" in (tmp_path / "plain" / "scale_summary.md").read_text()


def test_the_summary_names_the_machine_sessions_and_their_speeds(tmp_path, capsys):
    path = _results(tmp_path / "results.csv")
    assert main([path, "--out", str(tmp_path / "old"), "--machine-mb", "24576"]) == 0
    assert (tmp_path / "old" / "scale_summary.md").read_text().endswith("predate the machine_session and "
                                                                        "calibration_s columns.\n")
    table = pd.read_csv(path)
    table["machine_session"] = np.where(table["n_unlabeled"] == 5000, "boot-a", "boot-b")
    table["calibration_s"] = np.where(table["n_unlabeled"] == 5000, 0.080, 0.050)
    table.to_csv(path, index=False)
    assert main([path, "--out", str(tmp_path / "new"), "--machine-mb", "24576"]) == 0
    summary = (tmp_path / "new" / "scale_summary.md").read_text()
    assert summary.endswith("| boot-b | 12 | 0.0500 | 1.00 |\n| boot-a | 12 | 0.0800 | 1.60 |\n")


def test_the_summary_lists_the_measurements_set_aside_beside_the_table(tmp_path, capsys):
    path = _results(tmp_path / "results.csv")
    assert main([path, "--out", str(tmp_path / "plain"), "--machine-mb", "24576"]) == 0
    assert "superseded/` folder.\n\nNone.\n" in (tmp_path / "plain" / "scale_summary.md").read_text()
    record = tmp_path / "superseded" / "contended" / "d" / "m-samult" / "n5000" / "part0"
    record.mkdir(parents=True)
    (record / "trial1.json").write_text(json.dumps({"dataset": "d", "method": "m-samult", "n_unlabeled": 5000,
                                                    "trial": 1, "fit_time": 30.0, "trial_wall_s": 30.2,
                                                    "job_cpu_s": 10.0, "status": "ok"}))
    assert main([path, "--out", str(tmp_path / "out"), "--machine-mb", "24576"]) == 0
    assert "| contended/d/m-samult/n5000/part0 | 1 | 30.0 | 30.2 | 10.0 |" in (
        tmp_path / "out" / "scale_summary.md").read_text()
