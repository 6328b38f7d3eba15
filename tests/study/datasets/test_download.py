"""Downloads against a local HTTP server, in each upstream file format."""

import bz2
import gzip
import hashlib
import io
import json
import zipfile
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from qs3study.datasets import (
    DATASETS,
    ChecksumError,
    DownloadError,
    fetch,
    load_ordinal,
    load_raw,
)

RNG = np.random.default_rng(0)


def _sgemm_zip():
    params = RNG.integers(1, 64, size=(40, 14)).astype(float)
    runs = RNG.uniform(10, 500, size=(40, 4)).round(2)
    columns = [f"P{i}" for i in range(14)] + [f"Run{i} (ms)" for i in range(1, 5)]
    csv = pd.DataFrame(np.hstack([params, runs]), columns=columns).to_csv(index=False)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("sgemm_product.csv", csv)
        archive.writestr("Readme.txt", "not data")
    return buffer.getvalue(), params, runs.mean(axis=1)


def _year_bz2():
    X = RNG.normal(size=(30, 90)).round(6)
    X[:, 5] = 0.0  # LIBSVM omits zeros; the reader must still return 90 columns
    year = RNG.integers(1922, 2011, size=30).astype(float)
    lines = (
        f"{int(label)} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
        for row, label in zip(X, year)
    )
    return bz2.compress(("\n".join(lines) + "\n").encode()), X, year


def _yolanda_parquet():
    X = RNG.normal(size=(25, 100))
    target = RNG.normal(size=25)
    frame = pd.DataFrame(X, columns=[str(i) for i in range(1, 101)])
    frame["101"] = target
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue(), X, target


def _amazon_jsonl_gz():
    ratings = np.array([5, 4, 1, 3, 5, 2], dtype=float)
    texts = [f"review number {i} é" for i in range(len(ratings))]
    records = [{"reviewerID": f"R{i}", "reviewText": t, "overall": r, "summary": "s"}
               for i, (t, r) in enumerate(zip(texts, ratings))]
    records[2].pop("reviewText")  # a missing text becomes ""
    texts[2] = ""
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    return gzip.compress(body), texts, ratings.astype(np.int64)


FORMATS = {
    "sgemm": _sgemm_zip,
    "year_prediction_msd": _year_bz2,
    "yolanda": _yolanda_parquet,
    "amazon_baby": _amazon_jsonl_gz,
}


def _serve(server, monkeypatch, base, body, *, sha256="right", **changes):
    """Register a copy of ``DATASETS[base]`` whose only URL is the local server."""
    spec = DATASETS[base]
    path = f"/upstream/{spec.fname}"
    server.files[path] = body
    digest = hashlib.sha256(body).hexdigest() if sha256 == "right" else sha256
    test_spec = replace(
        spec, name=f"test_{base}", urls=(server.url(path),), sha256=digest, **changes
    )
    monkeypatch.setitem(DATASETS, test_spec.name, test_spec)
    return test_spec


def _files_under(folder):
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.mark.parametrize("base", list(FORMATS))
def test_download_and_parse_each_upstream_format(http_server, monkeypatch, cache_dir, base):
    body, features, target = FORMATS[base]()
    spec = _serve(http_server, monkeypatch, base, body)

    got_features, got_target = load_raw(spec.name, cache_dir=cache_dir)

    if isinstance(features, list):
        assert got_features == features
        np.testing.assert_array_equal(got_target, target)
    else:
        np.testing.assert_allclose(got_features, features)
        np.testing.assert_allclose(got_target, target)
    assert _files_under(cache_dir) == [cache_dir / "raw" / spec.name / spec.fname]


def test_checksum_mismatch_raises_and_leaves_no_file(http_server, monkeypatch, cache_dir):
    body, _, _ = _sgemm_zip()
    wrong = "0" * 64
    spec = _serve(http_server, monkeypatch, "sgemm", body, sha256=wrong)

    with pytest.raises(ChecksumError, match=f"test_sgemm.*expected {wrong}"):
        fetch(spec, cache_dir=cache_dir, retries=0)
    assert _files_under(cache_dir) == []


def test_interrupted_transfer_raises_and_leaves_no_file(http_server, monkeypatch, cache_dir):
    body, _, _ = _yolanda_parquet()
    # No checksum: the short body must be caught by the transfer itself.
    spec = _serve(http_server, monkeypatch, "yolanda", body, sha256=None)
    http_server.truncate.add("/upstream/" + spec.fname)

    with pytest.raises(DownloadError, match="test_yolanda"):
        fetch(spec, cache_dir=cache_dir, retries=0)
    assert _files_under(cache_dir) == []


