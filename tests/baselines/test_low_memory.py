"""The exact baselines' low-memory solvers: the fast solvers' models to rounding, within their own estimates."""

import warnings

import numpy as np
import pytest

from baselines import MPNUAUC, MemoryBudgetExceeded

PNU_MIXES = [0.0, 0.4, -0.4, 1.0, -1.0, [0.5, -0.3, 0.0]]


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


def test_a_non_convex_risk_falls_back_on_the_low_memory_solver_too(make_problem):
    X, y, _ = make_problem(n=160, n_labeled=60, n_classes=3, d=3)
    params = dict(gamma=2.0, lam=1e-4, pnu_mix=1.0, priors=[0.95, 0.9])
    with pytest.warns(RuntimeWarning, match="not convex"):
        fast = MPNUAUC(low_memory=False, **params).fit(X, y)
    with pytest.warns(RuntimeWarning, match="not convex"):
        low = MPNUAUC(low_memory=True, **params).fit(X, y)
    assert np.all(np.isfinite(low.coef_))
    assert relative_gap(low.decision_function(X), fast.decision_function(X)) < 1e-6


def test_the_fast_solver_is_taken_while_it_fits_the_budget(make_problem):
    X, y, _ = make_problem(n=600, n_labeled=100, n_classes=4, d=3)
    fast, low = MPNUAUC(low_memory=False), MPNUAUC(low_memory=True)
    fast_bytes, low_bytes = (m.estimate_memory(600, 3, 4, 100) for m in (fast, low))
    assert low_bytes < 0.6 * fast_bytes
    params = dict(gamma=2.0, pnu_mix=0.3, priors="labeled_frequency")
    roomy = MPNUAUC(memory_budget=fast_bytes, **params).fit(X, y)
    tight = MPNUAUC(memory_budget=fast_bytes - 1, **params).fit(X, y)
    assert not roomy.low_memory_ and roomy.memory_estimate_ == fast_bytes
    assert tight.low_memory_ and tight.memory_estimate_ == low_bytes
    assert tight.estimate_memory(600, 3, 4, 100) == low_bytes
    with pytest.raises(MemoryBudgetExceeded, match="low-memory solver"):
        MPNUAUC(memory_budget=low_bytes - 1, **params).fit(X, y)
    with pytest.raises(MemoryBudgetExceeded):
        MPNUAUC(memory_budget=fast_bytes - 1, low_memory=False, **params).fit(X, y)


def test_low_memory_must_be_a_boolean_or_none(make_problem):
    X, y, _ = make_problem(n=60, n_labeled=30)
    with pytest.raises(ValueError, match="low_memory must be True, False or None"):
        MPNUAUC(low_memory="yes").fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("cls, params", [(MPNUAUC, dict(pnu_mix=0.3, priors="labeled_frequency")),
                                         (MPNUAUC, dict(pnu_mix=0.0))])
@pytest.mark.parametrize("n", [1500, 3000])
def test_low_memory_estimate_bounds_the_traced_peak(make_problem, traced_peak, cls, params, n):
    X, y, _ = make_problem(n=n, n_labeled=300, n_classes=5, d=3)
    model = cls(gamma=2.0, low_memory=True, **params)
    peak = traced_peak(lambda: model.fit(X, y))
    assert 0.45 * model.memory_estimate_ <= peak <= 1.05 * model.memory_estimate_
