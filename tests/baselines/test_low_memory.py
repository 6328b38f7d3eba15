"""The exact baselines' low-memory solvers: the fast solvers' models to rounding, within their own estimates."""

import warnings

import numpy as np
import pytest

import qs3orao.chunking
from baselines import MPNUAUC, MSAMULT, MemoryBudgetExceeded
from baselines._common import ChunkedKernel
from qs3orao.kernels import gaussian_kernel

PNU_MIXES = [0.0, 0.4, -0.4, 1.0, -1.0, [0.5, -0.3, 0.0]]
#: Trade-offs of M-SAMULT: both ends (at 1 the unlabeled rows weigh nothing) and per split.
TRADEOFFS = [0.0, 0.5, 1.0, [0.2, 1.0, 0.0]]


@pytest.fixture
def small_chunks(monkeypatch):
    """Row chunks of 7 rows of 160 floats, so that a 160-row problem takes many chunks, not one."""
    monkeypatch.setattr(qs3orao.chunking, "CHUNK_BYTES", 8 * 160 * 7)


def relative_gap(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def fit_both(cls, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a non-convex risk warns alike on both solvers
        return cls(low_memory=False, **params).fit(X, y), cls(low_memory=True, **params).fit(X, y)


@pytest.mark.parametrize("pnu_mix", PNU_MIXES)
@pytest.mark.parametrize("lam", [0.1, 1.0])
def test_pnu_low_memory_solver_equals_the_fast_one(make_problem, pnu_mix, lam):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=4, d=3)
    fast, low = fit_both(MPNUAUC, X, y, gamma=2.0, lam=lam, pnu_mix=pnu_mix, priors=[0.7, 0.5, 0.25])
    assert not fast.low_memory_ and low.low_memory_
    assert relative_gap(low.decision_function(X), fast.decision_function(X)) < 1e-10
    assert relative_gap(low.coef_, fast.coef_) < 1e-10


def test_pnu_low_memory_path_equals_the_fast_path(make_problem):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=4, d=3)
    settings = [{"lam": lam} for lam in (0.05, 0.5, 5.0)]
    params = dict(gamma=2.0, pnu_mix=0.4)
    fast = MPNUAUC(low_memory=False, **params).fit_path(X, y, settings)
    low = MPNUAUC(low_memory=True, **params).fit_path(X, y, settings)
    for a, b in zip(low, fast):
        assert relative_gap(a.decision_function(X), b.decision_function(X)) < 1e-10


def test_the_chunked_kernel_gives_the_kernels_rows_and_products(make_problem, small_chunks):
    X = make_problem(n=160, d=3)[0]
    K = gaussian_kernel(X, gamma=2.0)
    chunked = ChunkedKernel(X, 2.0)
    M = np.random.default_rng(0).normal(size=(160, 3))
    assert chunked.shape == K.shape
    np.testing.assert_array_equal(chunked[10:20], K[10:20])
    np.testing.assert_array_equal(chunked[np.array([3, 150, 7])], K[[3, 150, 7]])
    np.testing.assert_allclose(chunked @ M, K @ M, rtol=1e-13)
    np.testing.assert_allclose(chunked @ M[:, 0], K @ M[:, 0], rtol=1e-13)


@pytest.mark.parametrize("tradeoff, unlabeled", [(t, True) for t in TRADEOFFS] + [(1.0, False)])  # no U: only 1
@pytest.mark.parametrize("lam", [1e-3, 0.1, 1.0])
def test_samult_low_memory_solver_equals_the_fast_one(make_problem, small_chunks, tradeoff, lam, unlabeled):
    X, y, y_true = make_problem(n=160, n_labeled=60, n_classes=4, d=3)
    fast, low = fit_both(MSAMULT, X, y if unlabeled else y_true, gamma=2.0, lam=lam, tradeoff=tradeoff)
    assert not fast.low_memory_ and low.low_memory_
    assert relative_gap(low.decision_function(X), fast.decision_function(X)) < 1e-10
    assert relative_gap(low.coef_, fast.coef_) < 1e-10
    assert relative_gap(low.train_scores_, fast.train_scores_) < 1e-10


def test_samult_low_memory_path_equals_the_fast_path(make_problem, small_chunks):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=4, d=3)
    settings = [{"lam": lam} for lam in (0.05, 0.5, 5.0)]
    params = dict(gamma=2.0, tradeoff=[0.3, 1.0, 0.6])
    fast = MSAMULT(low_memory=False, **params).fit_path(X, y, settings)
    low = MSAMULT(low_memory=True, **params).fit_path(X, y, settings)
    for a, b in zip(low, fast):
        assert a.low_memory_ and not b.low_memory_
        assert relative_gap(a.decision_function(X), b.decision_function(X)) < 1e-10


