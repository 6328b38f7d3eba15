"""Reliability of the data layer: no poisoned cache, clear errors, the rows actually loaded."""

import gzip
import io
import os
import warnings
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from qs3study.datasets import DATASETS, fetch, load_ordinal
from qs3study.datasets.cache import CACHE_ENV, cache_key
from qs3study.datasets.errors import CacheNotWritableError, CacheRebuildWarning, IncompleteFileError

RNG = np.random.default_rng(0)


def _files_under(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _csv(n_rows, n_columns):
    values = RNG.uniform(0, 100, size=(n_rows, n_columns)).round(6)
    return "".join(",".join(f"{v:.6f}" for v in row) + "\n" for row in values).encode()


def _serve(server, monkeypatch, base, body, *, no_length=True, **changes):
    """A copy of ``DATASETS[base]`` without checksum whose only URL is the local server."""
    spec = DATASETS[base]
    path = f"/upstream/{spec.fname}"
    server.files[path] = body
    if no_length:
        server.no_length.add(path)
    test_spec = replace(spec, name=f"test_{base}", urls=(server.url(path),), sha256=None, **changes)
    monkeypatch.setitem(DATASETS, test_spec.name, test_spec)
    return test_spec


# --- a file without checksum is checked before it enters the cache ---------------------------------

def test_truncated_gzip_without_content_length_is_refused_and_not_kept(http_server, monkeypatch, cache_dir):
    body = gzip.compress(_csv(400, 5))
    spec = _serve(http_server, monkeypatch, "uci_kin40k", body[: len(body) // 2], shape=(400, 4))
    with pytest.raises(IncompleteFileError, match=r"test_uci_kin40k.*no checksum.*does not read as a complete"):
        fetch(spec, cache_dir=cache_dir, retries=0)
    assert _files_under(cache_dir) == []


@pytest.mark.slow
def test_html_error_page_is_refused_and_not_kept(http_server, monkeypatch, cache_dir):
    page = b"<!DOCTYPE html><html><body><h1>503 Service Unavailable</h1></body></html>\n"
    spec = _serve(http_server, monkeypatch, "uci_kin40k", page, shape=(400, 4))
    with pytest.raises(IncompleteFileError, match="does not read as a complete 'data.csv.gz'"):
        load_ordinal(spec.name, cache_dir=cache_dir)
    assert _files_under(cache_dir) == []


@pytest.mark.parametrize("cut", ["mid_last_number", "mid_row"])
def test_plain_text_road_file_cut_short_is_refused(http_server, monkeypatch, cache_dir, cut):
    # The transfer stops inside row 300 of 301: in its last number (the row still parses) or
    # before its last column.  Only the documented row count can tell the first case.
    text = _csv(301, 4)
    row_300_end = text[:-1].rfind(b"\n")
    end = row_300_end - 3 if cut == "mid_last_number" else text[:row_300_end].rfind(b",") - 2
    spec = _serve(http_server, monkeypatch, "road3d", text[:end], shape=(301, 3))
    with pytest.raises(IncompleteFileError, match=r"test_road3d.*(holds 300 rows; the registry documents 301|"
                                                  r"missing or non-numeric)"):
        fetch(spec, cache_dir=cache_dir, retries=0)
    assert _files_under(cache_dir) == []


def test_complete_file_without_checksum_is_cached_and_read(http_server, monkeypatch, cache_dir):
    spec = _serve(http_server, monkeypatch, "road3d", _csv(300, 4), shape=(300, 3))
    data = load_ordinal(spec.name, cache_dir=cache_dir)
    assert data.X.shape == (300, 3)
    assert data.info["source"]["sha256_verified"] is False
    assert (cache_dir / "raw" / spec.name / spec.fname).is_file()


def test_upstream_addresses_prefer_https():
    for spec in DATASETS.values():
        if spec.urls:
            assert spec.urls[0].startswith("https://"), spec.name


# --- a corrupted preprocessed entry is detected and rebuilt -----------------------------------------

def _entry(cache_dir, name="synthetic", n_samples=300):
    params = {"dataset": name, "dedupe": False, "n_samples": n_samples, "n_bins": 5, "random_state": 0}
    return cache_dir / "preprocessed" / name / f"{cache_key(params)}.npz"


def _other_valid_entry(cache_dir):
    other = load_ordinal("synthetic", n_samples=200, cache_dir=cache_dir)
    return open(other.info["cache"]["file"], "rb").read()


def _without_key(cache_dir):
    buffer = io.BytesIO()
    with zipfile.ZipFile(_entry(cache_dir)) as source, zipfile.ZipFile(buffer, "w") as target:
        for member in source.namelist():
            if member != "y.npy":
                target.writestr(member, source.read(member))
    return buffer.getvalue()


CORRUPTIONS = {
    "truncated": lambda cache_dir: _entry(cache_dir).read_bytes()[:-300],
    "garbage": lambda cache_dir: RNG.bytes(5000),
    "empty": lambda cache_dir: b"",
    "missing_key": _without_key,
    "other_dataset_entry": _other_valid_entry,
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupted_cache_entry_is_rebuilt_with_a_warning(cache_dir, corruption):
    fresh = load_ordinal("synthetic", n_samples=300, cache_dir=cache_dir)
    path = _entry(cache_dir)
    assert fresh.info["cache"]["file"] == str(path)
    path.write_bytes(CORRUPTIONS[corruption](cache_dir))

    with pytest.warns(CacheRebuildWarning, match="rebuilding"):
        rebuilt = load_ordinal("synthetic", n_samples=300, cache_dir=cache_dir)
    assert rebuilt.info["cache"]["hit"] is False
    np.testing.assert_array_equal(rebuilt.X, fresh.X)
    np.testing.assert_array_equal(rebuilt.y, fresh.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheRebuildWarning)
        again = load_ordinal("synthetic", n_samples=300, cache_dir=cache_dir)
    assert again.info["cache"]["hit"] is True


def test_corrupted_tfidf_entry_is_rebuilt(cache_dir):
    fresh = load_ordinal("synthetic_reviews", n_samples=300, n_svd_components=20, cache_dir=cache_dir)
    tfidf = next((cache_dir / "preprocessed" / "synthetic_reviews").glob("tfidf-*.npz"))
    tfidf.write_bytes(tfidf.read_bytes()[:1000])
    with pytest.warns(CacheRebuildWarning, match="tfidf-"):
        rebuilt = load_ordinal("synthetic_reviews", n_samples=300, n_svd_components=30, cache_dir=cache_dir)
    assert rebuilt.info["tfidf_cache"]["hit"] is False
    assert rebuilt.info["tfidf_vocabulary_size"] == fresh.info["tfidf_vocabulary_size"]


# --- a read-only cache folder -------------------------------------------------------------------------

def test_unwritable_cache_names_the_folder_and_the_way_out(cache_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    with pytest.raises(CacheNotWritableError, match=f"{cache_dir}.*Permission denied.*cache_dir=.*{CACHE_ENV}"):
        load_ordinal("synthetic", n_samples=300, cache_dir=cache_dir)


def test_cache_under_a_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(CacheNotWritableError, match="not-a-folder"):
        load_ordinal("synthetic", n_samples=300, cache_dir=blocker / "cache")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; the mocked test covers it")
def test_read_only_cache_folder_is_a_clear_error(cache_dir):
    cache_dir.mkdir(parents=True)
    cache_dir.chmod(0o555)
    try:
        with pytest.raises(CacheNotWritableError, match=str(cache_dir)):
            load_ordinal("synthetic", n_samples=300, cache_dir=cache_dir)
    finally:
        cache_dir.chmod(0o755)


def test_download_into_an_unwritable_cache_is_a_clear_error(http_server, monkeypatch, cache_dir):
    spec = _serve(http_server, monkeypatch, "road3d", _csv(30, 4), shape=(30, 3))
    (cache_dir / "raw").mkdir(parents=True)
    (cache_dir / "raw" / spec.name).write_text("")  # a file where the dataset's folder belongs
    with pytest.raises(CacheNotWritableError, match=f"raw/{spec.name}"):
        fetch(spec, cache_dir=cache_dir, retries=0)
    assert http_server.requests == []


# --- the rows actually loaded -------------------------------------------------------------------------

def test_partial_mirror_file_reports_the_rows_it_holds(monkeypatch, cache_dir, tmp_path):
    spec = replace(DATASETS["road3d"], name="test_partial_road", urls=(), sha256=None)
    monkeypatch.setitem(DATASETS, spec.name, spec)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / spec.fname).write_bytes(_csv(250, 4))
    data = load_ordinal(spec.name, cache_dir=cache_dir, mirror=mirror)
    assert (data.info["n_rows"], data.info["n_rows_documented"]) == (250, 434_874)


# --- bit for bit: the review embedding does not depend on the thread count ----------------------------

def test_review_features_are_the_same_bits_whatever_the_thread_count(tmp_path):
    from threadpoolctl import threadpool_limits

    loaded = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            loaded[threads] = load_ordinal("synthetic_reviews", n_samples=2000, n_svd_components=100,
                                           cache_dir=tmp_path / str(threads)).X
    np.testing.assert_array_equal(loaded[1], loaded[2])
