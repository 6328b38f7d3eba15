"""Claims 8c and 8d read where both methods ran, on generated results tables."""

import json

import numpy as np
import pandas as pd
import pytest

from qs3study.provenance import run_manifest

from qs3study.claims.crossover import (crossover_evidence, crossover_size, log_log_crossing, machine_memory_mb,
                                       measured_refusals, memory_evidence, recorded_machine_mb)


def _table(times, *, trials=3, oom_sizes=()):
    """Rows of a results table: ``times[(method, size)]`` is the fit time of every trial."""
    rows = []
    for (method, size), seconds in times.items():
        for trial in range(trials):
            status = "out_of_memory_budget" if method != "qs3orao" and size in oom_sizes else "ok"
            rows.append({"dataset": "d", "method": method, "n_unlabeled": size, "trial": trial, "status": status,
                         "fit_time": seconds * (1.0 + 0.01 * trial) if status == "ok" else float("nan"),
                         "memory_estimate_mb": 8e-6 * size ** 2, "rss_before_fit_mb": 200.0, "memory_budget_mb": 4096.0,
                         "peak_memory_mb": 200.0 + 9e-6 * size ** 2})
    return pd.DataFrame(rows)


def _times(ours, theirs):
    return {**{("qs3orao", n): t for n, t in ours.items()},
            **{(m, n): t for m in ("m-samult", "m-pnu-auc") for n, t in theirs.items()}}


def test_crossover_holds_where_qs3orao_is_faster_beyond_the_size():
    table = _table(_times({5000: 10.0, 10000: 12.0, 20000: 15.0}, {5000: 5.0, 10000: 40.0, 20000: 300.0}))
    result = crossover_evidence(table, beyond=10000, min_trials=3)
    assert result["verdict"] == "holds"
    # the slower cell below the size is listed as evidence but does not decide the verdict
    assert "d/m-samult: from 10000" in result["evidence"] and "d/m-samult at 5000: slower" in result["evidence"]


def test_crossover_fails_where_an_exact_baseline_is_faster_and_ignores_budget_stops():
    slower = _table(_times({10000: 50.0, 20000: 60.0}, {10000: 40.0, 20000: 300.0}))
    assert crossover_evidence(slower, beyond=10000, min_trials=3)["verdict"] == "fails"
    stopped = _table(_times({10000: 5.0, 20000: 6.0}, {10000: 40.0, 20000: 300.0}), oom_sizes=(10000, 20000))
    result = crossover_evidence(stopped, beyond=10000, min_trials=3)
    assert result["verdict"] == "inconclusive" and "Cells where both ran: none" in result["evidence"]


def test_crossover_needs_the_declared_trials():
    few = _table(_times({10000: 5.0, 20000: 6.0}, {10000: 40.0, 20000: 300.0}), trials=1)
    result = crossover_evidence(few, beyond=10000, min_trials=3)
    assert result["verdict"] == "inconclusive" and "too few trials" in result["evidence"]


def test_memory_claim_through_a_validated_estimate():
    table = _table(_times({1000: 1.0, 2000: 2.0}, {1000: 1.0, 2000: 2.0}))

    def estimate(method, dataset, n):
        return 8e-6 * n ** 2

    kwargs = dict(estimate=estimate, full_sizes={"big": 400_000, "small": 5_000}, large_rows=100_000,
                  tolerance=1.5)
    result = memory_evidence(table, budget_mb=4096, paper_budget_mb=80 * 1024, **kwargs)
    assert result["verdict"] == "holds"  # 1.28 TB > 4 GiB
    assert result["paper_verdict"] == "holds"  # and > 80 GB
    assert memory_evidence(table, budget_mb=4096, paper_budget_mb=4e6, **kwargs)["paper_verdict"] == "fails"
    off = table.assign(peak_memory_mb=table["peak_memory_mb"] * 10)
    # the process's own memory (interpreter, data) is no estimate error: judged against the peak alone, the
    # smallest fits (estimate 8 MiB, peak 209 MiB) would refute the estimate
    assert memory_evidence(table, budget_mb=4096, paper_budget_mb=80 * 1024, **kwargs)["verdict"] == "holds"
    assert (table["peak_memory_mb"] / table["memory_estimate_mb"]).max() > 20
    result = memory_evidence(off, budget_mb=4096, paper_budget_mb=80 * 1024, **kwargs)
    assert result["verdict"] == "inconclusive" and "NOT validated" in result["evidence"]


@pytest.mark.parametrize("large_rows", [10**9])
def test_memory_claim_without_a_large_set_is_inconclusive(large_rows):
    table = _table(_times({1000: 1.0}, {1000: 1.0}))
    result = memory_evidence(table, estimate=lambda m, d, n: 1.0, budget_mb=1, paper_budget_mb=1,
                             full_sizes={"a": 10}, large_rows=large_rows, tolerance=2.0)
    assert result["verdict"] == result["paper_verdict"] == "inconclusive"


