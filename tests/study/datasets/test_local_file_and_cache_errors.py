"""A local file's reader errors name the dataset, the key, the file and the line; cache hits of files without
checksum are checked as downloads are."""

import gzip
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from qs3study.datasets import DATASETS, fetch, load_ordinal, local_spec
from qs3study.datasets.errors import CacheRebuildWarning, DatasetError, IncompleteFileError

RNG = np.random.default_rng(21)


# --- local files: every reader error names the dataset, the key, the file and the line ---------------

def _csv(n=60, header=True):
    X = RNG.uniform(size=(n, 3))
    return ("a,b,c,t\n" if header else "") + "".join(f"{a:.5f},{b:.5f},{c:.5f},{a + b + c:.5f}\n" for a, b, c in X)


def _reviews(texts, stars):
    return "".join(json.dumps(({} if t is None else {"body": t}) | {"stars": s}) + "\n" for t, s in zip(texts, stars))


STARS = [int(s) for s in RNG.integers(1, 6, 120)]
WORDS = [" ".join(f"w{(s * 7 + i) % 40}" for i in range(8)) for s in STARS]
REVIEWS = {"text": "body", "label": "stars"}


def _frame_bytes(frame):
    import io
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


def _broken_json():
    lines = _reviews(WORDS, STARS).splitlines()
    lines[9] = lines[9][:-3]
    return "\n".join(lines) + "\n"


def _label_five():
    lines = _csv().splitlines()
    lines[7] = lines[7].rsplit(",", 1)[0] + ",five"
    return "\n".join(lines) + "\n"


READER_CASES = [
    # (file name, content, source options, what the message must say besides dataset, key and path)
    ("parquet.csv", _frame_bytes(pd.DataFrame(RNG.uniform(size=(20, 4)), columns=list("abct"))),
     {"format": "csv", "target": "t"}, "does not read as a csv file"),
    ("text.parquet", _csv(), {"format": "parquet", "target": "t"}, "does not read as a parquet file"),
    ("csv.jsonl", _csv(), {"format": "json-lines", "target": "t"}, "line 1: not valid JSON"),
    ("plain.csv.gz", _csv(), {"format": "csv", "target": "t"}, "BadGzipFile"),
    ("words.svm", "1 1:0.5 2:0.3\n2 1:hello 2:0.1\n", {"format": "libsvm", "target": "label"}, "line 2: '1:hello'"),
    ("value.svm", "1 1:0.5 2:0.3\n2 1:0.2 2:0.1x\n", {"format": "libsvm", "target": "label"}, "line 2: '2:0.1x'"),
    ("unsorted.svm", "1 1:0.5 2:0.3\n2 2:0.2 1:0.1\n", {"format": "libsvm", "target": "label"},
     "line 2: feature indices must rise"),
    ("five.csv", _label_five(), {"format": "csv", "target": "t"}, "line 8, column 't': 'five' is not a number"),
    ("empty.csv", "", {"format": "csv", "target": "t"}, "the file is empty"),
    ("empty.parquet", _frame_bytes(pd.DataFrame({"a": [], "t": []}, dtype=float)),
     {"format": "parquet", "target": "t"}, "holds no rows"),
    ("broken.jsonl", _broken_json(), {"format": "json-lines", **REVIEWS}, "line 10: not valid JSON"),
    ("notext.jsonl", _reviews([w if i % 3 else None for i, w in enumerate(WORDS)], STARS),
     {"format": "json-lines", **REVIEWS}, "40 of 120 records have no text in column 'body' (lines 1, 4, 7"),
    ("onerating.jsonl", _reviews(WORDS, [4] * 120), {"format": "json-lines", **REVIEWS},
     "every record has the rating 4"),
]


@pytest.mark.parametrize("fname, content, source, complaint", READER_CASES, ids=[c[0] for c in READER_CASES])
def test_a_local_file_that_does_not_read_names_dataset_key_path_and_line(tmp_path, fname, content, source,
                                                                         complaint):
    path = tmp_path / fname
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    spec = local_spec("houses", {"path": str(path), **source})
    with pytest.raises(DatasetError) as error:
        load_ordinal(spec, cache_dir=tmp_path / "cache")
    message = str(error.value)
    assert "dataset 'houses'" in message and "datasets.houses.source.path" in message and str(path) in message
    assert complaint in message


