"""Public loaders: raw data, and preprocessed ordinal data with an npz cache."""

import operator
import warnings
from dataclasses import dataclass

import numpy as np

from .cache import cache_key, load_entry, resolve_cache_dir, save_entry
from .errors import CacheRebuildWarning, DatasetError, UnevenBinsWarning
from .local import fetch_source
from .preprocess import (
    equal_frequency_bins,
    first_occurrence_mask,
    minmax_scale_common_inplace,
    minmax_scale_inplace,
    ordinal_labels,
    subsample_indices,
)
from .registry import get_spec
from .text import TFIDF_PARAMS, svd_embedding, tfidf_matrix

# Relative deviation of a bin from n / k above which bins count as uneven.
UNEVEN_TOLERANCE = 0.01


@dataclass
class OrdinalData:
    """A preprocessed ordinal dataset.

    Attributes
    ----------
    X : ndarray of float64, shape (n, d)
        Features, every column scaled to ``[0, 1]``.
    y : ndarray of int64, shape (n,)
        Ordinal labels ``0 .. k-1`` (non-decreasing in the regression target).
    name : str
    bin_counts : ndarray of int64, shape (k,)
        Rows per class.
    info : dict
        Provenance: source file, sha256, preprocessing parameters, bin edges,
        notes, and ``cache`` (the npz file and whether it was a hit).
    """

    X: np.ndarray
    y: np.ndarray
    name: str
    bin_counts: np.ndarray
    info: dict

    @property
    def n_classes(self):
        return int(self.bin_counts.size)


def _read(spec, *, cache_dir, mirror, n_samples, random_state):
    """Return ``(raw, provenance)`` for any kind of dataset."""
    if spec.kind == "generated":
        raw = spec.generator(n_samples, random_state=random_state)
        return raw, {"generator": spec.description, "random_state": random_state}
    if spec.fname is None:
        return spec.reader(None), {"package": spec.description}
    local = fetch_source(spec, cache_dir=cache_dir, mirror=mirror)
    features, target, *facts = spec.reader(local.path)
    if spec.drop_features:
        features = np.delete(features, list(spec.drop_features), axis=1)
    return (features, target), {
        "file": str(local.path),
        "sha256": local.sha256,
        "origin": local.source,
        "sha256_verified": spec.sha256 is not None,
        **(facts[0] if facts else {}),
    }


def _default_size(spec, n_samples):
    if spec.kind == "generated" and n_samples is None:
        return spec.default_n_samples
    return n_samples


def load_raw(name, *, cache_dir=None, mirror=None, n_samples=None, random_state=0):
    """Load a dataset as its upstream file holds it, without preprocessing.

    Parameters
    ----------
    name : str
        Key of :data:`~qs3study.datasets.DATASETS`.
    cache_dir, mirror : str or path-like, optional
        See :func:`load_ordinal`.
    n_samples : int, optional
        Size of a generated dataset (its default size otherwise); ignored by
        file-backed datasets, which are returned whole.
    random_state : int, default=0
        Seed of a generated dataset.

    Returns
    -------
    (X, target) for regression data, (texts, ratings) for review data, (X, y)
    for ordinal data.
    """
    spec = get_spec(name)
    raw, _ = _read(
        spec,
        cache_dir=cache_dir,
        mirror=mirror,
        n_samples=_default_size(spec, n_samples),
        random_state=random_state,
    )
    return raw


