"""Finished trials of an interrupted training job, kept for the job's next run.

Snakemake deletes a job's output folder before it runs the job again, so a
training job stopped after some of its trials (the end of a machine's
session, a kill) would lose them all, and an exact baseline's trial at the
scale study's largest sizes takes tens of minutes. Each trial whose process
ran to its end is therefore also written outside the folder, under ``kept/`` in place of ``runs/``
(:func:`kept_folder`), with the key it was computed under: its record before
training (dataset, method, trial, seed, size, tuned values, package
versions), the checksums of the job's data files and of the project's code
(:func:`trial_key`). The job's next run takes a kept trial whose key equals
its own instead of training it again, and says so in its log; a kept trial
under another key is trained again. The kept folder is removed when the job
has finished, so a job run again on purpose (its folder deleted) trains every
trial, as does a job stopped after it finished but before Snakemake recorded
it. Kept trials are carried with the run's other files by
:mod:`qs3study.tools.run_archive`, so a job goes on across machines too.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from qs3study.datasets.download import sha256_file
from qs3study.design import TRIAL_RESULT
from qs3study.files import json_text, read_json, write_json

__all__ = ["KEY", "kept_folder", "code_digest", "data_digests", "trial_key", "kept_record", "keep", "discard"]

KEY = "key{trial}.json"
"""The file beside a kept trial's record that holds the key it was computed under."""


def kept_folder(output):
    """Where the trials of the job whose output folder is ``output`` (``.../runs/<batch>``) are kept."""
    parts = Path(output).parts
    if "runs" not in parts:
        raise ValueError(f"{output} is not a training job's folder: no 'runs' component")
    at = len(parts) - 1 - parts[::-1].index("runs")
    return Path(*parts[:at], "kept", *parts[at + 1:])


def code_digest(packages):
    """SHA-256 over the Python files of the imported ``packages`` (modules), by path within each."""
    digest = hashlib.sha256()
    for package in packages:
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def data_digests(data):
    """SHA-256 of each of a job's data files (``data``: name -> path), once per job for all its trials."""
    return {name: sha256_file(path) for name, path in data.items()}


def trial_key(record, data_sha256, code):
    """The key a trial is computed under: its record before training, its data files' checksums
    (:func:`data_digests`) and the code's digest (:func:`code_digest`)."""
    return {"record": record, "data_sha256": data_sha256, "code": code}


def kept_record(folder, trial, key):
    """The kept record of ``trial`` in ``folder`` if it was computed under ``key``, else None.

    Returns
    -------
    record : dict or None
    reason : str
        Why a kept record is not taken ("" when it is, or when none is kept).
    """
    record_path, key_path = folder / TRIAL_RESULT.format(trial=trial), folder / KEY.format(trial=trial)
    if not record_path.is_file() or not key_path.is_file():
        return None, ""
    kept_key = read_json(key_path)
    if json_text(kept_key) != json_text(key):
        differ = sorted(name for name in {*key, *kept_key} if json_text(key.get(name)) != json_text(kept_key.get(name)))
        return None, f"kept under another key ({', '.join(differ)} differ)"
    return read_json(record_path), ""


def keep(folder, trial, key, record):
    """Keep ``record`` of ``trial`` in ``folder`` with its ``key`` (the key last: a record without one is not taken)."""
    write_json(folder / TRIAL_RESULT.format(trial=trial), record)
    write_json(folder / KEY.format(trial=trial), key)


def discard(folder):
    """Remove the kept trials of a job that has finished."""
    shutil.rmtree(folder, ignore_errors=True)
