"""The study's one way of writing a file: atomically, through :func:`atomic_path`, and reading it back.

A command-line tool writing into a folder records the files it wrote
(an ``"outputs"`` map in its own JSON record there) and never overwrites another
(:func:`refuse_foreign_files`); tables it reads are checked by :func:`read_columns`.
"""

from __future__ import annotations

import contextlib
import hashlib
import csv
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["atomic_path", "write_text", "write_json", "read_json", "json_text", "write_csv", "write_frame", "save_array",
           "save_figure", "read_columns", "refuse_foreign_files", "write_with_record"]


def atomic_path(path, suffix=None, *, clean_stale=True):
    """Context manager yielding a temporary path next to ``path``, renamed onto it on success.

    The temporary file lives in the same folder (so the rename is atomic) and
    keeps the final extension (so writers that infer a format from it work).
    On error it is removed and ``path`` is left untouched: no partial file is
    ever visible under a final name.

    Parameters
    ----------
    path : str or path-like
    suffix : str, optional
        Extension of the temporary file; the final path's by default.
    clean_stale : bool
        Remove temporary files of ``path`` left by a writer killed before its
        rename. False where several processes may write ``path`` at once (a
        shared cache): one of them must not remove another's file in flight.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if clean_stale:
        for stale in path.parent.glob(f".{path.name}.*"):
            stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or path.suffix, dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make results private

    @contextlib.contextmanager
    def _manager():
        try:
            yield Path(tmp)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)

    return _manager()


def write_text(path, text):
    """Write ``text`` as it is (no newline translation), atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, newline="")


def write_json(path, obj):
    """Write ``obj`` as sorted, indented JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def read_json(path):
    """Read a JSON file."""
    return json.loads(Path(path).read_text())


def json_text(obj):
    """``obj`` as compact JSON with sorted keys, serialised as :func:`write_json` does: equal texts, equal
    contents (NaN included, which ``==`` on the objects would not give)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__} to JSON")


def write_csv(path, header, rows):
    """Write ``header`` and ``rows`` as CSV, atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def write_frame(path, frame, **to_csv):
    """``frame.to_csv(path, **to_csv)`` of a pandas DataFrame, atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, **to_csv)


def save_figure(fig, path, **savefig):
    """``fig.savefig`` of a matplotlib figure in the format of ``path``'s extension, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix[1:], **savefig)


def save_array(path, array):
    """``np.save`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def read_columns(path, columns, reader=pd.read_csv):
    """Read the CSV table ``path`` with ``reader``, refusing one that cannot be parsed or lacks ``columns``.

    Raises
    ------
    ValueError
        Naming ``path`` and what is wrong with it (the parser's complaint, or the missing columns).
    """
    try:
        table = reader(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a readable CSV table: {str(error).strip()}") from None
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise ValueError(f"{path} lacks the columns {', '.join(missing)} (truncated, or not the expected table?)")
    return table


def _recorded_names(record):
    """Names of the files the tool's JSON ``record`` lists under ``"outputs"``, itself included; empty if none."""
    try:
        outputs = json.loads(Path(record).read_text()).get("outputs")
    except (OSError, ValueError, AttributeError):
        return set()
    return {Path(path).name for path in outputs} | {Path(record).name} if isinstance(outputs, dict) else set()


def refuse_foreign_files(folder, names, record, contents=None):
    """Refuse to write ``names`` into ``folder`` where one exists that the tool did not write.

    A file counts as the tool's own when its JSON ``record`` in ``folder``
    (an ``"outputs"`` map, paths or names) lists it, or when it already holds
    exactly the bytes ``contents`` gives for it (overwriting loses nothing).

    Raises
    ------
    FileExistsError
        Naming the files that would be overwritten.
    """
    own, contents = _recorded_names(Path(folder, record)), contents or {}
    foreign = sorted(name for name in names if Path(folder, name).exists() and name not in own
                     and not (name in contents and Path(folder, name).read_bytes() == contents[name]))
    if foreign:
        raise FileExistsError(f"{folder} holds {', '.join(foreign)}, not written by this tool (not listed in its "
                              f"record {record}): move them away or choose another output folder")


def write_with_record(folder, contents, record, fields, *, written=()):
    """Write ``contents`` into ``folder``, then its JSON ``record`` listing every output with its sha256.

    The record is what :func:`refuse_foreign_files` reads: the tool's own files, which a
    later run of the tool may overwrite.

    Parameters
    ----------
    folder : path-like
        Created if missing.
    contents : dict of str to bytes
        File name -> bytes, each written atomically.
    record : str
        The record's file name in ``folder``.
    fields : dict
        The record's other fields (inputs, options).
    written : sequence of str, optional
        Files the tool has already written into ``folder`` (a figure), listed in the record too.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in contents.items():
        with atomic_path(folder / name) as tmp:
            tmp.write_bytes(content)
    outputs = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in [*contents, *written]}
    write_json(folder / record, {**fields, "outputs": outputs})
