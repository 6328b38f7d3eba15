"""Generated data, the registry, and the loader on data that needs no download."""

import re

import numpy as np
import pytest

from qs3study.datasets import (
    DATASETS,
    PAPER_DATASETS,
    get_spec,
    load_ordinal,
    load_raw,
    make_latent_regression,
    make_review_corpus,
)
from qs3study.datasets import generated


def test_registry_has_the_papers_eight_datasets_with_sources():
    assert set(PAPER_DATASETS) == {
        "road3d", "sgemm", "year_prediction_msd", "yolanda",
        "amazon_baby", "amazon_beauty", "amazon_clothing", "amazon_pet",
    }
    table2 = {"road3d": (434_874, 3), "sgemm": (241_600, 14),
              "year_prediction_msd": (463_715, 90), "yolanda": (400_000, 100)}
    for name in PAPER_DATASETS:
        spec = DATASETS[name]
        assert spec.urls and all(u.startswith(("http://", "https://")) for u in spec.urls)
        assert spec.kind in ("regression", "reviews")
        if name in table2:
            assert spec.shape == table2[name]


def test_every_spec_is_consistent():
    for name, spec in DATASETS.items():
        assert spec.name == name and spec.description
        assert spec.sha256 is None or re.fullmatch("[0-9a-f]{64}", spec.sha256)
        assert (spec.generator is not None) == (spec.kind == "generated")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*sgemm"):
        get_spec("nope")


@pytest.mark.parametrize("name, shape, n_classes", [
    ("lev", (1000, 4), 5), ("swd", (1000, 10), 4), ("era", (1000, 4), 9), ("esl", (488, 4), 9),
])
def test_skordinal_benchmarks_load(cache_dir, name, shape, n_classes):
    data = load_ordinal(name, cache_dir=cache_dir)
    assert data.X.shape == shape and data.n_classes == n_classes
    assert data.X.min() == 0.0 and data.X.max() == 1.0


def test_latent_regression_is_deterministic_and_chunk_invariant(monkeypatch):
    monkeypatch.setattr(generated, "CHUNK_ROWS", 64)
    X, target = make_latent_regression(300, 6, random_state=4)
    X_small, target_small = make_latent_regression(100, 6, random_state=4)
    np.testing.assert_array_equal(X[:100], X_small)
    np.testing.assert_array_equal(target[:100], target_small)
    assert not np.array_equal(make_latent_regression(100, 6, random_state=5)[1], target_small)
    assert X.min() >= 0 and X.max() <= 1


def test_latent_target_is_nonlinear():
    X, target = make_latent_regression(4000, 8, random_state=0)
    design = np.c_[np.ones(len(X)), X]
    residual = target - design @ np.linalg.lstsq(design, target, rcond=None)[0]
    assert residual.var() > 0.5 * target.var()


def _word_frequencies(texts, vocabulary_size):
    counts = np.zeros(vocabulary_size)
    for text in texts:
        np.add.at(counts, [int(w[1:]) for w in text.split()], 1)
    return counts / counts.sum()


def test_review_words_depend_on_rating(monkeypatch):
    monkeypatch.setattr(generated, "CHUNK_ROWS", 500)
    texts, ratings = make_review_corpus(1200, vocabulary_size=500, random_state=0)
    assert set(np.unique(ratings)) == {1, 2, 3, 4, 5}
    assert texts[:700] == make_review_corpus(700, vocabulary_size=500, random_state=0)[0]
    fives = [t for t, r in zip(texts, ratings) if r == 5]
    low = _word_frequencies([t for t, r in zip(texts, ratings) if r <= 2], 500)
    high_a = _word_frequencies(fives[::2], 500)
    high_b = _word_frequencies(fives[1::2], 500)
    # Total variation between rating groups dwarfs that between halves of one group.
    assert np.abs(low - high_a).sum() > 3 * np.abs(high_a - high_b).sum()


def test_synthetic_loads_with_equal_bins(cache_dir):
    data = load_ordinal("synthetic", n_samples=2003, cache_dir=cache_dir, random_state=1)
    assert data.X.shape == (2003, 8) and data.X.dtype == np.float64 and data.y.dtype == np.int64
    assert data.bin_counts.max() - data.bin_counts.min() <= 1
    X, target = load_raw("synthetic", n_samples=2003, random_state=1)
    order = np.argsort(target)
    assert np.all(np.diff(data.y[order]) >= 0)


def test_synthetic_reviews_through_tfidf_svd_with_cached_tfidf(cache_dir):
    first = load_ordinal("synthetic_reviews", n_samples=600, n_svd_components=20, cache_dir=cache_dir)
    second = load_ordinal("synthetic_reviews", n_samples=600, n_svd_components=8, cache_dir=cache_dir)
    assert first.X.shape == (600, 20) and second.X.shape == (600, 8)
    assert first.info["tfidf_cache"]["hit"] is False and second.info["tfidf_cache"]["hit"] is True
    assert first.X.min() == 0.0 and first.X.max() == 1.0
    assert first.n_classes == 5 and first.info["classes"] == [1, 2, 3, 4, 5]


def test_small_corpus_reduces_svd_width_with_warning(cache_dir):
    with pytest.warns(UserWarning, match="n_svd_components=1000 exceeds"):
        data = load_ordinal("synthetic_reviews", n_samples=60, cache_dir=cache_dir)
    assert data.X.shape == (60, 59) and data.info["n_svd_components_used"] == 59


def test_cache_key_depends_on_parameters(cache_dir):
    a = load_ordinal("synthetic", n_samples=500, n_bins=5, cache_dir=cache_dir)
    b = load_ordinal("synthetic", n_samples=500, n_bins=3, cache_dir=cache_dir)
    c = load_ordinal("synthetic", n_samples=500, n_bins=5, cache_dir=cache_dir)
    assert a.info["cache"]["file"] != b.info["cache"]["file"] == b.info["cache"]["file"]
    assert c.info["cache"] == {"file": a.info["cache"]["file"], "hit": True}
    assert b.n_classes == 3
    assert not [p for p in (cache_dir / "preprocessed").rglob("*") if p.name.startswith(".")]


def test_numpy_integer_arguments_are_accepted_and_floats_refused(cache_dir):
    data = load_ordinal("synthetic", n_samples=np.int64(300), n_bins=np.int32(4), cache_dir=cache_dir)
    assert data.X.shape == (300, 8) and data.n_classes == 4
    with pytest.raises(TypeError, match="n_bins must be an integer"):
        load_ordinal("synthetic", n_samples=300, n_bins=4.5, cache_dir=cache_dir)
