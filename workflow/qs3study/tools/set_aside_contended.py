"""Set aside a run's training jobs that were timed beside another load, so that Snakemake runs them again.

The studies' configurations declare that the job of a trial timed beside another load
(:func:`qs3study.perf.contention.contended`) is rerun with no other load competing for its core, and
that both measurements are kept. Run in the run's folder, this moves each such job's output folder
``results/runs/<job>/`` with its benchmark ``benchmarks/train/<job>.tsv`` and log
``logs/train/<job>.log`` to ``results/superseded/contended/<job>/``, or for a job set aside before,
to ``results/superseded/contended-2/<job>/`` and so on (where the run's archive carries them, :mod:`qs3study.tools.run_archive`). The run's command, with ``all`` and the moved job folders
as its targets, then runs those jobs again and everything after them: a finished run's missing
intermediate outputs alone make Snakemake run nothing. No measurement set aside is ever replaced.

    python -m qs3study.tools.set_aside_contended --dry-run     # list the jobs
    python -m qs3study.tools.set_aside_contended               # move them, print the targets
    snakemake <the run's options> all $(python -m qs3study.tools.set_aside_contended --targets)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pandas as pd

from qs3study.perf.contention import contended

__all__ = ["RUNS", "SUPERSEDED", "contended_jobs", "set_aside", "set_aside_jobs", "set_aside_trials", "superseded_folders",
           "main"]

#: Training jobs' output folders, one per job, relative to the run's folder.
RUNS = Path("results/runs")
#: Where set-aside jobs go, under their path relative to :data:`RUNS`; a job's k-th measurement set aside
#: (k >= 2) goes to this folder's name with ``-k`` appended.
SUPERSEDED = Path("results/superseded/contended")
_COMPANIONS = {"benchmark.tsv": ("benchmarks/train", ".tsv"), "job.log": ("logs/train", ".log")}


def contended_jobs(root):
    """The training jobs of a run with at least one trial timed beside another load.

    Parameters
    ----------
    root : pathlib.Path
        The run's folder.

    Returns
    -------
    list of pathlib.Path
        Each job's folder relative to :data:`RUNS`, sorted.
    """
    records = [{**json.loads(path.read_text()), "job": path.parent.relative_to(root / RUNS)}
               for path in sorted((root / RUNS).glob("**/trial*.json"))]
    trials = pd.DataFrame(records, columns=["job", "status", "trial_wall_s", "job_cpu_s"])
    trials[["trial_wall_s", "job_cpu_s"]] = trials[["trial_wall_s", "job_cpu_s"]].astype(float)
    return sorted(set(trials.loc[contended(trials), "job"]))


def superseded_folders(root):
    """The folders of set-aside measurements that exist in a run: :data:`SUPERSEDED`, then ``-2``, ``-3`` ...

    Parameters
    ----------
    root : pathlib.Path
        The run's folder.

    Returns
    -------
    list of pathlib.Path
        Relative to ``root``, in order.
    """
    folders, k = [], 1
    while (root / _numbered(k)).exists():
        folders.append(_numbered(k))
        k += 1
    return folders


def _numbered(k):
    return SUPERSEDED if k == 1 else SUPERSEDED.with_name(f"{SUPERSEDED.name}-{k}")


def set_aside_jobs(root):
    """The jobs of a run set aside so far: each job folder that holds trials in :func:`superseded_folders`.

    Parameters
    ----------
    root : pathlib.Path
        The run's folder.

    Returns
    -------
    list of pathlib.Path
        Job folders relative to their superseded folder (and so to :data:`RUNS`), sorted, each once.
    """
    return sorted({path.parent.relative_to(root / folder) for folder in superseded_folders(root)
                   for path in (root / folder).glob("**/trial*.json")})


def set_aside_trials(folder):
    """The trial records kept under a folder of set-aside measurements, one row per trial.

    Parameters
    ----------
    folder : pathlib.Path
        A run's ``results/superseded/`` or its committed copy ``figures/<name>/superseded/``.

    Returns
    -------
    pandas.DataFrame
        ``record`` (the trial's folder relative to ``folder``), ``dataset, method, n_unlabeled, tuning_draw,
        trial, fit_time, trial_wall_s, job_cpu_s``, sorted; empty when the folder holds none.
    """
    columns = ["dataset", "method", "n_unlabeled", "tuning_draw", "trial", "fit_time", "trial_wall_s", "job_cpu_s"]
    paths = sorted(Path(folder).glob("**/trial*.json"))
    rows = [{**json.loads(path.read_text()), "record": str(path.parent.relative_to(folder))} for path in paths]
    return pd.DataFrame(rows, columns=["record", *columns])


def set_aside(root, jobs):
    """Move each job's outputs, benchmark and log to the first superseded folder that does not hold the job yet.

    Parameters
    ----------
    root : pathlib.Path
        The run's folder.
    jobs : list of pathlib.Path
        Job folders relative to :data:`RUNS` (:func:`contended_jobs`).
    """
    for job in jobs:
        k = 1
        while (root / _numbered(k) / job).exists():
            k += 1
        target = root / _numbered(k) / job
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(root / RUNS / job, target)
        for name, (folder, suffix) in _COMPANIONS.items():
            companion = root / folder / job.with_name(job.name + suffix)
            if companion.exists():
                shutil.move(companion, target / name)


def main(argv=None):
    """Command-line entry point: list, and unless ``--dry-run`` set aside, the run's contended jobs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the run's folder (default: here)")
    parser.add_argument("--dry-run", action="store_true", help="list the jobs without moving them")
    parser.add_argument("--targets", action="store_true",
                        help="print only the Snakemake targets of the jobs set aside so far, one line")
    args = parser.parse_args(argv)
    try:
        if args.targets:
            print(" ".join(str(RUNS / job) for job in set_aside_jobs(args.root)))
            return 0
        jobs = contended_jobs(args.root)
        print(f"{len(jobs)} training job(s) with a trial timed beside another load")
        for job in jobs:
            print(f"  {job}")
        if not args.dry_run and jobs:
            set_aside(args.root, jobs)
            print(f"moved under {SUPERSEDED.parent}; run the run's command with no other load on the machine and the "
                  f"targets: all {' '.join(str(RUNS / job) for job in jobs)}")
    except (ValueError, OSError) as error:
        print(f"set_aside_contended: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
