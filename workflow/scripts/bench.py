"""Helpers shared by the workflow's rules and scripts.

Everything here is deterministic glue: trial seeds, size tokens, atomic file
writes, method construction and provenance. The statistics and plots live in
:mod:`tables` and :mod:`plots`; the methods themselves in :mod:`qs3orao` and
:mod:`baselines`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import resource
import sys
import tempfile
import zlib
from importlib import metadata
from pathlib import Path

import numpy as np

ALL = "all"
"""Size token meaning "every row that is not labeled"."""

VERSION_PACKAGES = ("qs3orao", "numpy", "scipy", "scikit-learn", "skordinal", "pandas", "snakemake")


def trial_seed(dataset, trial, base_seed=0):
    """Seed of one trial on one dataset, shared by every method.

    A pure function of ``(dataset, trial, base_seed)``: the same split and the
    same random streams are drawn whichever job, machine or order runs it, and
    all methods of a trial see the same labeled and unlabeled rows (so their
    AUCs are paired).

    Parameters
    ----------
    dataset : str
    trial : int
    base_seed : int, default=0

    Returns
    -------
    int
        A seed in ``[0, 2**31)``.

    Examples
    --------
    >>> trial_seed("lev", 0) == trial_seed("lev", 0) != trial_seed("lev", 1)
    True
    """
    sequence = np.random.SeedSequence([int(base_seed), int(trial), zlib.crc32(dataset.encode())])
    return int(sequence.generate_state(1, dtype=np.uint32)[0] >> 1)


def parse_size(token):
    """Return ``None`` for ``"all"``, else the integer size of a size token."""
    return None if str(token) == ALL else int(token)


def size_token(size):
    """Inverse of :func:`parse_size` for a configuration value (int or ``"all"``)."""
    return ALL if size is None or str(size) == ALL else str(int(size))


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


def save_array(path, array):
    """``np.save`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def setup_logging(log_path):
    """Send this process's stdout, stderr, warnings and ``logging`` to the rule's log file."""
    stream = open(log_path, "w", buffering=1)  # noqa: SIM115 - lives as long as the job
    sys.stdout = sys.stderr = stream
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


def package_versions():
    """Versions of the packages that determine a result, plus Python's."""
    versions = {"python": platform.python_version()}
    for name in VERSION_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def method_config(config, label):
    """The configuration entry of a method label, with defaults filled in."""
    entry = config["methods"][label]
    return {
        "method": entry["method"],
        "params": dict(entry.get("params") or {}),
        "grid": None if entry.get("grid") in (None, "none", "null") else entry["grid"],
        "label": entry.get("label", label),
    }


def resolve_grid(method, grid):
    """The :class:`baselines.registry.TuningGrid` of a configured search space.

    Parameters
    ----------
    method : str
        Base method name.
    grid : "registry" or dict
        ``"registry"``: the paper's staged search (``tuning_grid(method)``);
        a mapping parameter -> values: their full product, nothing else.
    """
    from baselines.registry import TuningGrid, tuning_grid

    if grid == "registry":
        return tuning_grid(method)
    return TuningGrid(grid={name: tuple(values) for name, values in grid.items()})
