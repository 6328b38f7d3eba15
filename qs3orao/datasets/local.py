"""Datasets read from a local file named by configuration alone (``datasets.<name>.source``).

A source is a mapping ``{path, format, target}`` for regression data, or
``{path, format, text, label}`` for reviews, optionally with ``sha256`` to pin
the file.  :func:`local_spec` turns it into a :class:`DatasetSpec`; the file is
then copied into the cache and checksummed like a download (:func:`fetch_source`),
and the preprocessed arrays are cached under a key that includes its sha256, so
an edited file is never mistaken for the old one.

Examples
--------
>>> spec = local_spec("houses", {"path": "houses.csv.gz", "format": "csv", "target": "price"},
...                   sha256="0" * 64)
>>> spec.kind, spec.fname
('regression', 'houses.csv.gz')
"""

import shutil
import tempfile
from functools import partial
from pathlib import Path

import numpy as np

from .cache import resolve_cache_dir
from .download import LocalFile, fetch, sha256_file
from .errors import ChecksumError, DatasetError
from .registry import DatasetSpec

__all__ = ["FORMATS", "local_spec", "fetch_source", "read_table", "read_text_table"]

FORMATS = ("csv", "json-lines", "libsvm", "parquet")
"""File formats of a local source."""


def _read_frame(path, file_format, header):
    import pandas as pd

    if file_format == "csv":
        return pd.read_csv(path, header=0 if header else None, compression="infer")
    if file_format == "json-lines":
        return pd.read_json(path, lines=True, compression="infer")
    return pd.read_parquet(path)


def _column(frame, column, path):
    """The name of ``column`` (a name, or an integer position) in ``frame``."""
    if isinstance(column, str):
        if column not in frame.columns:
            raise DatasetError(f"{path}: no column {column!r}; columns are {list(frame.columns)[:20]}")
        return column
    if not -frame.shape[1] <= column < frame.shape[1]:
        raise DatasetError(f"{path}: column index {column} is out of range for {frame.shape[1]} columns")
    return frame.columns[column]


def read_table(path, *, file_format, target):
    """Numeric features and a regression target from a local file.

    Parameters
    ----------
    path : path-like
    file_format : {"csv", "json-lines", "libsvm", "parquet"}
        csv and json-lines may be gzip-, bz2- or xz-compressed (by extension).
    target : str or int
        Target column: a name (csv files then have a header row), or a position
        (csv files then have none; negative counts from the end). For libsvm,
        the label field: ``0`` or ``"label"``.

    Returns
    -------
    X : ndarray of float64, shape (n, d)
    target : ndarray of float64, shape (n,)
    """
    if file_format == "libsvm":
        if target not in (0, "label"):
            raise DatasetError(f"{path}: a libsvm file's target is its label field (target: label), got {target!r}")
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path), dtype=np.float64)
        return X.toarray(), y.astype(np.float64)
    frame = _read_frame(path, file_format, header=isinstance(target, str))
    name = _column(frame, target, path)
    try:
        values = frame.drop(columns=[name]).to_numpy(dtype=np.float64)
        y = frame[name].to_numpy(dtype=np.float64)
    except ValueError as error:
        raise DatasetError(f"{path}: features and target must be numeric ({error})") from None
    return values, y


def read_text_table(path, *, file_format, text, label):
    """Review texts and integer ratings from a local csv, json-lines or parquet file."""
    if file_format == "libsvm":
        raise DatasetError(f"{path}: reviews need a csv, json-lines or parquet file, not libsvm")
    frame = _read_frame(path, file_format, header=True)
    text, label = _column(frame, text, path), _column(frame, label, path)
    ratings = frame[label].to_numpy(dtype=np.float64)
    if not np.array_equal(ratings, np.round(ratings)):
        raise DatasetError(f"{path}: the label column {label!r} must hold integer ratings")
    return frame[text].fillna("").astype(str).tolist(), ratings.astype(np.int64)


def local_spec(name, source, *, sha256=None):
    """The :class:`DatasetSpec` of a dataset configured by ``source``.

    Parameters
    ----------
    name : str
    source : dict
        ``path``, ``format`` and either ``target`` or both ``text`` and ``label``;
        optionally ``sha256``, which the file must then match.
    sha256 : str, optional
        The file's hash when already known; computed from the file otherwise.

    Raises
    ------
    ValueError
        If the source is incomplete or names an unknown format.
    ChecksumError
        If the file does not match the configured ``sha256``.
    """
    source = dict(source)
    key = f"datasets.{name}.source"
    if source.get("format") not in FORMATS:
        raise ValueError(f"{key}.format must be one of {FORMATS}, got {source.get('format')!r}")
    reviews = "text" in source or "label" in source
    if reviews == ("target" in source) or (reviews and not {"text", "label"} <= set(source)):
        raise ValueError(f"{key} needs either target (regression data) or both text and label (reviews)")
    if "path" not in source:
        raise ValueError(f"{key}.path is required")
    path = Path(source["path"]).expanduser().resolve()
    if sha256 is None:
        if not path.is_file():
            raise ValueError(f"{key}.path: {path} is not a file")
        sha256 = sha256_file(path)
    if source.get("sha256") not in (None, sha256):
        raise ChecksumError(f"dataset {name!r}: sha256 of {path} is {sha256}, expected {source['sha256']}")
    if reviews:
        reader = partial(read_text_table, file_format=source["format"], text=source["text"], label=source["label"])
    else:
        reader = partial(read_table, file_format=source["format"], target=source["target"])
    return DatasetSpec(name=name, kind="reviews" if reviews else "regression", description=f"local file {path}",
                       fname=path.name, sha256=sha256, source_path=str(path), reader=reader,
                       notes=f"configured source: {source['format']} file")


def fetch_source(spec, *, cache_dir=None, mirror=None):
    """The local copy of a dataset's file: a configured source copied into the cache, else :func:`fetch`.

    A source file is copied to ``<cache_dir>/raw/<name>/<fname>`` through a
    temporary file, and its sha256 checked before the rename, as a download is.

    Returns
    -------
    LocalFile
    """
    if spec.source_path is None:
        return fetch(spec, cache_dir=cache_dir, mirror=mirror)
    target = resolve_cache_dir(cache_dir) / "raw" / spec.name / spec.fname
    if target.is_file() and sha256_file(target) == spec.sha256:
        return LocalFile(target, spec.sha256, "cache")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", delete=False) as handle:
        partial_copy = Path(handle.name)
    try:
        shutil.copyfile(spec.source_path, partial_copy)
        actual = sha256_file(partial_copy)
        if actual != spec.sha256:
            raise ChecksumError(f"dataset {spec.name!r}: sha256 of {spec.source_path} is {actual}, expected "
                                f"{spec.sha256} (the file changed after the plan was made)")
        partial_copy.replace(target)
    finally:
        partial_copy.unlink(missing_ok=True)
    return LocalFile(target, actual, f"local file {spec.source_path}")
