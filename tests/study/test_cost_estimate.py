"""The reproduction cost estimate's counting: staged-search candidates, shared passes, best-effort grids."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from baselines.registry import tuning_grid

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cost_estimate", REPO / "timing" / "reproduction_cost_estimate.py")
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


def _pilot_results():
    """A pilot on uci_bike (pool 16,879): two methods, 2 comparison trials, 3 sweep trials per size."""
    rows = []
    for method, per_size in (("fast", {"1000": 1.0, "5000": 4.0, "all": 12.0}),
                             ("exact", {"1000": 2.0, "5000": 50.0, "all": None})):
        for trial in range(2):
            rows.append(dict(dataset="uci_bike", method=method, trial=trial, size="2000", comparison=True,
                             status="ok", job_cpu_s=3.0, n_labeled=500, n_unlabeled=2000,
                             memory_estimate_mb=np.nan, memory_budget_mb=2000.0))
        for size, seconds in per_size.items():
            n_unlabeled = 16_879 if size == "all" else int(size)
            for trial, jitter in enumerate((0.9, 1.0, 1.5)):   # medians: the values above
                stopped = seconds is None
                rows.append(dict(dataset="uci_bike", method=method, trial=trial, size=size, comparison=False,
                                 status="out_of_memory_budget" if stopped else "ok",
                                 job_cpu_s=0.5 if stopped else seconds * jitter, n_labeled=500,
                                 n_unlabeled=n_unlabeled, memory_budget_mb=2000.0,
                                 # the exact method's estimate grows as rows^2: over the budget from ~14,100 rows
                                 memory_estimate_mb=1e-5 * (500 + n_unlabeled) ** 2 if method == "exact" else 5.0))
    return pd.DataFrame(rows)


PILOT_CONFIG = {"protocol": {"n_labeled": 500, "n_unlabeled": 2000, "trials": 2},
                "sweep": {"trials": 3, "n_unlabeled": [1000, 2000, 5000, 10000, 20000, 50000, 100000, "all"]},
                "datasets": {"uci_bike": {}, "road3d_subset": {}, "sgemm": {}}}


def test_a_pilot_costs_its_own_dataset_as_measured():
    costs = cost.pilot_costs(_pilot_results(), {"fast": 60.0, "exact": 30.0}, PILOT_CONFIG, "uci_bike")
    assert set(costs) == {"uci_bike", "road3d_subset", "sgemm"}
    bike = costs["uci_bike"]
    assert bike["tune"] == 90.0 and bike["comparison"] == 2 * 2 * 3.0
    # every measured size's median, three trials; the budget stops the exact method at the pool (no cost)
    slope_fast, slope_exact = np.log(12.0 / 4.0) / np.log(16_879 / 5000), np.log(25.0) / np.log(5.0)
    at_10000 = 4.0 * 2 ** slope_fast + 50.0 * 2 ** slope_exact   # between measured sizes: interpolated
    assert bike["sweep"] == pytest.approx(3 * (1.0 + 4.0 + 12.0 + 2.0 + 50.0 + at_10000))


def test_a_pilot_adds_each_training_jobs_own_cpu_once_per_job():
    """A training job runs its size's trials in processes forked from its own: its start-up is paid once."""
    own = {("fast", "2000"): 2.0, ("exact", "2000"): 2.5, ("fast", "1000"): 1.5, ("fast", "5000"): 2.5,
           ("fast", "all"): 2.0, ("exact", "1000"): 3.0, ("exact", "5000"): 3.0, ("exact", "all"): 3.0}
    without = cost.pilot_costs(_pilot_results(), {}, PILOT_CONFIG, "uci_bike")
    costs = cost.pilot_costs(_pilot_results(), {}, PILOT_CONFIG, "uci_bike", own)
    bike, sgemm = costs["uci_bike"], costs["sgemm"]
    assert bike["comparison"] == without["uci_bike"]["comparison"] + 2.0 + 2.5
    # the sweep: per size the method's median own CPU (fast 2.0, exact 3.0), once, beside its trials
    assert bike["sweep"] == pytest.approx(without["uci_bike"]["sweep"] + 4 * 2.0 + 3 * 3.0)  # exact stops at all
    assert sgemm["sweep"] == pytest.approx(without["sgemm"]["sweep"] + 7 * 2.0 + 3 * 3.0)


def test_a_pilot_extrapolates_the_sweep_by_pool_size():
    costs = cost.pilot_costs(_pilot_results(), {}, PILOT_CONFIG, "uci_bike")
    # road3d's pool (4,500 rows) stops at 1,000: its pool is the next size, interpolated from the measured ones
    small = costs["road3d_subset"]["sweep"]
    assert 3 * (1.0 + 2.0) < small < 3 * (1.0 + 4.0 + 2.0 + 50.0)
    # sgemm's pool reaches past the pilot's: the fast method extrapolates with its last exponent, the exact one
    # stops where the budget stopped it
    slope = np.log(12.0 / 4.0) / np.log(16_879 / 5000)
    fast = 3 * (1.0 + 4.0 + sum(12.0 * (s / 16_879) ** slope for s in (10_000, 20_000, 50_000, 100_000, 241_100)))
    exact = 3 * (2.0 + 50.0 + 50.0 * 2 ** (np.log(25.0) / np.log(5.0)))
    assert costs["sgemm"]["sweep"] == pytest.approx(fast + exact)
    assert costs["sgemm"]["tune"] == costs["uci_bike"]["tune"] == 0.0