def _integer(value, argument):
    """``value`` as a plain int (numpy integers included), else a TypeError naming it."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{argument} must be an integer, got {value!r}") from None


#: ``feature_scaling`` values: every column to [0, 1] (the paper protocol's reading of "normalized to
#: [0, 1]"), or one common [0, 1] scale for a review set's whole SVD block (keeps its spectrum).
FEATURE_SCALINGS = ("per_column", "common")


def _params(spec, n_bins, dedupe, n_svd_components, n_samples, random_state, feature_scaling="per_column"):
    """The parameters that determine the preprocessed arrays (and the cache key)."""
    if feature_scaling not in FEATURE_SCALINGS:
        raise ValueError(f"feature_scaling must be one of {FEATURE_SCALINGS}, got {feature_scaling!r}")
    if feature_scaling == "common" and spec.output != "reviews":
        raise ValueError(f"feature_scaling='common' scales a review set's SVD block; {spec.name!r} has "
                         f"{spec.output} data, whose columns are different quantities (use 'per_column')")
    n_bins, n_svd_components = _integer(n_bins, "n_bins"), _integer(n_svd_components, "n_svd_components")
    random_state = _integer(random_state, "random_state")
    if n_samples is not None:
        n_samples = _integer(n_samples, "n_samples")
    params = {"dataset": spec.name, "dedupe": bool(dedupe), "n_samples": n_samples}
    if spec.source_path is not None:  # a local file may change under the same name
        params["sha256"] = spec.sha256
    params.update(spec.read_options)
    if spec.output == "regression":
        params["n_bins"] = n_bins
    if spec.output == "reviews":
        params.update(n_svd_components=n_svd_components, tfidf=TFIDF_PARAMS)
    if spec.kind == "generated" or spec.output == "reviews" or n_samples is not None:
        params["random_state"] = random_state
    if spec.drop_features:  # absent when empty: the other datasets' caches stay valid
        params["drop_features"] = list(spec.drop_features)
    if feature_scaling != "per_column":  # the default stays out of the key: existing caches stay valid
        params["feature_scaling"] = feature_scaling
    return params


def _take(features, target, rows):
    """Select rows (boolean mask or indices) of an array or of a list of texts."""
    rows = np.flatnonzero(rows) if rows.dtype == bool else rows
    if isinstance(features, np.ndarray):
        return features[rows], target[rows]
    return [features[i] for i in rows], target[rows]


def _prepare(spec, params, *, cache_root, mirror):
    """Read and preprocess as the paper does; return ``(X, y, info)``."""
    n_samples, random_state = params["n_samples"], params.get("random_state", 0)
    generated = spec.kind == "generated"
    (features, target), source = _read(
        spec,
        cache_dir=cache_root,
        mirror=mirror,
        n_samples=n_samples if generated else None,
        random_state=random_state,
    )
    info = {
        "dataset": spec.name,
        "kind": spec.kind,
        "paper": spec.paper,
        "description": spec.description,
        "notes": spec.notes,
        "source": source,
        "params": params,
        "n_rows_raw": len(target),
    }
    if params["dedupe"]:
        features, target = _take(features, target, first_occurrence_mask(features, target))
        info["n_rows_deduplicated"] = len(target)
    if n_samples is not None and not generated:
        rows = subsample_indices(len(target), n_samples, random_state)
        features, target = _take(features, target, rows)

    if spec.output == "regression":
        y, edges = equal_frequency_bins(target, params["n_bins"], name=spec.name)
        info["bin_edges"] = edges.tolist()
        X = np.ascontiguousarray(features, dtype=np.float64)
    elif spec.output == "reviews":
        tfidf_params = {key: value for key, value in params.items()
                        if key not in ("n_svd_components", "feature_scaling")}
        tfidf_file = _cache_file(cache_root, spec.name, cache_key(tfidf_params), prefix="tfidf-")
        try:
            matrix, vocabulary, hit = tfidf_matrix(features, cache_file=tfidf_file)
        except ValueError as error:  # scikit-learn's "empty vocabulary"
            where = f" ({spec.source_path})" if spec.source_path else ""
            raise DatasetError(f"dataset {spec.name!r}{where}: the review texts hold no word of two or more letters "
                               f"or digits, so TF-IDF has no vocabulary ({error})") from None
        X, singular_values = svd_embedding(
            matrix, params["n_svd_components"], random_state=random_state, name=spec.name
        )
        y, classes = ordinal_labels(target)
        info.update(
            classes=classes.tolist(),
            tfidf_vocabulary_size=int(vocabulary.size),
            tfidf_cache={"file": tfidf_file.name, "hit": hit},
            n_svd_components_used=int(X.shape[1]),
            svd_singular_values=singular_values.tolist(),
        )
    else:
        y, classes = ordinal_labels(target)
        info["classes"] = classes.tolist()
        X = np.ascontiguousarray(features, dtype=np.float64)
    if params.get("feature_scaling") == "common":
        low, span = minmax_scale_common_inplace(X)
        info.update(feature_scaling="common", common_scale={"low": low, "span": span}, constant_columns=[])
    else:
        info["constant_columns"] = minmax_scale_inplace(X).tolist()
    info["n_rows"], info["n_features"] = X.shape
    # Rows the source actually held, beside what the registry documents (a mirror may hold part of a file).
    info["n_rows_documented"] = spec.shape[0] if spec.shape is not None else None
    return X, y, info


def _report_imbalance(name, bin_counts, info):
    """Record (and warn about) bins that ties pushed away from equal frequency."""
    ideal = bin_counts.sum() / bin_counts.size
    imbalance = float(np.abs(bin_counts - ideal).max() / ideal)
    info["bin_imbalance"] = imbalance
    info["bins_uneven"] = imbalance > UNEVEN_TOLERANCE
    if info["bins_uneven"]:
        warnings.warn(
            f"{name}: ties make the {bin_counts.size} equal-frequency bins uneven "
            f"(counts {bin_counts.tolist()}, up to {imbalance:.0%} off {ideal:.0f})",
            UnevenBinsWarning,
            stacklevel=3,
        )


def _unless_unverified_and_short(entry, path, spec):
    """``entry``, or None (with a warning) when it was built from a file without checksum whose rows
    differ from the documented count: a truncated file that entered the cache before cache hits were checked."""
    if entry is None:
        return None
    info = entry[1]
    source = info.get("source") or {}
    documented, raw = (spec.shape[0] if spec.shape is not None else None), info.get("n_rows_raw")
    if source.get("sha256_verified") is False and documented is not None and raw != documented:
        warnings.warn(f"cache file {path} was built from {source.get('file')} (no checksum), which held {raw} rows "
                      f"of the {documented} documented; rebuilding it", CacheRebuildWarning, stacklevel=3)
        return None
    return entry


def _cache_file(cache_root, name, key, prefix=""):
    return cache_root / "preprocessed" / name / f"{prefix}{key}.npz"


def load_ordinal(
    name,
    *,
    n_bins=5,
    dedupe=False,
    n_svd_components=1000,
    feature_scaling="per_column",
    cache_dir=None,
    mirror=None,
    n_samples=None,
    random_state=0,
):
    """Load a dataset preprocessed as in the paper, from the npz cache when possible.

    Regression targets are cut into ``n_bins`` equal-frequency bins; review
    texts go through TF-IDF and truncated SVD to ``n_svd_components`` columns,
    their 1..5 ratings becoming labels 0..4; bundled ordinal sets keep their
    classes. Features are then scaled to ``[0, 1]`` over the whole dataset
    ("normalized in advance", as the paper says).

    Parameters
    ----------
    name : str or DatasetSpec
        Key of :data:`~qs3study.datasets.DATASETS`, or a spec (e.g. from
        :func:`~qs3study.datasets.local.local_spec`).
    n_bins : int, default=5
        Number of ordinal classes cut from a regression target (ignored for
        review and ordinal data, whose classes are given).
    dedupe : bool, default=False
        Drop exact duplicate rows (features and target) before anything else.
    n_svd_components : int, default=1000
        SVD width for review data (the paper's 1000); reduced with a warning
        when the corpus is too small.
    feature_scaling : {"per_column", "common"}, default="per_column"
        "per_column" scales every column to ``[0, 1]`` (the paper protocol's reading of
        "normalized to [0, 1]"); "common" (review data only) scales the whole SVD block
        with one offset and span, which keeps the ratios of the components' variances.
    cache_dir : str or path-like, optional
        Cache folder; defaults to ``$QS3ORAO_CACHE``, else ``./resources``.
    mirror : str or path-like, optional
        Offline mirror folder used instead of the network; defaults to
        ``$QS3ORAO_DATA_MIRROR``.
    n_samples : int, optional
        Generated data: number of rows (the dataset's default otherwise).
        Other data: keep a uniform random subsample of this many rows (after
        de-duplication, before binning).
    random_state : int, default=0
        Seed of generated data, of the subsample and of the SVD.

    Returns
    -------
    OrdinalData

    Raises
    ------
    DegenerateBinsError
        If ties make an equal-frequency bin empty (e.g. ``"uci_pol"``).
    DownloadError, ChecksumError
        If the file cannot be obtained or does not match its checksum.

    CacheNotWritableError
        If the cache folder cannot be written.

    Warns
    -----
    UnevenBinsWarning
        If ties make the bins of a regression target differ by more than one row.
    CacheRebuildWarning
        If the cached arrays were unreadable or not this entry's; they are rebuilt.
    """
    spec = get_spec(name)
    n_samples = _default_size(spec, n_samples)
    params = _params(spec, n_bins, dedupe, n_svd_components, n_samples, random_state, feature_scaling)
    cache_root = resolve_cache_dir(cache_dir)
    key = cache_key(params)
    path = _cache_file(cache_root, spec.name, key)
    entry = _unless_unverified_and_short(load_entry(path, key), path, spec)
    if entry is not None:
        (arrays, info), hit = entry, True
        X, y = arrays["X"], arrays["y"]
    else:
        X, y, info = _prepare(spec, params, cache_root=cache_root, mirror=mirror)
        save_entry(path, key, info, X=X, y=y)
        hit = False
    info["cache"] = {"file": str(path), "hit": hit}
    bin_counts = np.bincount(y, minlength=int(y.max()) + 1)
    info["bin_counts"] = bin_counts.tolist()
    if spec.output == "regression":
        _report_imbalance(spec.name, bin_counts, info)
    return OrdinalData(X=X, y=y, name=spec.name, bin_counts=bin_counts, info=info)
