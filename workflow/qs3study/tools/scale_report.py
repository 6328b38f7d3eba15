"""The scale study's report: time at equal accuracy, crossover sizes and measured refusals.

Reads a run's results table (the scale study's ``results.csv``) and writes into ``--out``:

* ``time_at_accuracy.csv`` and ``time_at_accuracy.png``: per dataset and size, every method's median
  fit time and whether its mean AUC reaches the best exact baseline's
  (:mod:`qs3study.perf.time_at_accuracy`);
* ``scale_summary.md``: time and AUC by size, the crossover size per (dataset, exact baseline)
  with its bracket and bootstrap interval (:func:`qs3study.claims.crossover.crossover_size`), the
  exact baselines' measured refusals (:func:`qs3study.claims.crossover.measured_refusals`), and the
  trials timed beside another load (:func:`qs3study.perf.contention.contended_trials`), the first
  measurements of the jobs rerun for that, kept in ``superseded/`` beside RESULTS
  (:func:`qs3study.tools.set_aside_contended.set_aside_trials`), and the machine sessions the
  trials were timed in (:func:`qs3study.perf.sessions.machine_sessions`).

    python -m qs3study.tools.scale_report figures/scale-paper/results.csv --out figures/scale-paper
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from qs3study.claims.crossover import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, REFUSAL_COLUMNS, crossover_evidence,
                                       measured_refusals, recorded_machine_mb)
from qs3study.claims.empirical import DEFAULT_CRITERIA, EXACT
from qs3study.files import read_columns, refuse_foreign_files, write_with_record
from qs3study.provenance import run_manifest
from qs3study.perf.contention import CONTENDED_MIN_S, CONTENDED_RATIO, contended_trials
from qs3study.perf.sessions import machine_sessions
from qs3study.perf.time_at_accuracy import TARGET_TOLERANCE, plot_time_at_accuracy, time_at_accuracy
from qs3study.stages.tables import one_draw, read_results
from qs3study.tools.set_aside_contended import set_aside_trials

__all__ = ["OUTPUTS", "RECORD", "scale_summary_markdown", "main"]

OUTPUTS = ("time_at_accuracy.csv", "time_at_accuracy.png", "scale_summary.md")
#: The report's record in its output folder: the files it wrote there (it overwrites no other).
RECORD = "scale_report.json"
_READ = tuple(dict.fromkeys(("dataset", "method", "n_unlabeled", "trial", "status", "fit_time", "auc",
                             "trial_wall_s", "job_cpu_s", "machine_session", "calibration_s", *REFUSAL_COLUMNS)))


def _rows(n):
    return "the whole pool" if n == np.inf else f"{n:,.0f}"


def _time_auc_tables(frame):
    lines = []
    for dataset, own in frame.groupby("dataset", sort=True):
        sizes = sorted(own["n_unlabeled"].unique())
        lines += [f"### {dataset}", "", "| method | " + " | ".join(f"{n:,}" for n in sizes) + " |",
                  "|---|" + "---|" * len(sizes)]
        for method, rows in own.groupby("method", sort=True):
            at = rows.set_index("n_unlabeled")
            cells = []
            for n in sizes:
                if n not in at.index:
                    cells.append("-")
                    continue
                r = at.loc[n]
                mark = "" if r["reached"] else f" (short by {r['shortfall']:.3f})"
                cells.append(f"{r['median_fit_time']:.3g} s, {r['mean_auc']:.3f}{mark}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        targets = own.drop_duplicates("n_unlabeled").set_index("n_unlabeled")
        lines.append("| target | " + " | ".join(
            f"{targets.loc[n, 'target_auc']:.3f} ({targets.loc[n, 'target_method']}"
            + ("" if targets.loc[n, "target_kind"] == "best exact baseline" else ", highest of any method")
            + ")" for n in sizes) + " |")
        lines.append("")
    return lines


def scale_summary_markdown(frame, crossovers, refusals, contended, sessions, *, tolerance, machine_mb, min_trials,
                           resamples, seed, set_aside=None):
    """The report's Markdown: time and AUC by size, crossover sizes, measured refusals.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`qs3study.perf.time_at_accuracy.time_at_accuracy`'s table.
    crossovers : list of dict
        ``crossovers`` of :func:`qs3study.claims.crossover.crossover_evidence`.
    refusals : list of dict
        :func:`qs3study.claims.crossover.measured_refusals`.
    contended : pandas.DataFrame
        :func:`qs3study.perf.contention.contended_trials`.
    sessions : pandas.DataFrame
        :func:`qs3study.perf.sessions.machine_sessions`.
    tolerance, machine_mb : float
    min_trials, resamples, seed : int
        The settings the crossovers were computed with (named in the text).
    set_aside : pandas.DataFrame, optional
        :func:`qs3study.tools.set_aside_contended.set_aside_trials` of the run's ``superseded/`` folder.
    """
    lines = ["# Scale study: time, AUC, crossovers and refusals", "",
             "## Time and AUC by size", "",
             f"Median fit time over the finished trials and mean AUC on the unlabeled rows. Target: the mean "
             f"AUC of the best exact baseline at that size (where neither ran, the highest of any method, "
             f"marked); a method short of it by more than {tolerance} is marked with the shortfall.", "",
             *_time_auc_tables(frame),
             "## Crossover sizes", "",
             f"Ratio = baseline / QS3ORAO fit time, paired by trial; sizes with >= {min_trials} paired trials. "
             f"Bracket: the largest size not faster and the smallest from which every size is faster. Point: where "
             f"the median ratio crosses 1, log-log between the sizes around it; {resamples} bootstrap resamples "
             f"over trials within each size, seed {seed}. Never extrapolated past the measured sizes.", "",
             "| dataset | baseline | sizes measured | crossover |", "|---|---|---|---|"]
    lines += [f"| {c['dataset']} | {c['baseline']} | {', '.join(f'{n:,}' for n in c['sizes']) or '-'} | "
              f"{c['text']} |" for c in crossovers]
    lines += ["", "## Measured refusals", "",
              f"Per exact baseline: the largest size at which every trial ran, and the first size at which some "
              f"did not, with why. Only a memory-budget refusal bears on claim 8d; a pool too small is no "
              f"refusal of the method. Machine memory: {machine_mb:,.0f} MiB.", "",
              "| dataset | baseline | largest ran | peak there (MiB) | first not run | why | first memory refusal | "
              "its estimate (MiB) | budget (MiB) | estimate vs machine |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in refusals:
        memory = r["first_memory_refusal"] is not None
        lines.append(" | ".join([
            f"| {r['dataset']}", r["baseline"], "-" if r["largest_ran"] is None else _rows(r["largest_ran"]),
            "-" if r["peak_mb"] is None else f"{r['peak_mb']:,.0f}",
            "-" if r["first_refused"] is None else _rows(r["first_refused"]), ", ".join(r["kinds"]) or "-",
            _rows(r["first_memory_refusal"]) if memory else "-", f"{r['estimate_mb']:,.0f}" if memory else "-",
            f"{r['budget_mb']:,.0f}" if memory else "-",
            ("above" if r["estimate_mb"] > machine_mb else "within") if memory else "-"]) + " |")
    lines += ["", "## Trials timed beside another load", "",
              f"A trial runs one thread: its wall time exceeds its CPU time only while it waits. Trials of at "
              f"least {CONTENDED_MIN_S:g} s whose wall time is more than {CONTENDED_RATIO:g} times their CPU "
              f"time shared their core, and their fit time above overstates the method's.", ""]
    if contended.empty:
        lines.append("None.")
    else:
        lines += ["| dataset | method | size | trial | fit time (s) | trial wall (s) | trial CPU (s) | wall / CPU |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r.dataset} | {r.method} | {_rows(r.n_unlabeled)} | {r.trial} | {r.fit_time:,.1f} | "
                  f"{r.trial_wall_s:,.1f} | {r.job_cpu_s:,.1f} | {r.wall_over_cpu:.2f} |"
                  for r in contended.itertuples()]
    lines += ["", "## Measurements set aside", "",
              "Trials whose job was run again because another load shared its core "
              "(`qs3study.tools.set_aside_contended`); the tables above use the rerun, and these first "
              "measurements are kept in the run's `superseded/` folder.", ""]
    if set_aside is None or set_aside.empty:
        lines.append("None.")
    else:
        lines += ["| record | trial | fit time (s) | trial wall (s) | trial CPU (s) |", "|---|---|---|---|---|"]
        lines += [f"| {r.record} | {r.trial} | {r.fit_time:,.1f} | {r.trial_wall_s:,.1f} | {r.job_cpu_s:,.1f} |"
                  for r in set_aside.itertuples()]
    lines += ["", "## Machine sessions", "",
              "The sessions (boots) the trials were timed in, with the median time of a fixed reference "
              "computation at their jobs' start: fit times from sessions of different speed are not comparable "
              "to better than the ratio of their reference times.", ""]
    if sessions.empty:
        lines.append("Not recorded: this table's trials predate the machine_session and calibration_s columns.")
    else:
        lines += ["| session | trials | reference time (s) | relative to the fastest |", "|---|---|---|---|"]
        lines += [f"| {r.machine_session} | {r.trials} | {r.calibration_s:.4f} | {r.relative_time:.2f} |"
                  for r in sessions.itertuples()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Command-line entry point: write :data:`OUTPUTS` and the record :data:`RECORD` into ``--out``.

    A file of those names that the report did not write (per its record, or unless it holds the same
    bytes) is never overwritten.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the run's results.csv")
    parser.add_argument("--out", type=Path, required=True, help="folder of the run's figures")
    parser.add_argument("--machine-mb", type=float, default=None,
                        help="the memory in MiB of the machine the run measured on (default: its manifest.json "
                             "beside RESULTS)")
    parser.add_argument("--min-trials", type=int, default=DEFAULT_CRITERIA["min_trials"],
                        help="paired trials a size needs to count for the crossover")
    args = parser.parse_args(argv)
    try:
        table = one_draw(read_columns(args.results, _READ, reader=read_results))
        machine_mb = recorded_machine_mb(run_manifest(args.results)) if args.machine_mb is None else args.machine_mb
        if machine_mb is None:
            raise ValueError(f"no manifest.json beside {args.results} records the run's machine memory: "
                             "pass --machine-mb")
        frame = time_at_accuracy(table)
        crossovers = crossover_evidence(table, beyond=DEFAULT_CRITERIA["crossover_rows"]
                                        * DEFAULT_CRITERIA["crossover_slack"], min_trials=args.min_trials,
                                        exact=EXACT)["crossovers"]
        summary = scale_summary_markdown(frame, crossovers, measured_refusals(table, exact=EXACT),
                                         contended_trials(table), machine_sessions(table),
                                         tolerance=TARGET_TOLERANCE, machine_mb=machine_mb,
                                         min_trials=args.min_trials, resamples=BOOTSTRAP_RESAMPLES,
                                         seed=BOOTSTRAP_SEED,
                                         set_aside=set_aside_trials(args.results.parent / "superseded"))
        contents = {"time_at_accuracy.csv": frame.to_csv(index=False).encode(), "scale_summary.md": summary.encode()}
        refuse_foreign_files(args.out, [*OUTPUTS, RECORD], RECORD, contents)
    except (ValueError, OSError) as error:
        print(f"scale_report: {error}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    plot_time_at_accuracy(frame, [args.out / "time_at_accuracy.png"])
    write_with_record(args.out, contents, RECORD, {"inputs": [str(args.results)], "machine_mb": machine_mb},
                      written=["time_at_accuracy.png"])
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