def _scaling_table(ours_per_row, theirs_per_row3, sizes, *, trials, noise, seed=0):
    """Fit times ours ~ a n and the baselines' ~ b n^3, with multiplicative lognormal noise per trial."""
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        for method in ("qs3orao", "m-samult", "m-pnu-auc"):
            for trial in range(trials):
                seconds = ours_per_row * size if method == "qs3orao" else theirs_per_row3 * size ** 3
                rows.append({"dataset": "d", "method": method, "n_unlabeled": size, "trial": trial, "status": "ok",
                             "fit_time": seconds * np.exp(noise * rng.normal())})
    return pd.DataFrame(rows)


def test_the_crossover_bracket_point_and_interval_contain_the_true_crossover():
    # ratio = (b / a) n^2 crosses 1 at n = sqrt(a / b) = 3,000
    table = _scaling_table(1e-3, 1e-3 / 3000.0 ** 2, [1000, 2000, 5000, 10000, 20000], trials=5, noise=0.1)
    result = crossover_evidence(table, beyond=10000, min_trials=3)
    found = {c["baseline"]: c for c in result["crossovers"]}
    for c in found.values():
        assert (c["low"], c["high"]) == (2000, 5000) and c["position"] == "between"
        assert c["estimate"] == pytest.approx(3000, rel=0.1)
        low, high = (float(b.replace(",", "")) for b in c["interval"])
        assert low <= 3000 <= high and low < high
    assert "d/m-samult: from 5000 (not faster at 2,000, faster at every measured size from 5,000; median ratio " \
           "crosses 1 at " in result["evidence"]
    assert "2000 resamples" in result["evidence"] and result["verdict"] == "holds"
    # without noise the log-log interpolation is exact, and the bootstrap has nothing to vary
    exact = crossover_size({n: [(n / 3000.0) ** 2] * 3 for n in (1000, 2000, 5000)}, min_trials=3)
    assert exact["estimate"] == pytest.approx(3000, rel=1e-12) and exact["interval"] == ("3,000", "3,000")


def test_the_bootstrap_is_reproducible_and_its_resamples_declared():
    ratios = {1000: [0.5, 0.7, 0.4], 2000: [0.9, 1.3, 1.1], 4000: [3.0, 2.0, 4.0]}
    first = crossover_size(ratios, min_trials=3, resamples=500, seed=3)
    assert first == crossover_size(ratios, min_trials=3, resamples=500, seed=3)
    assert "500 resamples" in first["text"] and "seed 3" in first["text"]
    with pytest.raises(ValueError, match="resamples"):
        crossover_size(ratios, min_trials=3, resamples=0)


def test_a_crossover_outside_the_measured_sizes_is_named_not_extrapolated():
    faster = crossover_size({1000: [2.0, 3.0, 2.5], 5000: [20.0, 30.0, 25.0]}, min_trials=3)
    assert faster["position"] == "below" and np.isnan(faster["estimate"]) and faster["low"] is None
    assert faster["high"] == 1000 and "below the smallest measured size (1,000)" in faster["text"]
    assert faster["interval"] == ("below the smallest measured size (1,000)",) * 2
    slower = crossover_size({1000: [0.1, 0.2, 0.1], 5000: [0.5, 0.6, 0.4]}, min_trials=3)
    assert slower["position"] == "above" and slower["high"] is None and slower["low"] == 5000
    assert "above the largest measured size (5,000)" in slower["text"]
    # a size with too few paired trials neither brackets nor moves the point
    few = crossover_size({1000: [0.5] * 3, 2000: [0.1], 4000: [2.0] * 3}, min_trials=3)
    assert few["sizes"] == [1000, 4000] and (few["low"], few["high"]) == (1000, 4000)
    assert few["estimate"] == pytest.approx(2000, rel=1e-12)


def test_log_log_crossing_matches_the_closed_form():
    # log ratio = 2 log(n / 3000): the crossing is 3000 from any bracketing pair
    sizes = [1000, 2000, 7000]
    assert log_log_crossing(sizes, [2 * np.log(n / 3000) for n in sizes])[1] == pytest.approx(3000, rel=1e-12)
    assert log_log_crossing([1000], [0.0]) == ("above", pytest.approx(np.nan, nan_ok=True))
    with pytest.raises(ValueError):
        log_log_crossing([1000, 2000], [np.inf, 1.0])


