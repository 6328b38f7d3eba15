"""The commands of the README and docs/, run as a user runs them: from the top of a scratch copy of the repository.

Two runs of the main job (the README's first command) are shared by the tests that
need them, each in its own copy, made once per session whatever the number of test workers:

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

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qs3study.design import TRIAL_RESULT

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
VENV_BIN = Path(sys.executable).parent


def documents():
    """The documents whose commands are tested: README.md, then docs/*.md in name order."""
    return [README, *sorted((REPO / "docs").glob("*.md"))]


def readme_commands():
    """Every command README.md and docs/*.md show: bash code-block lines and inline code that starts a program we ship.

    Returns
    -------
    list of str
        In reading order (README first), without repeats.
    """
    text = "\n".join(path.read_text() for path in documents())
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        commands += [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    commands += [span for span in re.findall(r"`([^`\n]+)`", prose)
                 if span.split()[0] in ("snakemake", ".venv/bin/snakemake", ".venv/bin/python")]
    return list(dict.fromkeys(commands))


def copy_repository(destination):
    """The repository's files (tracked and untracked, not ignored) under ``destination``, as a user's checkout.

    ``.venv`` links to the running interpreter's environment, and ``../shared`` to the
    repository's neighbour when there is one (the offline mirror the README's mirror command names).
    """
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    (destination / ".venv").symlink_to(Path(sys.prefix))
    shared = REPO.parent / "shared"
    if shared.is_dir() and not (destination.parent / "shared").exists():
        (destination.parent / "shared").symlink_to(shared)
    return destination


def shell_environment(checkout):
    """The environment of a README command: this environment's programs first, this checkout's packages."""
    path = os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])
    pythonpath = os.pathsep.join(filter(None, [str(checkout), str(checkout / "workflow"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": path, "PYTHONPATH": pythonpath}


def run_command(checkout, command, *, check=True, timeout=1800):
    """Run ``command`` exactly as written, through bash, from the top of ``checkout``."""
    result = subprocess.run(["bash", "-c", command], cwd=checkout, capture_output=True, text=True,
                            env=shell_environment(checkout), timeout=timeout)
    if check and result.returncode != 0:
        pytest.fail(f"`{command}` exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def main_job():
    """The README's main job: the last part of its first command (the part after the install)."""
    first = readme_commands()[0]
    return first.split(" && ")[-1]


@contextlib.contextmanager
def shared_folder(tmp_path_factory, worker_id, name):
    """The folder ``name`` that every test worker (pytest-xdist) of this session sees, locked while in use.

    The first worker to take the lock makes what the folder holds; the others wait, then reuse it.
    """
    session = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        session = session.parent  # the workers' scratch folders share it
    with open(session / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield session / name


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


REDONE = "lev"
"""The dataset whose jobs the recovery test deletes, then redoes: a small one, whose training jobs
(24 trials) leave a window to kill the run in."""


def result_files(checkout, dataset="*"):
    """The trials' result files (a training job's folder also holds its own record)."""
    return list((checkout / "results" / "runs").glob(f"{dataset}/**/{TRIAL_RESULT.format(trial='*')}"))


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
