"""Where files live: cache and mirror folders, cache keys, atomic npz files."""

import hashlib
import json
import os
import tempfile
import warnings
import zipfile
from pathlib import Path

import numpy as np

from qs3study.files import atomic_path

from .errors import CacheNotWritableError, CacheRebuildWarning

CACHE_ENV = "QS3ORAO_CACHE"
MIRROR_ENV = "QS3ORAO_DATA_MIRROR"
DEFAULT_CACHE = "resources"

# Bump when preprocessing changes what a cached array means: old files are
# then simply not found any more.
PREPROCESS_VERSION = 2


def resolve_cache_dir(cache_dir=None):
    """Return the cache folder: `cache_dir`, else ``$QS3ORAO_CACHE``, else ``./resources``.

    Parameters
    ----------
    cache_dir : str or path-like, optional
        Explicit cache folder; created on first write, not here.

    Returns
    -------
    pathlib.Path
    """
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENV) or Path.cwd() / DEFAULT_CACHE
    return Path(cache_dir).expanduser().resolve()


def resolve_mirror(mirror=None):
    """Return the offline mirror folder, or ``None`` when no mirror is configured.

    Parameters
    ----------
    mirror : str or path-like, optional
        Folder holding upstream files; defaults to ``$QS3ORAO_DATA_MIRROR``.

    Returns
    -------
    pathlib.Path or None

    Raises
    ------
    ValueError
        If the configured mirror is not an existing folder.
    """
    origin = "mirror"
    if mirror is None:
        mirror, origin = os.environ.get(MIRROR_ENV) or None, f"${MIRROR_ENV}"
    if mirror is None:
        return None
    path = Path(mirror).expanduser().resolve()
    if not path.is_dir():
        raise ValueError(f"{origin}={str(mirror)!r} is not an existing folder")
    return path


def cache_key(params):
    """Short stable hash of a JSON-serialisable parameter dict."""
    payload = json.dumps({"version": PREPROCESS_VERSION, **params}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def temporary_in(folder, name):
    """Create ``folder`` if needed and open a new ``<name>.*.part`` file in it.

    Returns
    -------
    fd : int
    tmp : str

    Raises
    ------
    CacheNotWritableError
        If the folder cannot be created or written, naming it and how to choose another.
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(dir=folder, prefix=name + ".", suffix=".part")
    except OSError as exc:
        raise CacheNotWritableError(
            f"cannot write to the cache folder {folder} ({exc.strerror or exc}); choose another "
            f"with cache_dir=... or the {CACHE_ENV} environment variable (or fix its permissions)"
        ) from exc


def check_writable(folder):
    """Raise :class:`CacheNotWritableError` unless a file can be created in ``folder``."""
    fd, tmp = temporary_in(folder, "write-check")
    os.close(fd)
    Path(tmp).unlink()


def save_npz_atomic(path, **arrays):
    """Write arrays to ``path`` (npz) through :func:`qs3study.files.atomic_path`.

    A crash part-way never leaves a truncated ``path``; other processes writing
    the same cache entry at the same time are left alone.
    """
    path = Path(path)
    check_writable(path.parent)
    with atomic_path(path, clean_stale=False) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)


def save_json_npz(path, info, **arrays):
    """Like :func:`save_npz_atomic`, storing ``info`` as a JSON string entry."""
    save_npz_atomic(path, info_json=np.array(json.dumps(info, sort_keys=True)), **arrays)


def load_json_npz(path):
    """Inverse of :func:`save_json_npz`: return ``(arrays, info)`` (no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files if key != "info_json"}
        info = json.loads(str(data["info_json"][()]))
    return arrays, info


def save_entry(path, key, info, **arrays):
    """Save a cache entry: ``arrays`` and ``info``, plus the key and every array's shape and dtype.

    :func:`load_entry` checks them, so a damaged file or another entry's file
    under this name is detected.
    """
    layout = {name: [list(value.shape), value.dtype.str] for name, value in arrays.items()}
    save_json_npz(path, {**info, "cache_entry": {"key": key, "arrays": layout}}, **arrays)


def _entry_mismatch(arrays, info, key):
    """Why ``(arrays, info)`` is not the entry ``key``, or ``None`` when it is."""
    entry = info.get("cache_entry") if isinstance(info, dict) else None
    if not isinstance(entry, dict) or "key" not in entry or "arrays" not in entry:
        return "has no stored key and shapes"
    if entry["key"] != key:
        return f"holds the entry {entry['key']!r}, not {key!r}"
    stored = {name: [list(value.shape), value.dtype.str] for name, value in arrays.items()}
    if stored != entry["arrays"]:
        return f"holds arrays {stored}, but its entry records {entry['arrays']}"
    return None


def load_entry(path, key):
    """Return ``(arrays, info)`` of the cache entry ``key`` at ``path``, or ``None`` to rebuild it.

    ``None`` means the file is missing, or (with a :class:`CacheRebuildWarning`)
    unreadable, truncated, or not the entry ``key`` with its recorded shapes.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        arrays, info = load_json_npz(path)
        problem = _entry_mismatch(arrays, info, key)
    # What numpy, zipfile and json raise on damaged bytes.
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        problem = f"is unreadable ({type(exc).__name__}: {exc})"
    if problem is None:
        return arrays, info
    warnings.warn(f"cache file {path} {problem}; rebuilding it", CacheRebuildWarning, stacklevel=3)
    return None
