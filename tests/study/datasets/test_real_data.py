"""Real data from the offline mirror (skipped with a reason when it is absent)."""

import warnings

import numpy as np
import pytest

from qs3study.datasets import (
    DegenerateBinsError,
    UnevenBinsWarning,
    load_ordinal,
    load_raw,
    semisupervised_split,
)

# Documented (rows, features) of the mirror's uci_datasets files.
UCI_SHAPES = {
    "uci_kin40k": (40_000, 8),
    "uci_keggdirected": (48_827, 20),
    "uci_keggundirected": (63_608, 27),
    "uci_elevators": (16_599, 18),
    "uci_bike": (17_379, 15),  # the file's 17 features less casual and registered (cnt is their sum)
    "uci_pumadyn32nm": (8_192, 32),
    "uci_parkinsons": (5_875, 20),
    "uci_tamielectric": (45_781, 3),
}


def _load(name, mirror, cache, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnevenBinsWarning)
        return load_ordinal(name, mirror=mirror, cache_dir=cache, **kwargs)


def test_sgemm_matches_table_2_with_equal_bins(shared_mirror, real_cache):
    data = _load("sgemm", shared_mirror, real_cache)
    assert data.X.shape == (241_600, 14)
    assert np.abs(data.bin_counts - 241_600 / 5).max() <= 1
    assert data.info["source"]["origin"] == "mirror" and data.info["source"]["sha256_verified"]
    assert data.X.min() == 0.0 and data.X.max() == 1.0
    split = semisupervised_split(data.y, n_labeled=500, seed=0)
    assert split.n_labeled == 500 and split.n_unlabeled == 241_100


@pytest.mark.parametrize("name", sorted(UCI_SHAPES))
def test_uci_sets_load_with_documented_shape(shared_mirror, real_cache, name):
    data = _load(name, shared_mirror, real_cache)
    assert data.X.shape == UCI_SHAPES[name]
    assert data.n_classes == 5 and data.bin_counts.min() > 0
    assert 0.0 <= data.X.min() and data.X.max() <= 1.0


def test_uci_pol_is_refused(shared_mirror, real_cache):
    with pytest.raises(DegenerateBinsError, match="uci_pol: 5 equal-frequency bins collapse"):
        load_ordinal("uci_pol", mirror=shared_mirror, cache_dir=real_cache)
    X, _ = load_raw("uci_pol", mirror=shared_mirror)
    assert X.shape == (15_000, 26)


def test_uci_elevators_uneven_bins_are_reported(shared_mirror, real_cache):
    with pytest.warns(UnevenBinsWarning, match="uci_elevators"):
        data = load_ordinal("uci_elevators", mirror=shared_mirror, cache_dir=real_cache)
    assert data.info["bins_uneven"] and data.info["bin_imbalance"] > 0.1
    assert data.bin_counts.sum() == 16_599


def test_kegg_dedupe_removes_duplicates(shared_mirror, real_cache):
    data = _load("uci_keggdirected", shared_mirror, real_cache, dedupe=True)
    raw_X, raw_target = load_raw("uci_keggdirected", mirror=shared_mirror)
    n_unique = np.unique(np.c_[raw_X, raw_target], axis=0).shape[0]
    assert data.X.shape[0] == data.info["n_rows_deduplicated"] == n_unique
    assert n_unique < 0.4 * raw_X.shape[0]


def test_road3d_subset_has_two_features(shared_mirror, real_cache):
    data = _load("road3d_subset", shared_mirror, real_cache)
    assert data.X.shape == (5_000, 2)
    assert "no OSM_ID" in data.info["notes"]


def test_amazon_subset_texts_and_tfidf_svd(shared_mirror, real_cache):
    texts, ratings = load_raw("amazon_digital_music", mirror=shared_mirror)
    assert len(texts) == 6_908 and set(np.unique(ratings)) == {1, 2, 3, 4, 5}
    assert np.bincount(ratings)[1:].tolist() == [111, 161, 500, 1474, 4662]
    data = load_ordinal(
        "amazon_digital_music", n_svd_components=40, mirror=shared_mirror, cache_dir=real_cache
    )
    assert data.X.shape == (6_908, 40)
    assert data.bin_counts.tolist() == [111, 161, 500, 1474, 4662]
    assert data.X.min() == 0.0 and data.X.max() == 1.0
