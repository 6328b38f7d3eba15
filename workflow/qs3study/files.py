"""The study's one way of writing a file: atomically, through :func:`atomic_path`, and reading it back."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["atomic_path", "write_text", "write_json", "read_json", "write_csv", "write_frame", "save_array",
           "save_figure"]


def atomic_path(path, suffix=None):
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
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{path.name}.*"):  # left by a job killed before its rename
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
