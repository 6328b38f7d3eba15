"""The convergence audit: converged comparison fits per column and tuning draw, against the bar and f*."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from qs3study.stages.tables import read_results
from qs3study.tools.convergence_audit import (ALL_DRAWS, CAP_MULTIPLES, audit_fits, convergence_markdown, main,
                                              summarise, warmup, warmup_table)

REPOSITORY = Path(__file__).resolve().parents[3]


def _row(dataset, method, trial, draw, auc, converged=np.nan, status="ok", comparison=True):
    return {"dataset": dataset, "method": method, "trial": trial, "size": "2000" if comparison else "1000",
            "comparison": comparison, "status": status, "params": json.dumps({"lam": 2.0 ** -trial}),
            "auc": auc, "converged": converged, "n_iter_fitted": 4000, "tuning_draw": draw, "n_classes": 5}


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
    assert set(record["outputs"]) == {"convergence_audit.csv", "convergence_audit_warmup.csv", "convergence_audit_fits.csv",
                                      "convergence_audit.md"}
    assert pd.read_csv(run / "convergence_audit_warmup.csv").empty  # no fit of the table records its step offset
    (run / "convergence_audit.json").unlink()
    (run / "convergence_audit.md").write_text("a user's notes")
    assert main([str(run / "results.csv"), "--out", str(run)]) == 1
    assert "convergence_audit.md" in capsys.readouterr().err and (run / "convergence_audit.md").read_text() == "a user's notes"
    assert (run / "results.csv").exists()


def test_the_command_audits_the_trials_it_is_given_and_refuses_a_missing_one(tmp_path, capsys):
    _table().to_csv(tmp_path / "results.csv", index=False)
    assert main([str(tmp_path / "results.csv"), "--out", str(tmp_path / "out"), "--trials", "0", "1"]) == 0
    summary = pd.read_csv(tmp_path / "out" / "convergence_audit.csv").set_index("tuning_draw")
    assert summary.loc["all", ["fits", "converged"]].tolist() == [4, 4]  # trials 2 and 3 left out
    assert json.loads((tmp_path / "out" / "convergence_audit.json").read_text())["trials"] == [0, 1]
    capsys.readouterr()
    assert main([str(tmp_path / "results.csv"), "--out", str(tmp_path / "other"), "--trials", "0", "7"]) == 1
    assert "no trial 7 (its trials: 0, 1, 2, 3)" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_the_committed_best_effort_audit_matches_a_plain_count():
    path = REPOSITORY / "figures" / "reproduction-best" / "results.csv"
    table = read_results(path)
    fits = audit_fits(table)
    summary = summarise(fits).set_index(["method", "tuning_draw"])
    plain = table[table["comparison"].astype(bool) & table["method"].isin(["qs3orao", "qs3orao-labeled"])]
    for (method, draw), group in plain.groupby(["method", "tuning_draw"]):
        counted = int((group["status"].eq("ok") & group["converged"].eq(True)).sum())
        assert summary.loc[(method, int(draw)), ["fits", "converged"]].tolist() == [len(group), counted]
    # The warm-up by its closed form t0 = ceil(theta (lam + h_bar) - 1), theta = 1.5 / lam, h_bar = 4 mean(2 - gamma).
    params = plain["params"].map(json.loads)
    lam = params.map(lambda p: p["lam"])
    h_bar = [4 * np.mean(2 - np.broadcast_to(p["tradeoff"], int(k) - 1)) for p, k in zip(params, plain["n_classes"])]
    t0 = np.ceil(1.5 / lam * (lam + h_bar) - 1)
    cap = params.map(lambda p: p["max_iter"])
    unconverged = ~(plain["status"].eq("ok") & plain["converged"].eq(True))
    table = warmup_table(fits).set_index("method")
    for method in ("qs3orao", "qs3orao-labeled"):
        mine = plain["method"].eq(method)
        assert table.loc[method, "in_warmup"] == int((mine & (plain["n_iter_fitted"] <= t0)).sum())
        for multiple in CAP_MULTIPLES:
            expected = int((mine & unconverged & (t0 >= multiple * cap)).sum())
            assert table.loc[method, f"unconverged_x{multiple}"] == expected


def _smallest_contracting_offset(theta, lam, h_bar):
    t0 = 0
    while theta / (1 + t0) * (lam + h_bar) > 1:
        t0 += 1
    return float(t0)


@pytest.mark.parametrize(("lam", "tradeoff", "theta"), [(0.05, 0.5, None), (0.3, 1.0, None), (0.02, [0.9, 1.0, 0.7], None),
                                                         (0.1, 0.25, 40.0)])
def test_the_warmup_is_the_smallest_offset_whose_first_step_contracts(lam, tradeoff, theta):
    params = {"lam": lam, "tradeoff": tradeoff, "step_offset": "auto", **({} if theta is None else {"theta": theta})}
    h_bar = 4 * np.mean(2 - np.broadcast_to(tradeoff, 3))
    assert warmup(params, 4) == _smallest_contracting_offset(theta or 1.5 / lam, lam, h_bar)


def test_a_warmup_is_read_only_where_the_parameters_give_it():
    base = {"lam": 0.05, "tradeoff": 0.5}
    assert warmup({**base, "step_offset": 12}, 4) == 12.0
    assert np.isnan(warmup({**base, "step_offset": "auto-data"}, 4))  # resolved from the training rows
    assert np.isnan(warmup({"lam": 0.05, "step_offset": "auto"}, 4))
    assert np.isnan(warmup({}, 4))
    with pytest.raises(ValueError, match="tradeoff must be a scalar or 3 values"):
        warmup({**base, "tradeoff": [0.5, 0.5], "step_offset": "auto"}, 4)


def test_the_warmup_table_counts_fits_inside_it_and_those_a_larger_cap_leaves_there():
    # Fits of cap 1,000: t0 of 100 (stopped past it), 2,000 (in it), 20,000 and 70,000 (in it, unconverged).
    fits = pd.DataFrame({"method": "qs3orao", "converged": [True, True, False, False], "n_iter_fitted": 1000.0,
                         "max_iter": 1000.0, "warmup": [100.0, 2000.0, 20000.0, 70000.0],
                         "off_minimiser": [False, True, False, False]})
    fits = pd.concat([fits, fits.assign(method="svorex", warmup=np.nan)], ignore_index=True)
    table = warmup_table(fits, bar=0.5)
    assert table["method"].tolist() == ["qs3orao"]  # a column without a warm-up is left out
    row = table.iloc[0]
    assert [row.in_warmup, row.in_warmup_converged, row.in_warmup_off, row.past_warmup_converged] == [3, 1, 1, 1]
    assert row.allowed == 2 and [row[f"unconverged_x{m}"] for m in CAP_MULTIPLES] == [2, 2, 2, 1]
    assert warmup_table(fits.iloc[:1].assign(converged=False), bar=0.95).iloc[0].allowed == 0
    audited = audit_fits(_table())
    text = convergence_markdown(summarise(audited), audited)
    assert "## The step's warm-up" not in text  # the test table records no step offset
