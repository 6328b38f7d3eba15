"""Trials timed beside another load: a one-thread trial whose wall time well exceeds its CPU time.

A training trial runs one thread, so its wall time exceeds its process's CPU
time only while it waits: for the core (another load beside it) or for input.
Such a trial's ``fit_time`` overstates the method's. The studies' fit times are
wall-clock times; their configurations declare that the jobs of the trials
listed here are rerun without a competing load before the study is committed.

    python -m qs3study.perf.contention figures/scale-paper/results.csv
"""

from __future__ import annotations

import argparse
import sys

from qs3study.files import read_columns
from qs3study.stages.tables import read_results

__all__ = ["CONTENDED_MIN_S", "CONTENDED_RATIO", "contended", "contended_trials", "main"]

#: Wall over CPU time beyond which a trial counts as timed beside another load.
CONTENDED_RATIO = 1.5
#: Trials shorter than this (s) are not judged: reading the data is a large part of their wall time.
CONTENDED_MIN_S = 10.0


def contended_trials(table, ratio=CONTENDED_RATIO, min_s=CONTENDED_MIN_S):
    """The finished trials whose wall time exceeds their CPU time by more than ``ratio``.

    Parameters
    ----------
    table : pandas.DataFrame
        Results (:func:`qs3study.stages.tables.read_results`) with at least ``dataset, method, n_unlabeled,
        tuning_draw, trial, status, fit_time, trial_wall_s, job_cpu_s``.
    ratio : float
        Wall over CPU time beyond which a trial counts as timed beside another load.
    min_s : float
        Trials of a shorter wall time are not judged.

    Returns
    -------
    pandas.DataFrame
        ``dataset, method, n_unlabeled, tuning_draw, trial, fit_time, trial_wall_s, job_cpu_s, wall_over_cpu``,
        sorted.
    """
    columns = ["dataset", "method", "n_unlabeled", "tuning_draw", "trial", "fit_time", "trial_wall_s", "job_cpu_s",
               "wall_over_cpu"]
    found = table[contended(table, ratio, min_s)]
    found = found.assign(wall_over_cpu=found["trial_wall_s"] / found["job_cpu_s"])
    return found[columns].sort_values(columns[:5]).reset_index(drop=True)


def contended(table, ratio=CONTENDED_RATIO, min_s=CONTENDED_MIN_S):
    """Whether each trial of ``table`` finished and was timed beside another load.

    Parameters
    ----------
    table : pandas.DataFrame
        With at least ``status, trial_wall_s, job_cpu_s``.
    ratio, min_s : float
        As in :func:`contended_trials`.

    Returns
    -------
    pandas.Series of bool
        Indexed like ``table``.
    """
    return (table["status"] == "ok") & (table["trial_wall_s"] >= min_s) & (
        table["trial_wall_s"] > ratio * table["job_cpu_s"])


def main(argv=None):
    """Command-line entry point: print the contended trials of a results table; exit status 0 either way."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a run's results.csv")
    args = parser.parse_args(argv)
    columns = ("dataset", "method", "n_unlabeled", "tuning_draw", "trial", "status", "fit_time", "trial_wall_s",
               "job_cpu_s")
    try:
        found = contended_trials(read_columns(args.results, columns, reader=read_results))
    except (ValueError, OSError) as error:
        print(f"contention: {error}", file=sys.stderr)
        return 1
    print(f"{len(found)} trial(s) of at least {CONTENDED_MIN_S:g} s with wall time > {CONTENDED_RATIO:g} x CPU time")
    if not found.empty:
        print(found.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
