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

import functools
import json
import math
import shutil
import tempfile
import warnings
from functools import partial
from pathlib import Path

import numpy as np

from .cache import resolve_cache_dir
from .download import LocalFile, fetch, sha256_file
from .errors import ChecksumError, DatasetError, DroppedRecordsWarning
from .registry import DatasetSpec

__all__ = ["EMPTY_TEXT", "FORMATS", "local_spec", "fetch_source", "read_table", "read_text_table"]

FORMATS = ("csv", "json-lines", "libsvm", "parquet")
"""File formats of a local source."""


_OPENERS = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def _text_lines(path):
    """The lines of a (possibly gzip-, bz2- or xz-compressed, by extension) text file, numbered from 1."""
    import importlib

    module = _OPENERS.get(Path(path).suffix)
    opener = open if module is None else importlib.import_module(module).open
    with opener(path, "rt", encoding="utf-8", errors="replace") as lines:
        yield from enumerate(lines, start=1)


def _first_bad_json_line(path):
    """``(line number, why)`` of the first line that is not one JSON object, or None."""
    for number, line in _text_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line.strip())
        except ValueError as error:
            return number, f"not valid JSON ({error})"
        if not isinstance(record, dict):
            return number, f"a JSON {type(record).__name__}, not an object"
    return None


def _first_bad_libsvm_line(path):
    """``(line number, why)`` of the first line that is not ``label index:value ...`` with rising indices."""
    for number, line in _text_lines(path):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            label = float(fields[0])
        except ValueError:
            return number, f"label {fields[0]!r} is not a number"
        if not math.isfinite(label):
            return number, f"label {fields[0]!r} is not a finite number"
        previous = -1
        for field in fields[1:]:
            index, _, value = field.partition(":")
            try:
                index, value = int(index), float(value)
            except ValueError:
                return number, f"{field!r} is not index:value with an integer index and a number"
            if not math.isfinite(value):
                return number, f"{field!r} is not a finite number"
            if index <= previous:
                return number, f"feature indices must rise strictly, {index} follows {previous}"
            previous = index
    return None


def _first_non_numeric(frame, header):
    """``(line number, column, value)`` of the first cell that is not a number, or None."""
    import pandas as pd

    for column in frame.columns:
        values = frame[column]
        bad = pd.to_numeric(values, errors="coerce").isna() & values.notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            return row + 1 + int(header), column, values.iloc[row]
    return None


def _first_non_finite(frame, header):
    """``(line number, column, value)`` of the first NaN or infinite cell of a numeric frame, or None."""
    bad = ~np.isfinite(frame.to_numpy(dtype=np.float64))
    if not bad.any():
        return None
    row = int(np.flatnonzero(bad.any(axis=1))[0])
    column = int(np.flatnonzero(bad[row])[0])
    return row + 1 + int(header), frame.columns[column], float(frame.iloc[row, column])


def _names_the_file(read):
    """``read(path, *, file_format, ...)`` whose every failure is a :class:`DatasetError` that begins with the path."""

    @functools.wraps(read)
    def reader(path, *, file_format, **columns):
        try:
            return read(path, file_format=file_format, **columns)
        except DatasetError as error:
            raise DatasetError(f"{path}: {error}") from None
        # Parsers fail in format-specific ways (UnicodeDecodeError, ArrowInvalid, BadGzipFile, EOFError, ...).
        except Exception as error:  # noqa: BLE001 - re-raised with the file the parser's message lacks
            raise DatasetError(f"{path}: does not read as a {file_format} file: {type(error).__name__}: "
                               f"{' '.join(str(error).split())[:300]}") from None

    return reader


def _read_frame(path, file_format, header):
    import pandas as pd

    if file_format == "csv":
        try:
            return pd.read_csv(path, header=0 if header else None, compression="infer")
        except pd.errors.EmptyDataError:
            raise DatasetError("the file is empty (no header, no rows)") from None
    if file_format == "json-lines":
        bad = _first_bad_json_line(path)
        if bad is not None:
            raise DatasetError(f"line {bad[0]}: {bad[1]}; json-lines needs one JSON object per line")
        return pd.read_json(path, lines=True, compression="infer")
    return pd.read_parquet(path)


