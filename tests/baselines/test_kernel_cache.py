"""Kernel reuse across grid points: same results as recomputing, keyed by content, bounded, read-only."""

import numpy as np
import pytest

from baselines import kernel_cache
from baselines.model_selection import cross_validate_params
from baselines.feature_space import NystromAUC, RFFAUC
from baselines.pnu_auc import MPNUAUC
from baselines.samult import MSAMULT


def _problem(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    y = np.digitize(X.sum(axis=1) + 0.2 * rng.normal(size=n), [1.5, 2.0, 2.5]).astype(np.int64)
    y[60:] = -1
    return X, y


@pytest.mark.parametrize("method", [MSAMULT, MPNUAUC])
def test_reused_kernels_give_the_same_fit_as_recomputed_ones(method):
    X, y = _problem()
    fresh = [method(gamma=0.5, lam=lam).fit(X, y).train_scores_ for lam in (0.25, 2.0)]
    with kernel_cache.reuse_kernels() as stats:
        reused = [method(gamma=0.5, lam=lam).fit(X, y).train_scores_ for lam in (0.25, 2.0)]
        assert stats["hits"] >= 1 and stats["misses"] >= 1
    for a, b in zip(fresh, reused):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", [RFFAUC, NystromAUC])
def test_feature_maps_reuse_map_and_class_moments_across_trade_offs(method):
    X, y = _problem()
    settings = [dict(lam=0.25, tradeoff=0.0), dict(lam=2.0, tradeoff=[0.3, 1.0, 0.6])]
    size = {"n_random_features": 40} if method is RFFAUC else {"n_landmarks": 40}
    fresh = [method(gamma=0.5, random_state=3, **size, **s).fit(X, y) for s in settings]
    with kernel_cache.reuse_kernels() as stats:
        reused = [method(gamma=0.5, random_state=3, **size, **s).fit(X, y) for s in settings]
        # the second fit (another lam and trade-off) finds the map, the moments and the rows' features of the first
        assert stats["hits"] == (3 if method is NystromAUC else 2) and stats["misses"] == stats["hits"]
    for a, b in zip(fresh, reused):
        # per-class moments combined for the risk instead of accumulated weighted: equal to rounding
        np.testing.assert_allclose(b.train_scores_, a.train_scores_, rtol=0,
                                   atol=1e-9 * np.abs(a.train_scores_).max())
    # counted: k = 4 D x D class moments (as before) and the 120 rows' D = 40 features
    assert reused[0].memory_estimate_ - fresh[0].memory_estimate_ == 8 * 40 * (4 * 40 + 120)


@pytest.mark.parametrize("method, size", [(RFFAUC, {"n_random_features": 40}), (NystromAUC, {"n_landmarks": 40}),
                                          (MPNUAUC, {})])
def test_a_lam_path_maps_the_rows_once_and_scores_them_as_a_fresh_mapping_does(method, size, monkeypatch):
    X, y = _problem()
    X_new = X[:30] + 0.01
    lams = [0.25, 0.5, 2.0, 4.0]
    calls = []
    real = kernel_cache.cached
    # count what each kind of cached result computes
    monkeypatch.setattr("baselines._common.cached",
                        lambda kind, *a: real(kind, *a[:-1], lambda: calls.append(kind) or a[-1]()))
    with kernel_cache.reuse_kernels():
        reused = method(gamma=0.5, random_state=3, **size).fit_path(X, y, [{"lam": lam} for lam in lams])
        scores = [model.decision_function(X_new) for model in reused]
    # one mapping of the training rows for all four lam, one of the new rows for all four models
    assert len(calls) == 2 and len(set(calls)) == 1
    if method is MPNUAUC:  # the kept kernel features of the 120 rows, every row a centre, are counted
        fresh = method(gamma=0.5, random_state=3, **size).fit(X, y)
        assert reused[0].memory_estimate_ - fresh.memory_estimate_ == 8 * 120 * 120
    for model, new in zip(reused, scores):  # outside the block the rows are mapped again
        np.testing.assert_array_equal(model.train_scores_, model.decision_function(X))
        np.testing.assert_array_equal(new, model.decision_function(X_new))


def test_a_changed_array_or_width_misses_and_cached_arrays_are_read_only():
    calls = []
    with kernel_cache.reuse_kernels():
        a = np.ones(3)
        first = kernel_cache.cached("k", (a,), (1.0,), lambda: calls.append(1) or np.zeros(2))
        kernel_cache.cached("k", (a,), (1.0,), lambda: calls.append(1) or np.zeros(2))
        a[0] = 2.0
        kernel_cache.cached("k", (a,), (1.0,), lambda: calls.append(1) or np.zeros(2))
        kernel_cache.cached("k", (a,), (2.0,), lambda: calls.append(1) or np.zeros(2))
        with pytest.raises(ValueError, match="read-only"):
            first[0] = 1.0
    assert len(calls) == 3
    assert kernel_cache.cached("k", (a,), (2.0,), lambda: "computed") == "computed"  # off outside the block


def test_the_cache_keeps_at_most_its_byte_bound():
    with kernel_cache.reuse_kernels(max_bytes=3 * 800) as stats:
        for i in range(10):
            kernel_cache.cached("k", (np.array([i]),), (), lambda: np.zeros(100))
        assert stats["bytes"] <= 3 * 800
    with pytest.raises(ValueError, match="max_bytes"):
        with kernel_cache.reuse_kernels(max_bytes=-1):
            pass


def test_cross_validation_with_reuse_matches_the_search_without_it(monkeypatch):
    X, y = _problem()
    with_reuse = cross_validate_params("m-samult", X, y, n_folds=2)
    monkeypatch.setattr("baselines.model_selection.reuse_kernels", lambda max_bytes: kernel_cache.reuse_kernels(0))
    without = cross_validate_params("m-samult", X, y, n_folds=2)
    assert with_reuse.best_params == without.best_params
    assert [r["cv_auc"] for r in with_reuse.table] == [r["cv_auc"] for r in without.table]
