"""The reproduction cost estimate's counting: staged-search candidates, shared passes, best-effort grids."""

import importlib.util
from pathlib import Path

import pytest
import yaml

from baselines.registry import tuning_grid

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cost_estimate", REPO / "examples" / "reproduction_cost_estimate.py")
cost = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cost)


def test_fits_from_scratch_count_every_candidate():
    assert cost.tuning_fits("qs3orao", tuning_grid("qs3orao"), 5) == 7 * 7 + 11 + 4 * 10
    assert cost.tuning_fits("m-samult", tuning_grid("m-samult"), 5) == 7 * 7 + 11 + 1


def test_shared_passes_cost_the_ratio_per_group_of_settings():
    # One group per kernel width (stage 1), one for stage 2, one per split (stage 3).
    assert cost.tuning_fits("qs3orao", tuning_grid("qs3orao"), 5, pass_ratio=3.0) == pytest.approx((7 + 1 + 4) * 3)
    # Exact solvers: a lam path per kernel width in stage 1; the split stages unchanged.
    assert cost.tuning_fits("m-samult", tuning_grid("m-samult"), 5, lam_path_ratio=2.0) == pytest.approx(
        7 * 2 + 11 + 1)
    # Methods without the shortcut are unchanged.
    assert cost.tuning_fits("svorex", tuning_grid("svorex"), 5, pass_ratio=3.0) == 49


def test_best_effort_grids_have_the_stated_sizes():
    config = yaml.safe_load((REPO / "workflow" / "config" / "reproduction.yaml").read_text())
    config["methods"] = {k: {"params": {}, "grid": None, **v} for k, v in config["methods"].items()}
    best = cost.best_effort(config, n_iter=4000)["methods"]
    assert cost.candidates(best["qs3orao"]["grid"], 5) == 13 * 24 + 11 + 4 * 10
    assert cost.candidates(best["svorex"]["grid"], 5) == 13 * 24
    assert cost.candidates(best["qs3orao-labeled"]["grid"], 5) == 13 * 24
    assert best["qs3orao"]["params"]["step_offset"] == "auto" and best["qs3orao"]["params"]["n_iter"] == 4000
    assert min(best["m-pnu-auc"]["grid"].grid["lam"]) == 2.0**-20 and max(best["svorex"]["grid"].grid["C"]) == 2.0**20