def test_failed_request_is_retried(http_server, monkeypatch, cache_dir):
    body, _, _ = _amazon_jsonl_gz()
    spec = _serve(http_server, monkeypatch, "amazon_baby", body)
    http_server.fail_first.add("/upstream/" + spec.fname)

    local = fetch(spec, cache_dir=cache_dir, retries=1)

    assert local.path.read_bytes() == body
    assert len(http_server.requests) == 2


def test_cache_hit_needs_no_network(http_server, monkeypatch, cache_dir):
    body, _, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body)
    first = load_ordinal(spec.name, cache_dir=cache_dir)
    http_server.files.clear()  # any request now gets a 404

    raw_again = fetch(spec, cache_dir=cache_dir)
    second = load_ordinal(spec.name, cache_dir=cache_dir)

    assert len(http_server.requests) == 1
    assert raw_again.source == "cache"
    assert (first.info["cache"]["hit"], second.info["cache"]["hit"]) == (False, True)
    np.testing.assert_array_equal(first.X, second.X)
    np.testing.assert_array_equal(first.y, second.y)


def test_damaged_cache_file_is_downloaded_again(http_server, monkeypatch, cache_dir):
    body, _, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body)
    stale = cache_dir / "raw" / spec.name / spec.fname
    stale.parent.mkdir(parents=True)
    stale.write_bytes(body[:100])

    local = fetch(spec, cache_dir=cache_dir, retries=0)

    assert local.source == spec.urls[0]
    assert stale.read_bytes() == body


@pytest.mark.parametrize("layout", ["same_name", "mapped_path", "env_variable"])
def test_mirror_is_used_instead_of_network(http_server, monkeypatch, cache_dir, tmp_path, layout):
    body, params, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body, mirror_path="deep/copy.zip")
    mirror = tmp_path / "mirror"
    relative = spec.fname if layout == "same_name" else "deep/copy.zip"
    (mirror / relative).parent.mkdir(parents=True)
    (mirror / relative).write_bytes(body)
    if layout == "env_variable":
        monkeypatch.setenv("QS3ORAO_DATA_MIRROR", str(mirror))
        data = load_ordinal(spec.name, cache_dir=cache_dir)
    else:
        data = load_ordinal(spec.name, cache_dir=cache_dir, mirror=mirror)

    assert http_server.requests == []
    assert data.info["source"] == {
        "file": str(mirror / relative),
        "sha256": spec.sha256,
        "origin": "mirror",
        "sha256_verified": True,
    }
    assert data.X.shape == params.shape
    assert not (cache_dir / "raw").exists()  # the mirror is read in place


def test_corrupt_mirror_file_is_refused(http_server, monkeypatch, cache_dir, tmp_path):
    body, _, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body)
    (tmp_path / spec.fname).write_bytes(body[::-1])

    with pytest.raises(ChecksumError, match="mirror file"):
        fetch(spec, cache_dir=cache_dir, mirror=tmp_path)


def test_mirror_only_dataset_without_mirror_is_a_clear_error(cache_dir):
    with pytest.raises(DownloadError, match="'road3d_subset' has no upstream URL"):
        load_raw("road3d_subset", cache_dir=cache_dir)


def test_missing_mirror_folder_names_the_argument(cache_dir, tmp_path):
    with pytest.raises(ValueError, match="mirror="):
        load_raw("sgemm", cache_dir=cache_dir, mirror=tmp_path / "nowhere")


def test_cache_folder_comes_from_environment(http_server, monkeypatch, cache_dir):
    body, _, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body)
    monkeypatch.setenv("QS3ORAO_CACHE", str(cache_dir))

    local = fetch(spec)

    assert local.path == cache_dir / "raw" / spec.name / spec.fname


def test_default_cache_is_resources_in_working_directory(http_server, monkeypatch, cache_dir, tmp_path):
    body, _, _ = _sgemm_zip()
    spec = _serve(http_server, monkeypatch, "sgemm", body)
    monkeypatch.chdir(tmp_path)

    local = fetch(spec)

    assert local.path == tmp_path / "resources" / "raw" / spec.name / spec.fname
