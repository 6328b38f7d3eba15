"""The environment of one job: its log, its thread pools, its memory peak and CPU time, its trials' processes,
the package versions, the machine session it ran in and that machine's speed."""

from __future__ import annotations

import dataclasses
import logging
import os
import platform
import resource
import signal
import sys
import time
import traceback
from importlib import metadata
from pathlib import Path

__all__ = ["VERSION_PACKAGES", "setup_logging", "limit_threads", "peak_rss_mb", "process_cpu_s", "own_cpu_s",
           "ProcessEnd", "run_forked", "package_versions", "machine_session", "calibration_s"]

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
    what a job spends after it.
    """
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own_cpu_s() + children.ru_utime + children.ru_stime


def own_cpu_s():
    """CPU seconds of this process alone (user and system), its children's left out."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


@dataclasses.dataclass(frozen=True)
class ProcessEnd:
    """How a process :func:`run_forked` started ended, and what it used, as its parent measured it (``os.wait4``).

    Attributes
    ----------
    exit_code : int
        Its exit status, or minus the number of the signal that ended it (``os.waitstatus_to_exitcode``).
    wall_s : float
        Seconds from the fork to its end.
    max_rss_mb : float
        Its peak resident set size, MiB: from the memory it shared with its parent at the fork, not the parent's peak.
    cpu_s : float
        Its CPU seconds (user and system), its own waited-for children's included.
    """

    exit_code: int
    wall_s: float
    max_rss_mb: float
    cpu_s: float

    @property
    def failure(self):
        """None for a process that exited with status 0, else what ended it, in words."""
        if self.exit_code == 0:
            return None
        if self.exit_code > 0:
            return f"its process exited with status {self.exit_code}"
        name = signal.Signals(-self.exit_code).name
        cause = " (the kernel's out-of-memory killer sends it, among others)" if name == "SIGKILL" else ""
        return f"its process was ended by signal {-self.exit_code} ({name}){cause}"


def run_forked(func):
    """Call ``func()`` in a child process forked from this one, and wait for it to end.

    The child starts with everything this process has imported, so it pays no
    start-up, and ends with ``os._exit``: status 0 when ``func`` returns, 1 when
    it raises (the traceback goes to ``sys.stderr``, the job's log).  What the
    child allocates dies with it, and its peak memory and CPU time are its own
    (``getrusage`` in the child counts from the fork).  If this process is
    interrupted while it waits (``KeyboardInterrupt``, or ``SystemExit`` from a
    signal handler), the child is killed and waited for before the interruption
    goes on, so that no trial outlives its job.

    Returns
    -------
    ProcessEnd

    Raises
    ------
    RuntimeError
        On a platform without ``os.fork`` (Windows).
    """
    if not hasattr(os, "fork"):
        raise RuntimeError("the training jobs run each trial in a forked process, which needs a POSIX system "
                           "(os.fork); this platform has none")
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            func()
            code = 0
        except BaseException:  # noqa: BLE001 - reported in the log and by the exit status
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    try:
        _, status, usage = os.wait4(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    return ProcessEnd(exit_code=os.waitstatus_to_exitcode(status), wall_s=time.perf_counter() - start,
                      max_rss_mb=usage.ru_maxrss / 1024.0, cpu_s=usage.ru_utime + usage.ru_stime)


def package_versions():
    """Versions of the packages that determine a result, plus Python's."""
    versions = {"python": platform.python_version()}
    for name in VERSION_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


BOOT_ID = "/proc/sys/kernel/random/boot_id"


def machine_session(boot_id=BOOT_ID):
    """The machine session a job runs in: Linux's boot id, the same for every job between two boots.

    A run carried across machines (:mod:`qs3study.tools.run_archive`) has its trials timed on
    several; times from different sessions are not comparable to better than the machines' speeds
    (:func:`calibration_s`). None where the system has no boot id.
    """
    try:
        return Path(boot_id).read_text().strip()
    except OSError:
        return None


#: The reference computation of :func:`calibration_s`: a float64 matrix product of this order, and the cosine of
#: that many squared values, the two kinds of work the methods' fits spend their time on.
CALIBRATION_ORDER = 384
CALIBRATION_REPEATS = 3


def calibration_s():
    """Seconds one thread of this process takes for a fixed reference computation: the machine's speed now.

    The median over :data:`CALIBRATION_REPEATS` of a matrix product of order :data:`CALIBRATION_ORDER`
    (113 MFLOP) and the cosine of as many values squared; tens of milliseconds. Recorded beside each
    trial's times, it puts times measured on different machines (or beside another load) side by side.
    """
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((CALIBRATION_ORDER, CALIBRATION_ORDER))
    times = []
    with limit_threads(1):
        for _ in range(CALIBRATION_REPEATS):
            start = time.perf_counter()
            np.cos(a @ a)
            np.cos(np.repeat(a, 8, axis=0))
            times.append(time.perf_counter() - start)
    return float(np.median(times))