def test_a_non_convex_risk_falls_back_on_the_low_memory_solver_too(make_problem):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=3, d=3)
    params = dict(gamma=2.0, lam=1e-4, pnu_mix=1.0, priors=[0.95, 0.9])
    with pytest.warns(RuntimeWarning, match="not convex"):
        fast = MPNUAUC(low_memory=False, **params).fit(X, y)
    with pytest.warns(RuntimeWarning, match="not convex"):
        low = MPNUAUC(low_memory=True, **params).fit(X, y)
    assert np.all(np.isfinite(low.coef_))
    assert relative_gap(low.decision_function(X), fast.decision_function(X)) < 1e-6


@pytest.mark.parametrize("cls, params, n, ratio", [
    (MPNUAUC, dict(gamma=2.0, pnu_mix=0.3, priors="labeled_frequency"), 600, 0.6),
    (MSAMULT, dict(gamma=2.0, tradeoff=0.5, lam=0.1), 2000, 0.85),  # the chunks weigh more at small sizes
])
def test_the_fast_solver_is_taken_while_it_fits_the_budget(make_problem, cls, params, n, ratio):
    X, y, _ = make_problem(n=n, n_labeled=100, n_classes=4, d=3)
    fast, low = cls(low_memory=False), cls(low_memory=True)
    fast_bytes, low_bytes = (m.estimate_memory(n, 3, 4, 100) for m in (fast, low))
    assert low_bytes < ratio * fast_bytes
    roomy = cls(memory_budget=fast_bytes, **params).fit(X, y)
    tight = cls(memory_budget=fast_bytes - 1, **params).fit(X, y)
    assert not roomy.low_memory_ and roomy.memory_estimate_ == fast_bytes
    assert tight.low_memory_ and tight.memory_estimate_ == low_bytes
    assert tight.estimate_memory(n, 3, 4, 100) == low_bytes
    with pytest.raises(MemoryBudgetExceeded, match="low-memory solver"):
        cls(memory_budget=low_bytes - 1, **params).fit(X, y)
    with pytest.raises(MemoryBudgetExceeded):
        cls(memory_budget=fast_bytes - 1, low_memory=False, **params).fit(X, y)


def test_samult_low_memory_estimate_is_about_half_the_fast_one_at_scale():
    fast, low = (MSAMULT(low_memory=flag).estimate_memory(30_500, 8, 5) for flag in (False, True))
    assert 0.49 < low / fast < 0.51
    assert low >= 8 * 30_500 ** 2  # the system it holds


@pytest.mark.parametrize("cls", [MPNUAUC, MSAMULT])
def test_low_memory_must_be_a_boolean_or_none(make_problem, cls):
    X, y, _ = make_problem(n=60, n_labeled=30)
    with pytest.raises(ValueError, match="low_memory must be True, False or None"):
        cls(low_memory="yes").fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("cls, params", [(MPNUAUC, dict(pnu_mix=0.3, priors="labeled_frequency")),
                                         (MPNUAUC, dict(pnu_mix=0.0)),
                                         (MSAMULT, dict(tradeoff=0.5)),
                                         (MSAMULT, dict(tradeoff=1.0))])  # 1: only the labeled rows' system
@pytest.mark.parametrize("n", [1500, 3000])
def test_low_memory_estimate_bounds_the_traced_peak(make_problem, traced_peak, cls, params, n):
    X, y, _ = make_problem(n=n, n_labeled=300, n_classes=5, d=3)
    model = cls(gamma=2.0, low_memory=True, **params)
    peak = traced_peak(lambda: model.fit(X, y))
    assert 0.45 * model.memory_estimate_ <= peak <= 1.05 * model.memory_estimate_


@pytest.mark.slow
def test_samult_low_memory_peak_is_well_below_the_fast_ones(make_problem, traced_peak):
    X, y, _ = make_problem(n=4000, n_labeled=300, n_classes=5, d=3)
    fast, low = (traced_peak(lambda flag=flag: MSAMULT(gamma=2.0, low_memory=flag).fit(X, y)) for flag in (False, True))
    assert low < 0.7 * fast  # 2 n^2 floats against n^2 and two 16 MiB row chunks: 0.63 at 4,000 rows
