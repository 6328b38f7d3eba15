"""The time-to-accuracy benchmark's bookkeeping: rows, stop rule, crossover (not its timings)."""

import numpy as np

from qs3study.perf.time_to_accuracy import _crossover, exact_memory, run_sweep, summary_rows

SETTINGS = dict(n_labeled=40, n_features=2, n_classes=3, objective=dict(gamma=1.0, lam=0.5, tradeoff=0.5),
                qs3orao_params=dict(batch_size=4, n_components=4), n_iters=[50, 100], feature_widths=[16, 32],
                auc_tolerance=0.05, distance_tolerance=0.5, repeats=3, seed=0)


def test_sweep_stops_where_the_exact_reference_leaves_the_budget_and_says_so():
    budget_mb = exact_memory(40 + 80) / 2**20 * 1.01
    records, stop = run_sweep(sizes=[60, 80, 120], memory_budget_mb=budget_mb, **SETTINGS)
    assert {r["n_unlabeled"] for r in records} == {60, 80}
    assert "stopped before 120 unlabeled rows" in stop
    methods = {r["method"] for r in records}
    assert methods == {"exact-f*", "qs3orao", "qs3orao-auto", "rff-auc", "nystrom-auc", "m-pnu-auc", "m-samult"}
    rows = summary_rows(records, stop, auc_tolerance=0.05, distance_tolerance=0.5, repeats=3)
    names = [name for name, _, _ in rows]
    assert "time_to_accuracy[qs3orao-auto,60]" in names and "crossover_at_equal_accuracy[m-samult]" in names
    for record in records:
        # An accurate record meets both tolerances; an inaccurate one has no time.
        if np.isfinite(record["time"]) and record["method"] in {"qs3orao", "qs3orao-auto", "rff-auc", "nystrom-auc"}:
            assert record["auc_gap"] <= 0.05 and record["distance"] <= 0.5


def test_crossover_interpolates_log_log_between_the_bracketing_sizes():
    ours = {1000: 2.0, 4000: 4.0}
    theirs = {1000: 1.0, 4000: 8.0}  # ratio 1/2 then 2: equal at the geometric middle
    value, how = _crossover(ours, theirs)
    assert np.isclose(value, 2000.0) and "interpolated" in how
    assert np.isnan(_crossover({1000: 2.0}, {1000: 1.0})[0])
    assert _crossover({1000: 1.0}, {1000: 2.0})[0] == 1000.0
    # Faster, then slower again at the largest size: no crossover.
    assert np.isnan(_crossover({1000: 1.0, 2000: 2.0}, {1000: 2.0, 2000: 1.0})[0])
    # Faster, slower, faster: the crossover is the last change, between 2000 and 4000.
    value, _ = _crossover({1000: 1.0, 2000: 2.0, 4000: 1.0}, {1000: 2.0, 2000: 1.0, 4000: 2.0})
    assert 2000 < value < 4000
    # Sizes one side could not time are left out.
    assert _crossover({1000: np.nan, 2000: 1.0}, {1000: 1.0, 2000: 2.0})[0] == 2000.0