def _refusal_table():
    """M-PNU-AUC refused for memory at 20,000; M-SAMULT ran to 20,000, then the pool stopped at 30,000."""
    rows = []
    for method, sizes in (("m-pnu-auc", {5000: "ok", 10000: "ok", 20000: "out_of_memory_budget"}),
                          ("m-samult", {5000: "ok", 10000: "ok", 20000: "ok", 30000: "beyond_pool"})):
        for size, status in sizes.items():
            for trial in range(3):
                known = status != "beyond_pool"
                rows.append({"dataset": "d", "method": method, "size": str(size), "trial": trial, "status": status,
                             "n_unlabeled": size if known else np.nan, "fit_time": 1.0 if status == "ok" else np.nan,
                             "memory_estimate_mb": 9e-5 * size ** 2 if known else np.nan,
                             "memory_budget_mb": 20480.0, "rss_before_fit_mb": 200.0,
                             "peak_memory_mb": 200.0 + 9e-5 * size ** 2 + trial if status == "ok" else 150.0})
    return pd.DataFrame(rows)


def test_measured_refusals_name_the_largest_ran_and_the_first_refused_size_and_why():
    found = {r["baseline"]: r for r in measured_refusals(_refusal_table())}
    pnu, samult = found["m-pnu-auc"], found["m-samult"]
    assert (pnu["largest_ran"], pnu["first_refused"], pnu["kinds"]) == (10000, 20000, ["memory budget"])
    assert pnu["peak_mb"] == pytest.approx(200.0 + 9e-5 * 10000 ** 2 + 2)
    assert (pnu["first_memory_refusal"], pnu["estimate_mb"], pnu["budget_mb"]) == (20000, 36000.0, 20480.0)
    # the pool too small is a refusal of another kind: no memory refusal
    assert (samult["largest_ran"], samult["first_refused"], samult["kinds"]) == (20000, 30000, ["pool too small"])
    assert samult["first_memory_refusal"] is None and samult["estimate_mb"] is None
    with pytest.raises(ValueError, match="memory_budget_mb"):
        measured_refusals(_refusal_table().drop(columns="memory_budget_mb"))
    with pytest.raises(ValueError, match="status"):
        measured_refusals(_refusal_table().replace({"status": {"ok": "fine"}}))


def test_the_memory_evidence_adds_the_measured_refusals_against_the_machine():
    kwargs = dict(estimate=lambda m, d, n: 1e6, budget_mb=20480, paper_budget_mb=80 * 1024,
                  full_sizes={"d": 400_000}, large_rows=100_000, tolerance=2.0)
    evidence = memory_evidence(_refusal_table(), machine_mb=24576, **kwargs)["evidence"]
    assert "d/m-pnu-auc: ran up to 10,000 unlabeled rows (measured peak 9,202 MiB), first not run at 20,000 " \
           "(memory budget); first memory refusal at 20,000: its estimate 36,000 MiB against the budget " \
           "20,480 MiB and the machine's 24,576 MiB (above the machine's memory)" in evidence
    assert "d/m-samult: ran up to 20,000 unlabeled rows (measured peak 36,202 MiB), first not run at 30,000 " \
           "(pool too small)" in evidence
    assert "(within the machine's memory)" in memory_evidence(_refusal_table(), machine_mb=4e4, **kwargs)["evidence"]
    # a run that recorded no machine memory: never this machine's, which need not be the run's
    assert ("20,480 MiB and the machine's memory not recorded"
            in memory_evidence(_refusal_table(), **kwargs)["evidence"])


def test_the_machine_memory_is_the_one_the_run_s_manifest_records(tmp_path):
    results = tmp_path / "results.csv"
    assert run_manifest(results) is None and recorded_machine_mb(None) is None
    (tmp_path / "manifest.json").write_text(json.dumps({"machine": {"memory_gib": 23.5}}))
    assert recorded_machine_mb(run_manifest(results)) == 23.5 * 1024
    (tmp_path / "manifest.json").write_text(json.dumps({"machine": {}}))
    assert recorded_machine_mb(run_manifest(results)) is None
    # what a run's own claims job records: this machine's, from the operating system
    assert 0 < machine_memory_mb() < 2**40


def test_a_refusal_without_any_size_is_refused_and_all_reads_as_the_whole_pool():
    table = _refusal_table()
    unknown = table.assign(size=np.where(table["n_unlabeled"].isna(), "", table["size"]))
    with pytest.raises(ValueError, match="neither n_unlabeled nor a size token"):
        measured_refusals(unknown)
    pool = table.assign(size=np.where(table["n_unlabeled"].isna(), "all", table["size"]))
    found = {r["baseline"]: r for r in measured_refusals(pool)}
    assert found["m-samult"]["first_refused"] == np.inf
    assert "first not run at the whole pool (pool too small)" in memory_evidence(
        pool, estimate=lambda m, d, n: 1.0, budget_mb=1, paper_budget_mb=1, full_sizes={"d": 10}, large_rows=1,
        tolerance=2.0, machine_mb=1.0)["evidence"]
