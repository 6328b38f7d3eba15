"""The end-to-end tests of the pipeline, marked ``slow``, and the main job's runs they share.

The tests here run Snakemake, or the commands of the README and docs/ (``readme.py``) as a user runs
them, so ``python -m pytest -m "not slow"`` leaves them out; ``test_readme_commands.py`` marks its
runs itself, since its checks that every documented command has a case are quick.

Two runs of the main job (the README's first command) are shared by the tests that need them, each
in its own copy, made once per session whatever the number of test workers:

* ``default_run``: the main job run once to completion. In CI, ``.ci/run`` runs the
  same command before pytest and names its directory in ``QS3ORAO_DEFAULT_RUN``, so the
  run is not repeated;
* ``resumed_default_run``: the README's recovery sequence, for real, on a run that is part
  done: a copy of ``default_run`` (its outputs, file times and Snakemake's records) without one
  dataset's prepared arrays, trainings and benchmarks (``REDONE``), the main job started on it
  and killed with ``kill -9`` (its whole process group) while that dataset's training jobs run,
  ``snakemake --unlock``, then the main job again. Starting from the finished run instead of an
  empty folder redoes one dataset's 24 jobs instead of the run's 223 (75 s instead of 410 s).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from readme import REDONE, copy_repository, main_job, result_files, run_command, shared_folder, shell_environment


QUICK_CHECKS = ("test_readme_commands.py",)


@pytest.hookimpl(tryfirst=True)  # before the -m option deselects by marker
def pytest_collection_modifyitems(items):
    folder = Path(__file__).parent
    for item in items:
        if folder in item.path.parents and item.path.name not in QUICK_CHECKS:
            item.add_marker(pytest.mark.slow)

def finished(checkout):
    return (checkout / "results" / "tables" / "results.csv").is_file()


def unfinished_elsewhere(folder):
    """Fail if an earlier attempt (another worker's) left ``folder`` without finishing it."""
    if folder.exists():
        pytest.fail(f"another worker's attempt in {folder} did not finish: see that worker's failure")


@pytest.fixture(scope="session")
def default_run(tmp_path_factory, worker_id):
    """A finished run of the README's main job (``QS3ORAO_DEFAULT_RUN`` names one made before pytest)."""
    given = os.environ.get("QS3ORAO_DEFAULT_RUN")
    if given:
        checkout = Path(given)
        assert finished(checkout), f"{given} holds no finished run"
        return checkout
    with shared_folder(tmp_path_factory, worker_id, "default") as folder:
        checkout = folder / "qs3orao"
        if not finished(checkout):
            unfinished_elsewhere(folder)
            copy_repository(checkout)
            run_command(checkout, main_job())
    return checkout


def part_done_copy(run, checkout):
    """A copy of the finished ``run`` under ``checkout`` that lacks the data, trainings and benchmarks of
    :data:`REDONE` (file times and Snakemake's records kept, so nothing else looks out of date)."""
    shutil.copytree(run, checkout, symlinks=True, ignore=shutil.ignore_patterns("report.html"))
    for folder in ("results/data", "results/runs", "benchmarks/train"):
        shutil.rmtree(checkout / folder / REDONE)
    if not (checkout / ".venv").exists():  # .ci/run's run used the repository's environment
        (checkout / ".venv").symlink_to(Path(sys.prefix))
    return checkout


@pytest.fixture(scope="session")
def resumed_default_run(tmp_path_factory, worker_id, default_run):
    """The README's recovery sequence on the main job: ``kill -9``, ``snakemake --unlock``, the main job again.

    Returns
    -------
    checkout : pathlib.Path
    record : dict
        ``redone_before_kill`` (:data:`REDONE`'s result files at the kill), ``unlock_output`` (what
        ``snakemake --unlock`` printed) and ``carried_over`` (every other result file's
        modification time before the run, by path under ``checkout``).
    """
    with shared_folder(tmp_path_factory, worker_id, "resumed") as folder:
        checkout = folder / "qs3orao"
        record = folder / "record.json"
        if not record.is_file():
            unfinished_elsewhere(folder)
            part_done_copy(default_run, checkout)
            carried_over = {str(p.relative_to(checkout)): p.stat().st_mtime_ns for p in result_files(checkout)}
            record.write_text(json.dumps({**kill_unlock_rerun(checkout), "carried_over": carried_over}))
        return checkout, json.loads(record.read_text())


def kill_unlock_rerun(checkout):
    process = subprocess.Popen(["bash", "-c", main_job()], cwd=checkout, env=shell_environment(checkout),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 900
        while len(result_files(checkout, REDONE)) < 6 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert process.poll() is None, "the main job finished (or died) before it could be killed"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # kill -9 of the whole run, jobs included
        process.wait()
    redone_before_kill = len(result_files(checkout, REDONE))
    unlock = run_command(checkout, "snakemake --unlock")
    run_command(checkout, main_job())
    return {"redone_before_kill": redone_before_kill, "unlock_output": unlock.stdout + unlock.stderr}