def test_a_pilot_stops_a_method_where_its_memory_estimate_passes_the_budget():
    config = {**PILOT_CONFIG, "datasets": {"uci_bike": {}, "uci_elevators": {}}}
    costs = cost.pilot_costs(_pilot_results(), {}, config, "uci_bike")
    # elevators' pool (16,099 rows) was never measured: the estimate (~2,760 MB > 2,000) stops the exact
    # method there, as its own pool stopped it in the pilot, so both cost the same
    assert costs["uci_elevators"]["sweep"] == pytest.approx(
        costs["uci_bike"]["sweep"] - 3 * 12.0 + 3 * 12.0 * (16_099 / 16_879) ** (np.log(3.0) / np.log(16_879 / 5000)))


def test_a_pilot_without_the_dataset_is_refused():
    with pytest.raises(ValueError, match="no rows of 'sgemm'"):
        cost.pilot_costs(_pilot_results(), {}, PILOT_CONFIG, "sgemm")


def _pilot_clone(tmp_path, tuning_records, own_cpu=()):
    figures = tmp_path / "figures" / "pilot"
    figures.mkdir(parents=True)
    (figures / "manifest.json").write_text('{"config": {"name": "pilot"}}')
    _pilot_results().to_csv(figures / "results.csv", index=False)
    for method, records in tuning_records.items():
        folder = tmp_path / "results" / "tuning" / "uci_bike" / method
        folder.mkdir(parents=True)
        for trial, record in enumerate(records):
            (folder / f"trial{trial}.json").write_text(json.dumps({"method": method, **record}))
    for (method, size, part), seconds in own_cpu:
        folder = tmp_path / "results" / "runs" / "uci_bike" / method / f"n{size}" / f"part{part}"
        folder.mkdir(parents=True)
        (folder / "batch.json").write_text(json.dumps(dict(method=method, size=size, own_cpu_s=seconds)))
    return figures


def test_a_pilot_costs_its_tuning_by_the_jobs_own_cpu_time(tmp_path):
    figures = _pilot_clone(tmp_path, {"fast": [{"job_cpu_s": 40.0}, {"job_cpu_s": 20.0}],
                                      "exact": [{"job_cpu_s": 30.0}]},
                           own_cpu=[(("fast", "2000", 0), 1.75), (("exact", "all", 0), 2.25), (("exact", "all", 1), 2.0)])
    config, dataset, results, tune_cpu, own_cpu = cost.read_pilot(figures)
    assert dataset == "uci_bike" and tune_cpu == {"fast": 60.0, "exact": 30.0}
    assert own_cpu == {("fast", "2000"): 1.75, ("exact", "all"): 4.25}  # a size's parts (trials_per_job) add up
    assert results["job_cpu_s"].sum() == pytest.approx(_pilot_results()["job_cpu_s"].sum())
    # a tuning draw's search and training job (tuning.draws) count with the rest
    draw = tmp_path / "results" / "tuning" / "uci_bike" / "fast" / "draw1"
    draw.mkdir()
    (draw / "trial0.json").write_text(json.dumps({"method": "fast", "job_cpu_s": 5.0, "tuning_draw": 1}))
    batch = tmp_path / "results" / "runs" / "uci_bike" / "fast" / "n2000" / "draw1" / "part0"
    batch.mkdir(parents=True)
    (batch / "batch.json").write_text(json.dumps(dict(method="fast", size="2000", own_cpu_s=0.5)))
    _, _, _, tune_cpu, own_cpu = cost.read_pilot(figures)
    assert tune_cpu == {"fast": 65.0, "exact": 30.0} and own_cpu[("fast", "2000")] == 2.25
    # a pilot whose training jobs ran one trial each has no batch records: their start-up is in job_cpu_s
    assert cost.read_pilot(_pilot_clone(tmp_path / "older", {"fast": [{"job_cpu_s": 1.0}]}))[4] == {}


def test_the_start_up_cost_of_one_trial_jobs_is_their_cpu_beyond_their_fits_and_predictions():
    results = pd.DataFrame(dict(job_cpu_s=[3.0, 10.0, 0.5], fit_time=[1.0, 7.5, np.nan],
                                predict_time=[0.25, 0.5, np.nan]))  # the last: stopped by the budget, no fit
    per_job, total = cost.start_up_cpu(results)
    np.testing.assert_allclose(per_job, [1.75, 2.0, 0.5])
    assert total == pytest.approx(13.5)


def test_a_pilot_without_the_jobs_own_cpu_times_is_refused(tmp_path):
    # Snakemake's benchmark cpu_time, all that an older pilot's tuning jobs have, undercounts long jobs
    figures = _pilot_clone(tmp_path, {"fast": [{"job_cpu_s": 40.0}, {"time": 55.0}]})
    with pytest.raises(ValueError, match="1 jobs of the pilot .* did not record their CPU time"):
        cost.read_pilot(figures)


def test_a_pilot_on_a_dataset_without_a_documented_row_count_is_refused_by_name():
    results = _pilot_results().assign(dataset="houses")
    with pytest.raises(ValueError, match="'houses'.*row count"):
        cost.pilot_costs(results, {}, {**PILOT_CONFIG, "datasets": {"houses": {}}}, "houses")
    with pytest.raises(ValueError, match="'houses'"):
        cost.pilot_costs(_pilot_results(), {}, {**PILOT_CONFIG, "datasets": {"uci_bike": {}, "houses": {}}},
                         "uci_bike")
