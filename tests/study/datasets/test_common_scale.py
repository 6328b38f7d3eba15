"""The common [0, 1] scale of a review set's SVD block: it keeps the spectrum, per-column does not."""

import numpy as np
import pytest

from qs3study.datasets import load_ordinal, load_raw, minmax_scale_common_inplace, minmax_scale_inplace
from qs3study.datasets.text import svd_embedding, tfidf_matrix


def _spectrum_block(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2000, 4)) * np.array([10.0, 3.0, 1.0, 0.1])


def test_common_scale_keeps_the_ratio_of_component_variances():
    X = _spectrum_block()
    before = X.var(axis=0)
    common = X.copy()
    minmax_scale_common_inplace(common)
    assert common.min() == 0.0 and common.max() == 1.0
    np.testing.assert_allclose(common.var(axis=0) / common.var(axis=0)[0], before / before[0], rtol=1e-12)


def test_per_column_scale_flattens_the_spectrum_the_common_scale_keeps():
    X = _spectrum_block()
    per_column = X.copy()
    minmax_scale_inplace(per_column)
    ratio = per_column.var(axis=0)[0] / per_column.var(axis=0)[-1]
    assert ratio < 2.0  # 10,000 before scaling: the per-column reading changes what the common one keeps


def test_constant_block_becomes_zero():
    X = np.full((3, 2), 4.0)
    assert minmax_scale_common_inplace(X) == (4.0, 0.0) and not X.any()


def test_load_ordinal_common_scale_on_generated_reviews(tmp_path):
    options = dict(n_svd_components=20, n_samples=400, cache_dir=tmp_path, random_state=0)
    per_column = load_ordinal("synthetic_reviews", **options)
    common = load_ordinal("synthetic_reviews", feature_scaling="common", **options)
    assert common.info["feature_scaling"] == "common" and common.X.min() == 0.0 and common.X.max() == 1.0
    np.testing.assert_array_equal(common.y, per_column.y)
    texts, _ = load_raw("synthetic_reviews", n_samples=400, random_state=0)
    raw, _ = svd_embedding(tfidf_matrix(texts)[0], 20, random_state=0)
    relative = raw.var(axis=0) / raw.var(axis=0).max()
    np.testing.assert_allclose(common.X.var(axis=0) / common.X.var(axis=0).max(), relative, rtol=1e-9)
    flattened = per_column.X.var(axis=0) / per_column.X.var(axis=0).max()
    assert np.abs(flattened - relative).max() > 0.1
    assert common.info["cache"]["file"] != per_column.info["cache"]["file"]


def test_common_scale_is_refused_for_regression_data_and_unknown_values(tmp_path):
    with pytest.raises(ValueError, match="feature_scaling='common'"):
        load_ordinal("synthetic", feature_scaling="common", n_samples=100, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="feature_scaling must be one of"):
        load_ordinal("synthetic_reviews", feature_scaling="global", n_samples=100, cache_dir=tmp_path)
