"""The environment of one job: its log, its thread pools, its memory peak, the package versions."""

from __future__ import annotations

import logging
import platform
import resource
import sys
import traceback
from importlib import metadata

__all__ = ["VERSION_PACKAGES", "setup_logging", "limit_threads", "peak_rss_mb", "process_cpu_s", "package_versions"]

VERSION_PACKAGES = ("qs3orao", "numpy", "scipy", "scikit-learn", "skordinal", "pandas", "snakemake")


def setup_logging(log_path):
    """Send this process's stdout, stderr, warnings and ``logging`` to the rule's log file.

    An error that ends the job is also summarised on the job's own stderr, with the log's path, so
    that Snakemake's output says why a job failed (the traceback stays in the log).
    """
    stream = open(log_path, "w", buffering=1)  # noqa: SIM115 - lives as long as the job
    sys.stdout = sys.stderr = stream
    terminal = sys.__stderr__

    def report_and_log(kind, error, trace):
        traceback.print_exception(kind, error, trace, file=stream)
        print(f"{kind.__name__}: {' '.join(str(error).split())}\n(traceback in {log_path})", file=terminal, flush=True)

    sys.excepthook = report_and_log
    logging.basicConfig(stream=stream, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s",
                        force=True)
    logging.captureWarnings(True)
    return logging.getLogger("qs3orao.workflow")


def limit_threads(n_threads):
    """Cap BLAS/OpenMP pools at the job's ``threads`` (the scheduler's accounting)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=int(n_threads))


def peak_rss_mb():
    """Peak resident set size of this process so far, in MiB (Linux ``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def process_cpu_s():
    """CPU seconds of this process since it started (user and system), its waited-for children's included.

    A job's own account of its cost: start-up and imports included, and exact for a job of any length.
    Snakemake's ``benchmark:`` ``cpu_time`` is not: it samples the job's processes every half second
    for their first 15 seconds or so, then every 30 seconds, and keeps the last sample, so it leaves out
    what a job spends after it (Snakemake 9.27 recorded a job of 40.7 CPU seconds as 15.1).
    """
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def package_versions():
    """Versions of the packages that determine a result, plus Python's."""
    versions = {"python": platform.python_version()}
    for name in VERSION_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions
