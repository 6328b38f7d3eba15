"""The commands README.md and docs/*.md show, a user's scratch copy of the repository to run them in, and the
main job's runs that the test workers share."""

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
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
    """Every command README.md and docs/*.md show: bash code-block lines, and inline code that starts a program we ship
    or ``python``.

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
                 if span.split()[0] in ("snakemake", ".venv/bin/snakemake", ".venv/bin/python", "python")]
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


REDONE = "lev"
"""The dataset whose jobs the recovery test deletes, then redoes: a small one, whose training jobs
(24 trials) leave a window to kill the run in."""


def result_files(checkout, dataset="*"):
    """The trials' result files (a training job's folder also holds its own record)."""
    return list((checkout / "results" / "runs").glob(f"{dataset}/**/{TRIAL_RESULT.format(trial='*')}"))
