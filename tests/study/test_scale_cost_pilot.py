"""The scale study's cost pilot: configurations merged as Snakemake merges them."""

import importlib.util
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("scale_cost_pilot", REPO / "timing" / "scale_cost_pilot.py")
pilot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pilot)


def test_overlays_merge_key_by_key_and_drop_removed_methods(tmp_path):
    base = {"protocol": {"trials": 10, "memory_budget_mb": 4096, "n_labeled": 500},
            "methods": {"a": {"method": "m-samult", "params": {"lam": 1.0}}, "b": {"method": "svorex"}},
            "datasets": {"d": None}}
    overlay = {"protocol": {"memory_budget_mb": 20480}, "methods": {"b": None, "a": {"params": {"gamma": 2.0}}}}
    paths = []
    for k, content in enumerate((base, overlay)):
        paths.append(tmp_path / f"{k}.yaml")
        paths[-1].write_text(yaml.safe_dump(content))
    config = pilot.merged(paths)
    assert config["protocol"] == {"trials": 10, "memory_budget_mb": 20480, "n_labeled": 500}
    assert list(config["methods"]) == ["a"]
    assert config["methods"]["a"]["params"] == {"lam": 1.0, "gamma": 2.0} and config["methods"]["a"]["grid"] is None
    assert config["datasets"]["d"] == {"params": {}}


def test_the_committed_scale_overlay_merges_onto_the_protocol():
    config = pilot.merged(pilot.CONFIGS)
    assert config["protocol"]["memory_budget_mb"] == 20480 and config["protocol"]["low_memory_exact"] is True
    assert "svorex" not in config["methods"] and "m-pnu-auc" in config["methods"]


def test_sizes_beyond_the_pool_or_the_budget_cost_nothing_and_the_rest_scale_by_the_exponent():
    estimates = pilot.size_estimates(2.0, 1000, 3.0, [1000, 2000, 4000, 8000], pool=6000, stops=lambda s: s == 4000)
    assert estimates == {1000: 2.0, 2000: 16.0, 4000: "stop", 8000: "beyond the pool"}