@pytest.mark.parametrize("texts", [[""] * 120, ["1 2 3"] * 120], ids=["empty", "numbers-only"])
def test_review_texts_without_words_name_the_dataset_and_file(tmp_path, texts):
    path = tmp_path / "r.jsonl"
    path.write_text(_reviews(texts, STARS))
    with pytest.raises(DatasetError, match=r"dataset 'houses' \(.*r\.jsonl\): the review texts hold no word"):
        load_ordinal(local_spec("houses", {"path": str(path), "format": "json-lines", **REVIEWS}),
                     cache_dir=tmp_path / "cache")


def test_review_columns_of_a_headerless_csv_by_position(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text("".join(f'{s},"{w}",x\n' for w, s in zip(WORDS, STARS)))
    data = load_ordinal(local_spec("r", {"path": str(path), "format": "csv", "text": 1, "label": 0}),
                        cache_dir=tmp_path / "cache", n_svd_components=5)
    assert data.X.shape == (120, 5) and data.n_classes == len(set(STARS))
    with pytest.raises(ValueError, match="both be column names .* or both positions"):
        local_spec("r", {"path": str(path), "format": "csv", "text": 1, "label": "stars"})


# --- cache hits of files without checksum are checked like downloads --------------------------------

def _cached_without_checksum(tmp_path, monkeypatch, base, body, shape, urls=()):
    spec = replace(DATASETS[base], name=f"test_{base}", urls=urls, sha256=None, shape=shape)
    monkeypatch.setitem(DATASETS, spec.name, spec)
    target = tmp_path / "raw" / spec.name / spec.fname
    target.parent.mkdir(parents=True)
    target.write_bytes(body)
    return spec, target


def test_a_truncated_text_file_in_the_cache_is_refused_and_removed(tmp_path, monkeypatch):
    spec, target = _cached_without_checksum(tmp_path, monkeypatch, "road3d", _csv(300, header=False).encode(),
                                            (500, 3))
    with pytest.raises(IncompleteFileError, match="holds 300 rows; the registry documents 500"):
        load_ordinal(spec.name, cache_dir=tmp_path)
    assert not target.exists()


def test_a_damaged_gzip_in_the_cache_is_downloaded_again(tmp_path, monkeypatch, http_server):
    whole = gzip.compress(_csv(400, header=False).encode())
    http_server.files["/upstream/data.csv.gz"] = whole
    spec, target = _cached_without_checksum(tmp_path, monkeypatch, "uci_kin40k", whole[: len(whole) // 2],
                                            (400, 3), urls=(http_server.url("/upstream/data.csv.gz"),))
    with pytest.warns(CacheRebuildWarning, match="does not read as a complete"):
        local = fetch(spec, cache_dir=tmp_path, retries=0)
    assert local.source.startswith("http") and target.read_bytes() == whole
    assert load_ordinal(spec.name, cache_dir=tmp_path).X.shape == (400, 3)


def test_a_damaged_gzip_in_the_cache_without_url_is_a_clear_error_not_eoferror(tmp_path, monkeypatch):
    whole = gzip.compress(_csv(400, header=False).encode())
    spec, target = _cached_without_checksum(tmp_path, monkeypatch, "uci_kin40k", whole[: len(whole) // 2], (400, 3))
    with pytest.raises(IncompleteFileError, match="test_uci_kin40k.*cached file"):
        load_ordinal(spec.name, cache_dir=tmp_path)
    assert not target.exists()


def test_an_entry_built_from_a_short_unverified_file_is_rebuilt(tmp_path, monkeypatch):
    body = _csv(300, header=False).encode()
    spec, target = _cached_without_checksum(tmp_path, monkeypatch, "road3d", body, (300, 3))
    load_ordinal(spec.name, cache_dir=tmp_path)  # complete for the documented 300 rows: cached
    monkeypatch.setitem(DATASETS, spec.name, replace(spec, shape=(500, 3)))  # the file is now known to be short
    with pytest.warns(CacheRebuildWarning, match="held 300 rows of the 500 documented"), \
            pytest.raises(IncompleteFileError):
        load_ordinal(spec.name, cache_dir=tmp_path)
