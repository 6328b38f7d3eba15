"""The convergence audit: converged comparison fits per column and tuning draw, against the bar and f*."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from qs3study.stages.tables import read_results
from qs3study.tools.convergence_audit import ALL_DRAWS, audit_fits, convergence_markdown, main, minimisers, summarise

REPOSITORY = Path(__file__).resolve().parents[3]


def _row(dataset, method, trial, draw, auc, converged=np.nan, status="ok", comparison=True):
    return {"dataset": dataset, "method": method, "trial": trial, "size": "2000" if comparison else "1000",
            "comparison": comparison, "status": status, "params": json.dumps({"lam": 2.0 ** -trial}),
            "auc": auc, "converged": converged, "n_iter_fitted": 4000, "tuning_draw": draw}


def _table():
    """Two draws of 4 trials on one dataset: QS3ORAO with a criterion, its minimiser f* and a baseline.

    Draw 0: 3 of 4 fits converged, one of them 0.02 below f*. Draw 1: f* is retrained higher, so the
    converged fit of trial 0 (0.005 below draw 0's f*) is 0.03 below its own draw's; trial 3 failed.
    """
    rows = []
    for trial in range(4):
        rows.append(_row("a", "svorex", trial, 0, 0.9))
        rows.append(_row("a", "qs3orao-exact", trial, 0, 0.80))
        rows.append(_row("a", "qs3orao-exact", trial, 1, 0.83))
        rows.append(_row("a", "qs3orao", trial, 0, 0.78 if trial == 0 else 0.795, converged=trial != 3))
        if trial < 3:
            rows.append(_row("a", "qs3orao", trial, 1, 0.795 if trial == 0 else 0.825, converged=trial < 2))
        rows.append(_row("a", "qs3orao", trial, 0, 0.5, converged=False, comparison=False))  # another size
    rows.append(_row("a", "qs3orao", 3, 1, np.nan, converged=np.nan, status="failed"))
    return pd.DataFrame(rows)


def test_the_audit_counts_each_draw_against_its_own_minimiser():
    fits = audit_fits(_table(), {"qs3orao": "qs3orao-exact"})
    assert set(fits["method"]) == {"qs3orao"} and len(fits) == 8
    summary = summarise(fits, bar=0.95, confidence=0.95, margin=0.01).set_index("tuning_draw")
    assert summary.loc[0, ["fits", "converged", "unconverged", "failed", "off_minimiser"]].tolist() == [4, 3, 1, 0, 1]
    assert summary.loc[1, ["fits", "converged", "unconverged", "failed", "off_minimiser"]].tolist() == [4, 2, 1, 1, 1]
    assert summary.loc[ALL_DRAWS, ["fits", "converged", "off_minimiser"]].tolist() == [8, 5, 2]
    assert summary.loc[1, "mean_gap"] == pytest.approx((0.035 + 0.005 + 0.005) / 3)
    assert set(summary["verdict"]) == {"below the bar", "inconclusive"}
    assert summary.loc[0, "verdict"] == "inconclusive"  # 3 of 4 cannot rule out 95 %


def test_the_fits_are_counted_by_their_tuned_lam_and_none_is_dropped():
    table = _table()
    table.loc[(table["method"] == "qs3orao") & (table["trial"] == 3), "params"] = "{}"
    fits = audit_fits(table)
    summary = summarise(fits)
    text = convergence_markdown(summary, fits)
    assert "| qs3orao | 2^0 | 2 of 2 |" in text and "| qs3orao | 2^-1 | 2 of 2 |" in text
    assert "| qs3orao | 2^-2 | 1 of 2 |" in text and "| qs3orao | — | 0 of 2 |" in text


def test_without_a_minimiser_the_distance_is_not_guessed():
    fits = audit_fits(_table())
    summary = summarise(fits)
    assert fits["gap"].isna().all() and summary["with_minimiser"].eq(0).all() and summary["off_minimiser"].eq(0).all()


def test_a_table_without_a_criterion_is_refused():
    table = _table().assign(converged=np.nan)
    with pytest.raises(ValueError, match="no comparison fit.*convergence flag"):
        audit_fits(table)


def test_a_table_lacking_a_column_is_named_in_one_line(tmp_path, capsys):
    _table().drop(columns="auc").to_csv(tmp_path / "results.csv", index=False)
    assert main([str(tmp_path / "results.csv"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "results.csv" in err and "auc" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_minimisers_come_from_the_runs_tuned_by():
    manifest = {"config": {"methods": {"qs3orao": {"tuned_by": "qs3orao-exact"}, "svorex": {"tuned_by": None},
                                       "rff-auc": None}}}
    assert minimisers(manifest) == {"qs3orao": "qs3orao-exact"} and minimisers(None) == {}


def test_the_command_reads_the_manifest_and_keeps_other_files(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    _table().to_csv(run / "results.csv", index=False)
    (run / "manifest.json").write_text(json.dumps({"config": {"methods": {"qs3orao": {"tuned_by": "qs3orao-exact"}},
                                                              "claims": {"non_inferiority_margin": 0.01}}}))
    assert main([str(run / "results.csv"), "--out", str(run)]) == 0
    summary = pd.read_csv(run / "convergence_audit.csv")
    assert summary["off_minimiser"].tolist() == [1, 1, 2]
    assert "| qs3orao | all | 5 of 8 (62%) |" in (run / "convergence_audit.md").read_text()
    record = json.loads((run / "convergence_audit.json").read_text())
    assert set(record["outputs"]) == {"convergence_audit.csv", "convergence_audit_fits.csv", "convergence_audit.md"}
    (run / "convergence_audit.json").unlink()
    (run / "convergence_audit.md").write_text("a user's notes")
    assert main([str(run / "results.csv"), "--out", str(run)]) == 1
    assert "convergence_audit.md" in capsys.readouterr().err and (run / "convergence_audit.md").read_text() == "a user's notes"
    assert (run / "results.csv").exists()


def test_the_committed_best_effort_audit_matches_a_plain_count():
    path = REPOSITORY / "figures" / "reproduction-best" / "results.csv"
    table = read_results(path)
    fits = audit_fits(table)
    summary = summarise(fits).set_index(["method", "tuning_draw"])
    plain = table[table["comparison"].astype(bool) & table["method"].isin(["qs3orao", "qs3orao-labeled"])]
    for (method, draw), group in plain.groupby(["method", "tuning_draw"]):
        counted = int((group["status"].eq("ok") & group["converged"].eq(True)).sum())
        assert summary.loc[(method, int(draw)), ["fits", "converged"]].tolist() == [len(group), counted]