def _column(frame, column, path):
    """The name of ``column`` (a name, or an integer position) in ``frame``."""
    if isinstance(column, str):
        if column not in frame.columns:
            raise DatasetError(f"no column {column!r}; columns are {list(frame.columns)[:20]}")
        return column
    if not -frame.shape[1] <= column < frame.shape[1]:
        raise DatasetError(f"column index {column} is out of range for {frame.shape[1]} columns")
    return frame.columns[column]


def _check_rows(frame):
    if len(frame) == 0:
        raise DatasetError(f"the file holds no rows (columns {list(frame.columns)[:20]})")


@_names_the_file
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

    Raises
    ------
    DatasetError
        Naming the file, and the line and column of the first value that does not parse or is
        not finite, where there is one.
    """
    if file_format == "libsvm":
        if target not in (0, "label"):
            raise DatasetError(f"a libsvm file's target is its label field (target: label), got {target!r}")
        from sklearn.datasets import load_svmlight_file

        bad = _first_bad_libsvm_line(path)
        if bad is not None:
            raise DatasetError(f"line {bad[0]}: {bad[1]}")
        X, y = load_svmlight_file(str(path), dtype=np.float64)
        return X.toarray(), y.astype(np.float64)
    header = isinstance(target, str)
    frame = _read_frame(path, file_format, header=header)
    _check_rows(frame)
    name = _column(frame, target, path)
    line_of = "line" if file_format != "parquet" else "row"
    bad = _first_non_numeric(frame, header and file_format == "csv")
    if bad is not None:
        raise DatasetError(f"{line_of} {bad[0]}, column {bad[1]!r}: {bad[2]!r} is not a number (features and target "
                           f"must be numeric)")
    bad = _first_non_finite(frame, header and file_format == "csv")
    if bad is not None:
        raise DatasetError(f"{line_of} {bad[0]}, column {bad[1]!r}: {bad[2]:g} is not a finite number (features "
                           f"and target must be finite; an empty cell reads as nan)")
    return frame.drop(columns=[name]).to_numpy(dtype=np.float64), frame[name].to_numpy(dtype=np.float64)


#: What a review reader does with records without a text (a null or absent field; in a csv an empty
#: cell): refuse the file, drop those records, or keep them as empty documents.
EMPTY_TEXT = ("refuse", "drop", "keep")

#: Lines of records without text named in a message and in the provenance.
_LINES_SHOWN = 5


def _line_list(lines):
    return f"{', '.join(map(str, lines[:_LINES_SHOWN]))}{', ...' if len(lines) > _LINES_SHOWN else ''}"


@_names_the_file
def _read_reviews(path, *, file_format, text, label, empty_text):
    """:func:`read_text_table`, and what it did with records without text (a dict, or None when there were none)."""
    if file_format == "libsvm":
        raise DatasetError("reviews need a csv, json-lines or parquet file, not libsvm")
    if empty_text not in EMPTY_TEXT:
        raise DatasetError(f"empty_text must be one of {EMPTY_TEXT}, got {empty_text!r}")
    header = isinstance(text, str)
    frame = _read_frame(path, file_format, header=header)
    _check_rows(frame)
    text, label = _column(frame, text, path), _column(frame, label, path)
    first_line = 1 + int(header and file_format == "csv")
    missing = np.flatnonzero(frame[text].isna().to_numpy())
    empty = None
    if missing.size:
        lines = [int(i) + first_line for i in missing]
        counted = f"{missing.size} of {len(frame)} records"
        if empty_text == "refuse":
            raise DatasetError(f"{counted} have no text in column {text!r} (lines {_line_list(lines)}); remove them "
                               f"or give them a text, or set the source's empty_text to 'drop' or 'keep'")
        empty = {"policy": empty_text, "n_records": int(missing.size), "lines": lines[:_LINES_SHOWN]}
        if empty_text == "drop":
            warnings.warn(f"{path}: dropped {counted} without text in column {text!r} (lines {_line_list(lines)})",
                          DroppedRecordsWarning, stacklevel=3)
            frame = frame.drop(index=frame.index[missing])
        else:
            frame[text] = frame[text].fillna("")
    ratings = pd_numeric(frame[label])
    bad = np.flatnonzero(~np.isfinite(ratings) | (ratings != np.round(ratings)))
    if bad.size:
        raise DatasetError(f"line {frame.index[bad[0]] + first_line}, column {label!r}: "
                           f"{_shown(frame[label].iloc[bad[0]])} is not an integer rating")
    if np.unique(ratings).size < 2:
        raise DatasetError(f"every record has the rating {ratings[0]:g} (column {label!r}): an ordinal dataset "
                           f"needs at least two rating values")
    return frame[text].astype(str).tolist(), ratings.astype(np.int64), empty


def read_text_table(path, *, file_format, text, label, empty_text="refuse"):
    """Review texts and integer ratings from a local csv, json-lines or parquet file.

    ``text`` and ``label`` are both column names (a csv file then has a header row) or both
    positions (a csv file then has none). A record without a text (a null or absent field; in a
    csv an empty cell) is what ``empty_text`` says: an error that counts them and names their
    first lines (``"refuse"``), left out with a :class:`DroppedRecordsWarning` (``"drop"``), or
    an empty document (``"keep"``).

    Returns
    -------
    texts : list of str
    ratings : ndarray of int64

    Raises
    ------
    DatasetError
        Naming the file, and the line of the first record that does not read, where there is one.
    """
    texts, ratings, _ = _read_reviews(path, file_format=file_format, text=text, label=label, empty_text=empty_text)
    return texts, ratings


def _shown(value):
    """A cell as a message shows it: a text quoted, a number plain (never a numpy repr)."""
    return repr(value) if isinstance(value, str) else f"{float(value):g}"


def pd_numeric(values):
    """A column as float64, NaN where a value is not a number."""
    import pandas as pd

    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def _reader_for(name, path, file_format, read):
    """``read`` (of the cached copy) whose errors also name the dataset, its key and the configured file."""

    def reader(local_copy):
        try:
            return read(local_copy)
        except DatasetError as error:
            raise DatasetError(f"dataset {name!r} (datasets.{name}.source.path: {path}, format {file_format}): "
                               f"{error}") from None

    return reader


def _reviews_with_provenance(path, **options):
    """``(texts, ratings, facts)``: :func:`read_text_table`'s arrays and, for the provenance, its records without text."""
    texts, ratings, empty = _read_reviews(path, **options)
    return texts, ratings, {} if empty is None else {"empty_text": empty}


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
    empty_text = source.get("empty_text", "refuse")
    if empty_text not in EMPTY_TEXT:
        raise ValueError(f"{key}.empty_text must be one of {EMPTY_TEXT}, got {empty_text!r}")
    if "empty_text" in source and not reviews:
        raise ValueError(f"{key}.empty_text applies to review sources (text and label), not to {key}.target")
    path = Path(source["path"]).expanduser().resolve()
    if sha256 is None:
        if not path.is_file():
            raise ValueError(f"{key}.path: {path} is not a file")
        sha256 = sha256_file(path)
    if source.get("sha256") not in (None, sha256):
        raise ChecksumError(f"dataset {name!r}: sha256 of {path} is {sha256}, expected {source['sha256']}")
    if reviews:
        if isinstance(source["text"], str) != isinstance(source["label"], str):
            raise ValueError(f"{key}: text and label must both be column names (a file with a header row) or both "
                             f"positions (a file without one), got {source['text']!r} and {source['label']!r}")
        read = partial(_reviews_with_provenance, file_format=source["format"], text=source["text"],
                       label=source["label"], empty_text=empty_text)
    else:
        read = partial(read_table, file_format=source["format"], target=source["target"])
    reader = _reader_for(name, path, source["format"], read)
    return DatasetSpec(name=name, kind="reviews" if reviews else "regression", description=f"local file {path}",
                       fname=path.name, sha256=sha256, source_path=str(path), reader=reader,
                       notes=f"configured source: {source['format']} file",
                       read_options=() if empty_text == "refuse" else (("empty_text", empty_text),))


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
