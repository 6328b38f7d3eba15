"""Claims 8c and 8d read where both methods ran, on generated results tables."""

import pandas as pd
import pytest

from qs3study.claims.crossover import crossover_evidence, memory_evidence


def _table(times, *, trials=3, oom_sizes=()):
    """Rows of a results table: ``times[(method, size)]`` is the fit time of every trial."""
    rows = []
    for (method, size), seconds in times.items():
        for trial in range(trials):
            status = "out_of_memory_budget" if method != "qs3orao" and size in oom_sizes else "ok"
            rows.append({"dataset": "d", "method": method, "n_unlabeled": size, "trial": trial, "status": status,
                         "fit_time": seconds * (1.0 + 0.01 * trial) if status == "ok" else float("nan"),
                         "memory_estimate_mb": 8e-6 * size ** 2, "rss_before_fit_mb": 200.0,
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
