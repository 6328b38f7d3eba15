"""Datasets of the QS3ORAO paper and their substitutes: download, preprocess, split.

This is the only part of :mod:`qs3orao` that reads files or the network.

Examples
--------
>>> from qs3study.datasets import load_ordinal, semisupervised_split
>>> data = load_ordinal("synthetic", n_samples=2000)          # doctest: +SKIP
>>> split = semisupervised_split(data.y, n_labeled=500, seed=0)  # doctest: +SKIP
"""

from .cache import resolve_cache_dir, resolve_mirror
from .download import LocalFile, fetch, sha256_file
from .errors import (
    ChecksumError,
    DatasetError,
    DegenerateBinsError,
    DownloadError,
    UnevenBinsWarning,
)
from .generated import make_latent_regression, make_review_corpus
from .loaders import OrdinalData, load_ordinal, load_raw
from .local import fetch_source, local_spec
from .preprocess import equal_frequency_bins, first_occurrence_mask, minmax_scale_common_inplace, minmax_scale_inplace
from .registry import DATASETS, PAPER_DATASETS, DatasetSpec, get_spec
from .splits import UNLABELED, PoolTooSmallError, Split, semisupervised_split, trial_rows

__all__ = [
    "DATASETS",
    "PAPER_DATASETS",
    "UNLABELED",
    "ChecksumError",
    "DatasetError",
    "DatasetSpec",
    "DegenerateBinsError",
    "DownloadError",
    "LocalFile",
    "OrdinalData",
    "PoolTooSmallError",
    "Split",
    "UnevenBinsWarning",
    "equal_frequency_bins",
    "fetch",
    "fetch_source",
    "first_occurrence_mask",
    "get_spec",
    "load_ordinal",
    "load_raw",
    "local_spec",
    "make_latent_regression",
    "make_review_corpus",
    "minmax_scale_common_inplace",
    "minmax_scale_inplace",
    "resolve_cache_dir",
    "resolve_mirror",
    "semisupervised_split",
    "sha256_file",
    "trial_rows",
]
