"""A dataset from a local file by configuration alone: a gzipped CSV with its target column, checked and cached."""

import json

import numpy as np
import pytest

from qs3study.datasets import ChecksumError, load_ordinal, local_spec
from qs3study.datasets.errors import DatasetError
from qs3study.datasets.local import read_table, read_text_table


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


def _numbers_csv(rows, header="a,b,t"):
    return header + "\n" + "".join(",".join(row) + "\n" for row in rows)


FINE = [("0.1", "0.2", "1.0"), ("0.3", "0.4", "2.0"), ("0.5", "0.6", "3.0")]


@pytest.mark.parametrize("bad, column, shown", [
    (("0.7", "nan", "4.0"), "b", "nan"), (("0.7", "", "4.0"), "b", "nan"), (("inf", "0.8", "4.0"), "a", "inf"),
    (("0.7", "0.8", "-inf"), "t", "-inf"),
], ids=["nan", "empty-cell", "inf", "target-inf"])
def test_a_non_finite_value_is_named_by_file_line_and_column(tmp_path, bad, column, shown):
    path = tmp_path / "houses.csv"
    path.write_text(_numbers_csv(FINE + [bad] + FINE))
    with pytest.raises(DatasetError, match=fr"{path}: line 5, column '{column}': {shown} is not a finite number"):
        read_table(path, file_format="csv", target="t")
    spec = local_spec("houses", {"path": str(path), "format": "csv", "target": "t"})
    with pytest.raises(DatasetError, match=fr"dataset 'houses' \(datasets.houses.source.path: {path}.*line 5, "
                                           fr"column '{column}'"):
        load_ordinal(spec, cache_dir=tmp_path / "cache")


def test_a_non_finite_libsvm_value_is_named_by_line(tmp_path):
    path = tmp_path / "x.svm"
    path.write_text("1 1:0.5 2:0.3\n2 1:0.2 2:nan\n")
    with pytest.raises(DatasetError, match=fr"{path}: line 2: '2:nan' is not a finite number"):
        read_table(path, file_format="libsvm", target="label")


def _plain_csv():
    return _numbers_csv(FINE * 4)


def _parquet_bytes():
    import io

    import pandas as pd

    buffer = io.BytesIO()
    pd.DataFrame({"a": [0.1, 0.2], "t": [1.0, 2.0]}).to_parquet(buffer)
    return buffer.getvalue()


READER_ERRORS = [
    # (file name, content, reader, options, what the message says after the file's path)
    ("text.parquet", _plain_csv(), read_table, {"file_format": "parquet", "target": "t"},
     "does not read as a parquet file"),
    ("parquet.csv", _parquet_bytes(), read_table, {"file_format": "csv", "target": "t"},
     "does not read as a csv file"),
    ("plain.csv.gz", _plain_csv(), read_table, {"file_format": "csv", "target": "t"}, "does not read as a csv file"),
    ("empty.csv", "", read_table, {"file_format": "csv", "target": "t"}, "the file is empty"),
    ("five.csv", _numbers_csv(FINE + [("0.7", "0.8", "five")]), read_table, {"file_format": "csv", "target": "t"},
     "line 5, column 't': 'five' is not a number"),
    ("bad.svm", "1 1:0.5 2:0.3\n2 1:hello 2:0.1\n", read_table, {"file_format": "libsvm", "target": "label"},
     "line 2: '1:hello' is not index:value"),
    ("broken.jsonl", '{"body": "a b", "stars": 1}\n{"body": "c d", "st\n', read_text_table,
     {"file_format": "json-lines", "text": "body", "label": "stars"}, "line 2: not valid JSON"),
    ("five.jsonl", '{"body": "a b", "stars": 1}\n{"body": "c d", "stars": "five"}\n', read_text_table,
     {"file_format": "json-lines", "text": "body", "label": "stars"},
     "line 2, column 'stars': 'five' is not an integer rating"),
]


@pytest.mark.parametrize("fname, content, read, options, complaint", READER_ERRORS, ids=[c[0] for c in READER_ERRORS])
def test_the_readers_name_the_file_and_line_of_what_does_not_read(tmp_path, fname, content, read, options,
                                                                  complaint):
    path = tmp_path / fname
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(DatasetError) as error:
        read(path, **options)
    assert str(error.value).startswith(f"{path}: {complaint}")
    assert "Traceback" not in str(error.value) and error.value.__cause__ is None


