"""Whether a run executes its own checkout's code.

A run's jobs import ``qs3orao``, ``baselines`` and ``qs3study`` from wherever
the Python environment finds them. An environment made by ``pip install -e .``
in one checkout finds that checkout's packages, also for a run started in
another checkout (a clone at an older commit, say): the run would then execute
code other than the commit its manifest names. The Snakefile refuses to plan
such a run (:func:`refuse_foreign_code`). Packages imported from elsewhere
count as the checkout's own when their Python files are identical to it, as
after ``pip install .`` of the same checkout.

Where a job finds the packages is asked of a fresh interpreter of the same
environment: the Snakefile's own process has the checkout on its import path,
a job's script does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

__all__ = ["PACKAGES", "foreign_packages", "job_import_origins", "refuse_foreign_code"]

PACKAGES = {"qs3orao": Path("qs3orao"), "baselines": Path("baselines"), "qs3study": Path("workflow", "qs3study")}
"""The project's packages, by import name, and where each lives in a checkout."""


def _sources(folder):
    """The Python files under ``folder``, by path relative to it."""
    return {path.relative_to(folder): path for path in sorted(folder.rglob("*.py"))}


# A job's script runs as ``python script.py``: no working directory on its import path, unlike ``python -c``.
_WHERE = """
import importlib.util, json, sys
sys.path.pop(0)
specs = {name: importlib.util.find_spec(name) for name in sys.argv[1:]}
print(json.dumps({name: spec.origin if spec else None for name, spec in specs.items()}))
"""


def job_import_origins(names):
    """Where a job's fresh interpreter of this environment imports each package in ``names`` from.

    Returns
    -------
    dict
        Import name -> path of the package's ``__init__.py``, or None if it cannot be imported.
    """
    out = subprocess.run([sys.executable, "-c", _WHERE, *names], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _same_code(imported, own):
    if imported.resolve() == own.resolve():
        return True
    theirs, ours = _sources(imported), _sources(own)
    return theirs.keys() == ours.keys() and all(theirs[name].read_bytes() == ours[name].read_bytes() for name in ours)


def foreign_packages(root, packages=PACKAGES):
    """The project's packages that the run's jobs would import from code other than the checkout at ``root``'s.

    Parameters
    ----------
    root : path-like
        The checkout (the folder holding the Snakefile).
    packages : dict
        Import name -> folder in the checkout; :data:`PACKAGES` by default.

    Returns
    -------
    list of (str, pathlib.Path or None, pathlib.Path)
        For each package whose Python files, as a job imports them (:func:`job_import_origins`), differ from the
        checkout's: its name, the folder it is imported from (None if it cannot be imported) and the checkout's
        folder.
    """
    found = []
    for name, origin in job_import_origins(list(packages)).items():
        own = Path(root) / packages[name]
        imported = Path(origin).parent if origin else None
        if imported is None or not _same_code(imported, own):
            found.append((name, imported, own))
    return found


def refuse_foreign_code(root, packages=PACKAGES):
    """Raise if the run's jobs would import any of the project's packages from code other than the checkout's.

    Raises
    ------
    RuntimeError
        Naming each such package, where it is imported from, where the checkout's copy is, and how to run the
        checkout's own code.
    """
    found = foreign_packages(root, packages)
    if found:
        lines = [f"  {name}: imported from {imported}, not the checkout's {own}" for name, imported, own in found]
        raise RuntimeError("this run would execute code other than its checkout's:\n" + "\n".join(lines) + "\n"
                           f"Install this checkout into the environment (pip install -e {Path(root)}), or put it "
                           f"first on the import path (PYTHONPATH={Path(root)}:{Path(root, 'workflow')}).")
