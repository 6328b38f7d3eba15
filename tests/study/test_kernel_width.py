"""The kernel width on the data's scale, the degenerate-kernel warning and the grid-edge flag, on generated data."""

import logging

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from qs3study.datasets import equal_frequency_bins, make_latent_regression
from qs3study import kernel_width as kw
from qs3study.stages.training import fit_and_score


def test_median_is_the_brute_force_median_and_scales_with_the_data():
    X = np.random.default_rng(0).normal(size=(300, 5))
    assert kw.median_sq_distance(X, seed=0) == pytest.approx(np.median(pdist(X, "sqeuclidean")), rel=1e-10)
    for c in (1e-3, 10.0, 1e3):
        assert kw.gamma_scale("median", c * X, seed=0) * c**2 == pytest.approx(kw.gamma_scale("median", X, seed=0))
    assert kw.gamma_scale("literal", X, seed=0) == 1.0


def test_relative_widths_give_the_same_kernel_whatever_the_feature_scale():
    X = np.random.default_rng(1).uniform(size=(200, 1000)) / 30  # wide, small-scale features (like review SVD)
    grid = 2.0 ** np.arange(-3, 4)
    means = {c: [kw.mean_off_diagonal(c * X, g * kw.gamma_scale("median", c * X, seed=0), seed=0) for g in grid]
             for c in (1.0, 100.0)}
    np.testing.assert_allclose(means[1.0], means[100.0], rtol=1e-9)
    # In high dimension distances concentrate at the median, so the mean is about exp(-2^k):
    # 2^-3..2^2 are usable, 2^3 (exp(-8) < 1e-3) is flagged as degenerate.
    np.testing.assert_allclose(means[1.0], np.exp(-grid), rtol=0.2)
    assert [kw.degenerate_kernel(m) is not None for m in means[1.0]] == [False] * 6 + [True]
    assert kw.mean_off_diagonal(X * 100, 1.0, seed=0) < 1e-3  # the literal gamma = 1 vanishes on the scaled rows


def test_subsample_is_seeded_and_large_inputs_are_bounded():
    X = np.random.default_rng(2).normal(size=(3000, 3))
    assert kw.median_sq_distance(X, seed=5) == kw.median_sq_distance(X, seed=5)
    assert kw.pairwise_sq_distances(X, seed=0).size == kw.MAX_ROWS * (kw.MAX_ROWS - 1) // 2


@pytest.mark.parametrize("bad, match", [(np.ones((5, 2)), "median squared distance"), (np.ones((1, 2)), "at least 2")])
def test_identical_or_single_rows_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        kw.median_sq_distance(bad, seed=0)


def test_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="kernel_width must be one of"):
        kw.gamma_scale("relative", np.eye(3), seed=0)


def test_degenerate_kernel_warning_on_both_sides_and_not_inside():
    X = np.random.default_rng(3).uniform(size=(200, 10))
    assert "below" not in (kw.degenerate_kernel(kw.mean_off_diagonal(X, 1e3, seed=0)) or "below")
    assert kw.degenerate_kernel(kw.mean_off_diagonal(X, 1e3, seed=0)).startswith("degenerate kernel: mean off-diagonal")
    assert "< 0.001" in kw.degenerate_kernel(kw.mean_off_diagonal(X, 1e3, seed=0))
    assert "> 0.999" in kw.degenerate_kernel(kw.mean_off_diagonal(X, 1e-5, seed=0))
    assert kw.degenerate_kernel(kw.mean_off_diagonal(X, 1.0 / kw.median_sq_distance(X, seed=0), seed=0)) is None
    assert kw.degenerate_kernel(kw.DEGENERATE_LOW) is None and kw.degenerate_kernel(kw.DEGENERATE_HIGH) is None


def test_grid_edge_flags_the_ends_only():
    grid = {"lam": (0.125, 1.0, 8.0), "gamma": (0.125, 1.0, 8.0), "tradeoff": (0.0, 0.5, 1.0), "C": (1.0, 2.0)}
    flags = kw.grid_edges({"lam": 0.125, "gamma": 1.0, "tradeoff": [0.5, 1.0], "C": 2.0}, grid)
    assert len(flags) == 2
    assert "lam = 0.125 is the smallest" in flags[0] and "tradeoff[1] = 1 is the largest" in flags[1]
    assert kw.grid_edges({"lam": 1.0}, grid) == []


def _data(tmp_path, n=400):
    X, target = make_latent_regression(n, 4, random_state=0)
    y, _ = equal_frequency_bins(target, 3)
    np.save(tmp_path / "X.npy", X * 50.0)  # features far from the unit scale
    np.save(tmp_path / "y.npy", y.astype(np.int64))
    return tmp_path / "X.npy", tmp_path / "y.npy"


@pytest.mark.parametrize("reading, degenerate", [("literal", True), ("median", False)])
def test_a_training_job_records_and_logs_a_degenerate_kernel(tmp_path, caplog, reading, degenerate):
    X_path, y_path = _data(tmp_path)
    spec = {"method": "m-samult", "params": {"gamma": 1.0, "lam": 1.0}, "memory_budget_mb": 512}
    record = {"seed": 0, "size": "200", "warnings": []}
    with caplog.at_level(logging.WARNING):
        fit_and_score(X_path, y_path, spec, {}, record, logging.getLogger("t"), n_labeled=100, kernel_width=reading)
    assert record["kernel_width"] == reading and record["params"]["gamma"] == 1.0
    assert record["gamma_absolute"] == pytest.approx(record["gamma_scale"])
    assert bool(record["warnings"]) is degenerate
    assert ("degenerate kernel" in caplog.text) is degenerate
    if degenerate:
        assert record["kernel_mean_offdiag"] < kw.DEGENERATE_LOW and record["auc"] < 0.6
