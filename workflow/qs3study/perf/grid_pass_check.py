"""Is ``grid_pass_ratio`` at most 3 in a typical run of the perf rule?  A confirmatory check.

    python -m qs3study.perf.grid_pass_check

The perf rule's one-pass measurement (:func:`qs3study.perf.summary.grid_pass_ratio` at
the schema's ``perf.grid_pass`` defaults and seed, each row the median of its
alternating rounds) can vary from run to run on a 2-core machine by more than
its distance from the target.  This check runs the measurement :data:`RUNS` times, each
in a fresh process as the rule runs it, and judges every ``grid_pass_ratio``
row by a distribution-free interval for the median of its run values: the
order statistics ``[x_(k), x_(n+1-k)]`` with the largest ``k`` whose coverage
is at least :data:`LEVEL` (10 runs: ``[x_(2), x_(9)]``, coverage 0.979).

The verdict of a row is "holds" when the interval's upper end is at most
:data:`TARGET`, "fails" when its lower end exceeds it, and "inconclusive"
otherwise.  The design (runs, level, target, workload) is fixed here before the
check is run.  Prints one line per run and one per row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import binom

__all__ = ["RUNS", "LEVEL", "TARGET", "median_interval", "target_verdict", "grid_pass_settings"]

RUNS = 10
LEVEL = 0.95
TARGET = 3.0
_SCHEMA = Path(__file__).resolve().parents[2] / "config" / "schema.yaml"


def median_interval(values, level=LEVEL):
    """The order-statistic interval for the median of ``values``'s distribution, and its coverage.

    Parameters
    ----------
    values : array-like of float
        Independent draws of one quantity.
    level : float
        Least coverage accepted.

    Returns
    -------
    low, high : float
        ``x_(k)`` and ``x_(n+1-k)`` of the sorted values, for the largest ``k``
        whose interval covers the median with probability at least ``level``.
    coverage : float
        That probability, ``1 - 2 P(Binomial(n, 1/2) <= k - 1)``.

    Raises
    ------
    ValueError
        If no interval of ``len(values)`` values reaches ``level`` (fewer than 6 values at 0.95).
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    ks = np.arange(1, n // 2 + 1)
    coverage = 1.0 - 2.0 * binom.cdf(ks - 1, n, 0.5)
    reached = ks[coverage >= level]
    if not reached.size:
        raise ValueError(f"{n} values cannot bound the median at level {level}: the widest interval, their "
                         f"range, covers it with probability {1.0 - 2.0 * 0.5 ** n:.4f}")
    k = int(reached.max())
    return float(x[k - 1]), float(x[n - k]), float(coverage[k - 1])


def target_verdict(values, target=TARGET, level=LEVEL):
    """"holds" if the median's interval lies at or below ``target``, "fails" if above it, else "inconclusive"."""
    low, high, _ = median_interval(values, level)
    if high <= target:
        return "holds"
    if low > target:
        return "fails"
    return "inconclusive"


def grid_pass_settings(schema=_SCHEMA):
    """The perf rule's default ``grid_pass`` settings and seed, read from the workflow's schema."""
    perf = yaml.safe_load(Path(schema).read_text())["properties"]["perf"]["properties"]
    return perf["grid_pass"]["default"], perf["seed"]["default"]


def _one_run():
    """Print one run's ``[metric, value]`` rows as JSON (the child process's job)."""
    from qs3study.perf.summary import grid_pass_ratio

    settings, seed = grid_pass_settings()
    print(json.dumps([[metric, value] for metric, value, _ in grid_pass_ratio(**settings, seed=seed)]))


def main(command=None):
    """Run the measurement :data:`RUNS` times, one fresh process each, and print every row's verdict.

    Parameters
    ----------
    command : list of str, optional
        The child process, which prints one run's ``[metric, value]`` rows as
        JSON on its last line; by default this module's ``--one-run``.
    """
    if command is None:
        command = [sys.executable, "-m", "qs3study.perf.grid_pass_check", "--one-run"]
    runs = []
    for run in range(RUNS):
        child = subprocess.run(command, capture_output=True, text=True)
        if child.returncode:
            sys.exit(f"run {run + 1}/{RUNS} failed (exit {child.returncode}):\n{child.stderr}")
        runs.append(dict(json.loads(child.stdout.splitlines()[-1])))
        print(f"run {run + 1}/{RUNS}: " + "  ".join(f"{m} {v:.2f}" for m, v in runs[-1].items()), flush=True)
    for metric in runs[0]:
        values = [r[metric] for r in runs]
        low, high, coverage = median_interval(values)
        verdict = target_verdict(values) if metric.startswith("grid_pass_ratio[") else "context"
        print(f"{metric}: median {np.median(values):.2f}, range {min(values):.2f}-{max(values):.2f}, "
              f"median within [{low:.2f}, {high:.2f}] (coverage {coverage:.3f}); at most {TARGET:g}: {verdict}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--one-run"]:
        _one_run()
    elif sys.argv[1:]:
        sys.exit("usage: python -m qs3study.perf.grid_pass_check (no arguments)")
    else:
        main()
