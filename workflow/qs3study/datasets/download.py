"""Obtaining a dataset's file: offline mirror first, then the cache, then upstream.

Downloads go through pooch, which streams into a temporary file next to the
target and renames it only after the sha256 check passed, so an interrupted or
corrupt transfer never leaves a file under the final name.  A file the registry
has no checksum for is instead parsed completely by its reader, and its row
count compared with the registry's documented shape, before the rename.
"""

import hashlib
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qs3study.files import atomic_path

from .cache import check_writable, resolve_cache_dir, resolve_mirror
from .errors import CacheRebuildWarning, ChecksumError, DownloadError, IncompleteFileError

DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 60.0
_HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class LocalFile:
    """A dataset file on disk and where it came from.

    Attributes
    ----------
    path : pathlib.Path
    sha256 : str
        Hash of the bytes on disk (computed, so known even when the registry
        has none).
    source : str
        ``"mirror"``, ``"cache"`` or the URL it was downloaded from.
    """

    path: Path
    sha256: str
    source: str


def sha256_file(path):
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_HASH_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(spec, path, where):
    """Hash ``path`` and raise :class:`ChecksumError` if the registry disagrees."""
    actual = sha256_file(path)
    if spec.sha256 is not None and actual != spec.sha256:
        raise ChecksumError(
            f"dataset {spec.name!r}: sha256 of {where} is {actual}, "
            f"expected {spec.sha256} (file {spec.fname!r})"
        )
    return actual


def check_complete(spec, path, where):
    """Parse ``path`` with the dataset's reader and compare its rows with the registry.

    Catches a truncated download without ``Content-Length``, an HTML error
    page, or a text file whose last row was cut, for files with no checksum.

    Raises
    ------
    IncompleteFileError
        If the reader fails, a numeric value is missing, or the row count
        differs from ``spec.shape[0]`` (where the registry documents one).
    """
    # The reader chooses the decompression from the file name, so it reads a link named like the target.
    with tempfile.TemporaryDirectory(dir=Path(path).parent) as folder:
        named = Path(folder) / spec.fname
        named.symlink_to(Path(path).resolve())
        try:
            features, target = spec.reader(named)
        # Readers fail in format-specific ways (EOFError, BadGzipFile, parser and JSON errors, ...).
        except Exception as exc:
            raise IncompleteFileError(
                f"dataset {spec.name!r}: {where} (no checksum in the registry) does not read as a complete "
                f"{spec.fname!r}: {type(exc).__name__}: {exc}"
            ) from exc
    if isinstance(features, np.ndarray) and not (np.isfinite(features).all() and np.isfinite(target).all()):
        raise IncompleteFileError(f"dataset {spec.name!r}: {where} has missing or non-numeric values "
                                  "(a row cut short?)")
    documented = spec.shape[0] if spec.shape is not None else None
    if documented is not None and len(target) != documented:
        raise IncompleteFileError(f"dataset {spec.name!r}: {where} holds {len(target):,} rows; the registry "
                                  f"documents {documented:,} (truncated or a different file)")


def _verified_stamp(path):
    """The file beside a cached download without checksum that records the sha256 it was verified at."""
    return Path(path).with_name(Path(path).name + ".verified")


def _write_stamp(path, spec, sha256):
    """Write the verified stamp of ``path`` atomically; jobs sharing the cache may write it at once."""
    with atomic_path(_verified_stamp(path), clean_stale=False) as tmp:
        tmp.write_text(_stamp_text(spec, sha256))


def _check_cached(spec, path):
    """A cache hit checked as a download is: by sha256, else parsed completely once (stamped by its hash)."""
    actual = _check(spec, path, f"cached file {path}")
    if spec.sha256 is None:
        stamp = _verified_stamp(path)
        if not (stamp.is_file() and stamp.read_text() == _stamp_text(spec, actual)):
            check_complete(spec, path, f"cached file {path}")
            _write_stamp(path, spec, actual)
    return actual


def _stamp_text(spec, sha256):
    """What a verified stamp holds: the file's sha256 and the row count it was checked against."""
    return f"{sha256} {spec.shape[0] if spec.shape is not None else None}\n"


def _find_in_mirror(spec, mirror):
    for relative in spec.mirror_candidates():
        candidate = mirror / relative
        if candidate.is_file():
            return candidate
    return None


