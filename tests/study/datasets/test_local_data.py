"""A dataset from a local file by configuration alone: a gzipped CSV with its target column, checked and cached."""

import numpy as np
import pytest

from qs3study.datasets import ChecksumError, load_ordinal, local_spec
from qs3study.datasets.errors import DatasetError


def test_a_local_csv_loads_with_its_target_column_and_is_cached(local_files, tmp_path, houses_csv):
    X, price = houses_csv(tmp_path / "again.csv.gz")
    spec = local_spec("houses", {"path": str(tmp_path / "again.csv.gz"), "format": "csv", "target": "price"})
    data = load_ordinal(spec, cache_dir=tmp_path / "cache", n_bins=4)
    assert data.X.shape == (400, 3) and data.bin_counts.tolist() == [100] * 4
    rounded = np.round(price, 6)  # as written
    assert all(rounded[data.y == j].max() < rounded[data.y == j + 1].min() for j in range(3))
    assert data.info["source"]["sha256"] == spec.sha256 and not data.info["cache"]["hit"]
    assert (tmp_path / "cache" / "raw" / "houses" / "again.csv.gz").is_file()
    assert load_ordinal(spec, cache_dir=tmp_path / "cache", n_bins=4).info["cache"]["hit"]


def test_a_changed_local_file_is_not_taken_for_the_old_one(tmp_path, houses_csv):
    houses_csv(tmp_path / "h.csv.gz", seed=0, header=False)
    source = {"path": str(tmp_path / "h.csv.gz"), "format": "csv", "target": -1}
    first = load_ordinal(local_spec("h", source), cache_dir=tmp_path / "cache")
    stale = local_spec("h", source)
    houses_csv(tmp_path / "h.csv.gz", seed=1, header=False)
    with pytest.raises(ChecksumError, match="changed after the plan"):  # nothing cached for it elsewhere
        load_ordinal(stale, cache_dir=tmp_path / "elsewhere")
    second = load_ordinal(local_spec("h", source), cache_dir=tmp_path / "cache")
    assert not second.info["cache"]["hit"] and not np.array_equal(first.X, second.X)


@pytest.mark.parametrize("source, match", [
    ({"format": "csv", "target": "price"}, "path"),
    ({"path": "x.csv", "format": "xlsx", "target": "price"}, "format"),
    ({"path": "x.csv", "format": "csv"}, "target"),
    ({"path": "x.csv", "format": "csv", "target": "price", "text": "body", "label": "stars"}, "target"),
])
def test_an_incomplete_source_is_named(source, match):
    with pytest.raises(ValueError, match=match):
        local_spec("x", source, sha256="0" * 64)


def test_a_missing_column_is_named(local_files, tmp_path):
    spec = local_spec("h", {"path": str(local_files / "houses.csv.gz"), "format": "csv", "target": "cost"})
    with pytest.raises(DatasetError, match="no column 'cost'"):
        load_ordinal(spec, cache_dir=tmp_path / "cache")
