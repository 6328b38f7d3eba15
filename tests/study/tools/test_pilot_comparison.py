"""A pipeline pilot beside the published run: the pairing, the harness check and the changes."""

import json

import numpy as np
import pandas as pd
import pytest

from qs3study.tools.pilot_comparison import harness_verdict, main, pair_fits, summarise

PUBLISHED = {"config": {"methods": {"qs3orao": {"tuned_by": "qs3orao-exact"}}}}
PILOT = {"config": {"methods": {"qs3orao": {"tuned_by": "qs3orao-exact-floor"}}}}


def _row(method, draw, trial, auc, *, lam=2.0 ** -10, max_iter=256000, n_iter=64000, converged=True):
    params = {"lam": lam, "gamma": 1.0, "tradeoff": [0.5], "step_offset": "auto", "max_iter": max_iter}
    return {"dataset": "a", "method": method, "trial": trial, "size": "2000", "comparison": True, "status": "ok",
            "params": json.dumps(params), "auc": auc, "converged": converged if method == "qs3orao" else np.nan,
            "n_iter_fitted": n_iter, "tuning_draw": draw, "n_classes": 2, "fit_time": 36.0}


def _published():
    """Draw 0: converged at 64,000 (the harness fit); draw 1: unconverged at the cap, lam 2^-20; draw 2: converged."""
    return pd.DataFrame([
        _row("qs3orao", 0, 0, 0.80), _row("qs3orao-exact", 0, 0, 0.81),
        _row("qs3orao", 1, 0, 0.70, lam=2.0 ** -20, n_iter=256000, converged=False),
        _row("qs3orao-exact", 1, 0, 0.82, lam=2.0 ** -20),
        _row("qs3orao", 2, 0, 0.75, n_iter=256000, converged=False), _row("qs3orao-exact", 2, 0, 0.80)])


def _pilot(harness_auc=0.80):
    """The same fits at a larger cap, draw 1 at the floor's lam; draw 2 runs on past the published cap."""
    cap = 4096000
    return pd.DataFrame([
        _row("qs3orao", 0, 0, harness_auc, max_iter=cap), _row("qs3orao-exact-floor", 0, 0, 0.81),
        _row("qs3orao", 1, 0, 0.79, lam=2.0 ** -16, max_iter=cap, n_iter=1024000),
        _row("qs3orao-exact-floor", 1, 0, 0.80, lam=2.0 ** -16),
        _row("qs3orao", 2, 0, 0.78, max_iter=cap, n_iter=512000), _row("qs3orao-exact-floor", 2, 0, 0.80)])


def test_each_pilot_fit_meets_its_twin_and_only_a_settled_one_is_a_harness_fit():
    pairs = pair_fits(_published(), _pilot(), PUBLISHED, PILOT).set_index("tuning_draw")
    assert pairs["same_values"].tolist() == [True, False, True]  # max_iter aside
    # draw 2 has the published values but stopped at the published cap: the larger cap acts on it
    assert pairs["harness"].tolist() == [True, False, False]
    assert pairs.loc[0, "reproduced"] is True and pairs.loc[[1, 2], "reproduced"].isna().all()
    assert pairs.loc[1, "auc_change"] == pytest.approx(0.09)
    assert pairs.loc[1, "minimiser_change"] == pytest.approx(-0.02)  # f*-floor against the published f*
    assert pairs.loc[2, "auc_change"] == pytest.approx(0.03)
    summary = summarise(pairs).iloc[0]
    assert summary[["fits", "same_values", "harness", "reproduced", "published_converged", "converged"]].tolist() \
        == [3, 2, 1, 1, 1, 3]
    assert summary["mean_auc_change"] == pytest.approx((0.0 + 0.09 + 0.03) / 3)
    assert harness_verdict(summarise(pairs)) == "reproduced"


def test_a_harness_fit_off_by_more_than_the_digits_is_not_reproduced():
    pairs = pair_fits(_published(), _pilot(harness_auc=0.80 + 1e-6), PUBLISHED, PILOT)
    assert harness_verdict(summarise(pairs)) == "not reproduced"


def test_a_pilot_with_nothing_to_reproduce_has_no_harness():
    published = _published()
    published.loc[published["tuning_draw"] == 0, "converged"] = False
    with pytest.raises(ValueError, match="nothing to reproduce"):
        harness_verdict(summarise(pair_fits(published, _pilot(), PUBLISHED, PILOT)))


def test_a_pilot_fit_without_a_published_twin_is_named():
    pilot = _pilot()
    pilot.loc[pilot["tuning_draw"] == 2, "dataset"] = "b"
    with pytest.raises(ValueError, match=r"1 pilot fits have no published twin \(first: b, qs3orao, draw 2"):
        pair_fits(_published(), pilot, PUBLISHED, PILOT)


def test_the_command_writes_its_outputs_and_keeps_other_files(tmp_path, capsys):
    for name, table, manifest in (("published", _published(), PUBLISHED), ("pilot", _pilot(), PILOT)):
        (tmp_path / name).mkdir()
        table.to_csv(tmp_path / name / "results.csv", index=False)
        (tmp_path / name / "manifest.json").write_text(json.dumps(manifest))
    argv = [str(tmp_path / "published" / "results.csv"), str(tmp_path / "pilot" / "results.csv"),
            "--out", str(tmp_path / "pilot")]
    assert main(argv) == 0
    text = (tmp_path / "pilot" / "pilot_comparison.md").read_text()
    assert "Harness check: **reproduced** (1 of 1" in text
    assert "| qs3orao | a | 1 | 2^-16 (2^-20) | True (False) | +0.0900 | -0.0200 |" in text
    record = json.loads((tmp_path / "pilot" / "pilot_comparison.json").read_text())
    assert record["harness"] == "reproduced" and "pilot_comparison_fits.csv" in record["outputs"]
    assert main(argv) == 0  # its own files it may overwrite
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pilot_comparison.md").write_text("someone else's")
    capsys.readouterr()
    assert main([*argv[:2], "--out", str(tmp_path / "other")]) == 1
    assert "not written by this tool" in capsys.readouterr().err
    assert (tmp_path / "other" / "pilot_comparison.md").read_text() == "someone else's"