class _VerifyingDownloader:
    """pooch downloader that checks the sha256 before pooch renames the file.

    Raising :class:`ChecksumError` here (instead of letting pooch compare) gives
    an error that names the dataset and URL; pooch still deletes the
    temporary file and retries.
    """

    def __init__(self, spec, url, timeout):
        import pooch

        self._spec = spec
        self._url = url
        self._http = pooch.HTTPDownloader(progressbar=False, timeout=timeout)
        self.sha256 = None

    def __call__(self, url, output_file, pooch_instance):
        self._http(url, output_file, pooch_instance)
        self.sha256 = _check(self._spec, output_file, f"the download from {self._url}")
        if self._spec.sha256 is None:
            check_complete(self._spec, output_file, f"the download from {self._url}")


def fetch(spec, *, cache_dir=None, mirror=None, retries=DEFAULT_RETRIES, timeout=DEFAULT_TIMEOUT):
    """Return the local copy of a registered dataset's file, downloading if needed.

    Order: the mirror (read in place, never copied), then the cache, then
    each URL of ``spec.urls`` in turn.

    Parameters
    ----------
    spec : DatasetSpec
        A file-backed registry entry.
    cache_dir : str or path-like, optional
        See :func:`~qs3study.datasets.cache.resolve_cache_dir`; downloads land in
        ``<cache_dir>/raw/<name>/<fname>``.
    mirror : str or path-like, optional
        See :func:`~qs3study.datasets.cache.resolve_mirror`.
    retries : int, default=3
        Extra attempts per URL after a failed transfer or checksum mismatch.
    timeout : float, default=60
        Seconds without data before a connection is abandoned.

    Returns
    -------
    LocalFile

    Raises
    ------
    ChecksumError
        If a mirror file or a download has an unexpected sha256.
    IncompleteFileError
        If a download without a registry checksum does not parse completely or
        has another row count than the registry documents; nothing is kept.
    CacheNotWritableError
        If the file must be downloaded and the cache folder cannot be written.
    DownloadError
        If no mirror file exists and every URL failed (or there is none).
    """
    if spec.fname is None:
        raise ValueError(f"dataset {spec.name!r} (kind {spec.kind!r}) has no file to fetch")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    mirror_dir = resolve_mirror(mirror)
    if mirror_dir is not None:
        found = _find_in_mirror(spec, mirror_dir)
        if found is not None:
            return LocalFile(found, _check(spec, found, f"mirror file {found}"), "mirror")

    target = resolve_cache_dir(cache_dir) / "raw" / spec.name / spec.fname
    if target.is_file():
        try:
            return LocalFile(target, _check_cached(spec, target), "cache")
        except (ChecksumError, IncompleteFileError) as error:
            target.unlink()  # a stale or damaged cache entry: fetch it again below
            _verified_stamp(target).unlink(missing_ok=True)
            if not spec.urls:
                raise
            warnings.warn(f"{error}; removed it, downloading it again", CacheRebuildWarning, stacklevel=2)
    if not spec.urls:
        where = f"mirror {mirror_dir}" if mirror_dir else "no mirror configured"
        raise DownloadError(
            f"dataset {spec.name!r} has no upstream URL and is read only from an offline "
            f"mirror holding one of {list(spec.mirror_candidates())} ({where})"
        )
    check_writable(target.parent)
    return _download(spec, target, retries, timeout)


def _download(spec, target, retries, timeout):
    import pooch
    import requests

    failures = []
    for url in spec.urls:
        # The hash is checked by the downloader, so pooch gets none to check.
        fetcher = pooch.create(
            path=target.parent,
            base_url="",
            registry={spec.fname: None},
            urls={spec.fname: url},
            retry_if_failed=retries,
        )
        downloader = _VerifyingDownloader(spec, url, timeout)
        try:
            fetcher.fetch(spec.fname, downloader=downloader)
        except (ChecksumError, IncompleteFileError):
            raise
        except (requests.RequestException, OSError) as exc:
            failures.append(f"{url}: {exc}")
            continue
        if spec.sha256 is None:  # check_complete passed before the rename
            _write_stamp(target, spec, downloader.sha256)
        return LocalFile(target, downloader.sha256, url)
    raise DownloadError(
        f"dataset {spec.name!r}: could not download {spec.fname!r} "
        f"after {retries + 1} attempt(s) per URL; " + "; ".join(failures)
    )
