"""The manifest beside the figures: which configuration, commit, date and data made them."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from qs3study.datasets import sha256_file

from .cpu_baseline import cpu_code
from .files import read_json, write_json
from .runtime import package_versions, setup_logging

__all__ = ["RESTORED", "git_state", "machine", "job_times", "jobs_cpu_s", "manifest_job", "run_manifest"]

#: Where :mod:`qs3study.tools.run_archive` records each restore of a run's archived jobs; the manifest lists them.
RESTORED = "results/restored"


def run_manifest(results):
    """The manifest of the run whose results table is ``results`` (``manifest.json`` beside it), or None if absent."""
    path = Path(results).parent / "manifest.json"
    return read_json(path) if path.exists() else None


def git_state(root):
    """Commit of the working tree at ``root`` and whether it has uncommitted changes (read-only git).

    ``figures/`` is left out of the check: the run itself rewrites its configuration's committed figures.
    """
    def run(*args):
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    status = run("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)figures")
    return {"commit": run("rev-parse", "HEAD"), "dirty": None if status is None else bool(status)}


def machine():
    """The machine the run used: host, platform, processor, logical CPUs and memory (GiB)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = None
    return {"node": platform.node(), "platform": platform.platform(), "processor": platform.processor(),
            "cpu_count": os.cpu_count(), "memory_gib": memory}


def read_benchmark(path):
    """Wall time, peak RSS (MiB) and CPU time of one Snakemake ``benchmark:`` record."""
    record = pd.read_csv(path, sep="\t").iloc[0]
    return {"bench_s": float(record["s"]), "bench_max_rss_mb": _float(record.get("max_rss")),
            "bench_cpu_time": _float(record.get("cpu_time"))}


def _float(value):
    try:
        return float(value)
    except (TypeError, ValueError):  # Snakemake writes "NA" when it could not measure
        return np.nan


def job_times(paths, now=None):
    """Total job time and CPU time of Snakemake benchmark records, the wall time since the first started,
    and the time during which some job ran.

    A job's start is its record's modification time minus its duration (the
    record is written when the job ends). The wall time runs from the earliest
    start to ``now`` (default: the current time): it covers the jobs of this
    run that the records list, not the downloads, and for a run stopped and
    resumed later it includes the pause. The busy time is the length of the
    union of the jobs' intervals: it leaves out every stretch in which none of
    them ran (a pause between sessions, the untimed jobs after the last one).

    Returns
    -------
    dict
        ``job_s`` (sum of job durations), ``cpu_s`` (sum of the jobs' CPU times as Snakemake sampled
        them; NaN where it could not measure one, so a missing record shows; it leaves out most of
        every job longer than about 15 s and counts the job's wrapping processes too, so it is no bound
        either way: the jobs' own ``job_cpu_s`` (:func:`qs3study.runtime.process_cpu_s`) is exact), ``wall_time_s`` and ``busy_s`` (None
        without records), ``n_jobs``.
    """
    now = datetime.datetime.now().timestamp() if now is None else now
    records = [(Path(p).stat().st_mtime, read_benchmark(p)) for p in paths]
    if not records:
        return {"job_s": 0.0, "cpu_s": 0.0, "wall_time_s": None, "busy_s": None, "n_jobs": 0}
    intervals = sorted((mtime - r["bench_s"], mtime) for mtime, r in records)
    busy, (start, end) = 0.0, intervals[0]
    for low, high in intervals[1:]:
        if low > end:
            busy, start, end = busy + end - start, low, high
        else:
            end = max(end, high)
    return {"job_s": float(sum(r["bench_s"] for _, r in records)),
            "cpu_s": float(sum(r["bench_cpu_time"] for _, r in records)),
            "wall_time_s": float(now - intervals[0][0]), "busy_s": float(busy + end - start),
            "n_jobs": len(records)}


def jobs_cpu_s(paths, field="job_cpu_s"):
    """Sum of the CPU seconds that JSON records say they used (``field``).

    The tuning jobs' and the trials' records have ``job_cpu_s`` (the process that
    wrote them); a training job's ``batch.json`` has ``own_cpu_s`` (the job's process
    beyond its trials'). NaN if a record lacks it (one written before jobs recorded it,
    e.g. restored from an older archive), so that a partial sum never passes for the whole.
    """
    seconds = [read_json(path).get(field) for path in paths]
    return float("nan") if None in seconds else float(sum(seconds))


def manifest_job(smk):
    """Snakemake job of rule ``manifest``: configuration, commit, date, data checksums and versions.

    Its ``time`` block, per rule (``train``, ``tune``) and for ``all``: :func:`job_times` from
    Snakemake's benchmark records, and ``job_cpu_s`` (:func:`jobs_cpu_s`), the CPU the jobs
    themselves measured (a training job's: its trials' processes and its own).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    setup_logging(smk.log[0])
    downloads = {read_json(p)["dataset"]: read_json(p) for p in smk.input.downloads}
    data = {}
    for info_path, x_path, y_path in zip(smk.input.infos, smk.input.X, smk.input.y, strict=True):
        info = read_json(info_path)
        data[info["dataset"]] = {
            "source": downloads.get(info["dataset"], {}).get("source", "embedded"),
            "file_sha256": downloads.get(info["dataset"], {}).get("sha256"),
            "X_sha256": sha256_file(x_path), "y_sha256": sha256_file(y_path),
            "n_rows": info["n_rows"], "n_features": info["n_features"], "bin_counts": info["bin_counts"],
        }
    train_cpu_s = jobs_cpu_s(smk.params.runs) + jobs_cpu_s(smk.params.batch_records, "own_cpu_s")
    tune_cpu_s = jobs_cpu_s(smk.input.tune_records)
    write_json(smk.output[0], {
        "configuration": smk.config["name"],
        "config": smk.config,
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": git_state(smk.params.root),
        "results_sha256": sha256_file(smk.input.table),
        "figures": sorted(smk.params.figures),
        "data": data,
        "kernel_width": smk.params.kernel_width,
        "tuning_per": smk.params.tuning_per,
        "time": {"train": {**job_times(smk.input.benchmarks), "job_cpu_s": train_cpu_s},
                 "tune": {**job_times(smk.input.tune_benchmarks), "job_cpu_s": tune_cpu_s},
                 "all": {**job_times([*smk.input.benchmarks, *smk.input.tune_benchmarks]),
                         "job_cpu_s": train_cpu_s + tune_cpu_s}},
        "machine": machine(),
        "cpu_code": cpu_code(),
        "versions": package_versions(),
        "restored": [read_json(path) for path in sorted(Path(RESTORED).glob("*.json"))],
    })
