"""Where files live: cache and mirror folders, cache keys, atomic npz files."""

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

CACHE_ENV = "QS3ORAO_CACHE"
MIRROR_ENV = "QS3ORAO_DATA_MIRROR"
DEFAULT_CACHE = "resources"

# Bump when preprocessing changes what a cached array means: old files are
# then simply not found any more.
PREPROCESS_VERSION = 1


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


def save_npz_atomic(path, **arrays):
    """Write arrays to ``path`` (npz) via a temporary file and an atomic rename.

    A crash part-way leaves at most a ``*.part`` file, never a truncated
    ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_json_npz(path, info, **arrays):
    """Like :func:`save_npz_atomic`, storing ``info`` as a JSON string entry."""
    save_npz_atomic(path, info_json=np.array(json.dumps(info, sort_keys=True)), **arrays)


def load_json_npz(path):
    """Inverse of :func:`save_json_npz`: return ``(arrays, info)`` (no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files if key != "info_json"}
        info = json.loads(str(data["info_json"][()]))
    return arrays, info