@pytest.fixture
def reviews_with_gaps(reviews_jsonl):
    """``reviews_with_gaps(path)``: ``reviews_jsonl`` with the records ``missing`` (0-based) written without a text."""
    def write(path, n=300, missing=(4, 150)):
        reviews_jsonl(path, n=n)
        _remove_texts(path, missing)
    return write


def _remove_texts(path, missing):
    lines = path.read_text().splitlines()
    for i in missing:
        record = json.loads(lines[i])
        del record["body"]
        lines[i] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def _reviews_spec(path, **source):
    return local_spec("shop", {"path": str(path), "format": "json-lines", "text": "body", "label": "stars", **source})


def test_records_without_text_are_refused_by_default_naming_the_option(tmp_path, reviews_with_gaps):
    reviews_with_gaps(tmp_path / "r.jsonl")
    for spec in (_reviews_spec(tmp_path / "r.jsonl"), _reviews_spec(tmp_path / "r.jsonl", empty_text="refuse")):
        with pytest.raises(DatasetError, match=r"2 of 300 records have no text in column 'body' \(lines 5, 151\).*"
                                               r"set the source's empty_text to 'drop' or 'keep'"):
            load_ordinal(spec, cache_dir=tmp_path / "cache", n_svd_components=5)


def test_records_without_text_are_dropped_when_declared_and_counted(tmp_path, reviews_with_gaps):
    reviews_with_gaps(tmp_path / "r.jsonl")
    with pytest.warns(UserWarning, match=r"r.jsonl: dropped 2 of 300 records without text in column 'body' "
                                         r"\(lines 5, 151\)"):
        texts, stars = read_text_table(tmp_path / "r.jsonl", file_format="json-lines", text="body", label="stars",
                                       empty_text="drop")
    assert len(texts) == stars.size == 298 and "" not in texts
    with pytest.warns(UserWarning, match="dropped 2 of 300"):
        data = load_ordinal(_reviews_spec(tmp_path / "r.jsonl", empty_text="drop"), cache_dir=tmp_path / "cache",
                            n_svd_components=5)
    assert data.X.shape == (298, 5) and data.info["n_rows_raw"] == 298
    assert data.info["source"]["empty_text"] == {"policy": "drop", "n_records": 2, "lines": [5, 151]}


def test_records_without_text_are_kept_as_empty_documents_when_declared(tmp_path, reviews_with_gaps):
    reviews_with_gaps(tmp_path / "r.jsonl")
    texts, stars = read_text_table(tmp_path / "r.jsonl", file_format="json-lines", text="body", label="stars",
                                   empty_text="keep")
    assert len(texts) == 300 and texts[4] == texts[150] == "" and stars.size == 300
    data = load_ordinal(_reviews_spec(tmp_path / "r.jsonl", empty_text="keep"), cache_dir=tmp_path / "cache",
                        n_svd_components=5)
    assert data.X.shape == (300, 5)
    assert data.info["source"]["empty_text"] == {"policy": "keep", "n_records": 2, "lines": [5, 151]}
    with pytest.warns(UserWarning, match="dropped 2 of 300"):
        dropped = load_ordinal(_reviews_spec(tmp_path / "r.jsonl", empty_text="drop"),
                               cache_dir=tmp_path / "cache", n_svd_components=5)
    assert not dropped.info["cache"]["hit"]  # another policy, other arrays: another cache entry


def test_empty_text_is_an_option_of_review_sources_only(tmp_path, houses_csv):
    with pytest.raises(ValueError, match="datasets.shop.source.empty_text must be one of"):
        _reviews_spec(tmp_path / "r.jsonl", empty_text="skip")
    houses_csv(tmp_path / "h.csv.gz")
    with pytest.raises(ValueError, match="datasets.h.source.empty_text applies to review"):
        local_spec("h", {"path": str(tmp_path / "h.csv.gz"), "format": "csv", "target": "price", "empty_text": "drop"})


def test_a_fractional_rating_is_shown_as_a_plain_number(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"body": "a b", "stars": 1}\n{"body": "c d", "stars": 4.5}\n')
    with pytest.raises(DatasetError, match=r"line 2, column 'stars': 4.5 is not an integer rating") as error:
        read_text_table(path, file_format="json-lines", text="body", label="stars")
    assert "np." not in str(error.value)
