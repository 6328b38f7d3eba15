"""Memory estimates against traced allocations, and the budget that stops a fit before it allocates."""

import tracemalloc

import numpy as np
import pytest

from baselines import MPNUAUC, MSAMULT, SVOREX, MemoryBudgetExceeded, NystromAUC, RFFAUC
from baselines._budget import DEFAULT_FRACTION, available_memory, resolve_budget

CASES = [
    (MPNUAUC, dict(pnu_mix=0.3)),
    (MPNUAUC, dict(pnu_mix=0.3, n_basis=300, random_state=0)),
    (MSAMULT, dict()),
    (RFFAUC, dict(n_random_features=600, random_state=0)),
    (NystromAUC, dict(n_landmarks=600, random_state=0)),
]


def traced_peak(fit):
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("cls, params", CASES)
def test_estimate_matches_the_traced_peak(make_problem, cls, params):
    X, y, _ = make_problem(n=1200, n_labeled=300, n_classes=4, d=3)
    model = cls(gamma=2.0, **params)
    peak = traced_peak(lambda: model.fit(X, y))
    assert 0.7 * model.memory_estimate_ <= peak <= 1.1 * model.memory_estimate_


@pytest.mark.parametrize("cls, params", CASES + [(SVOREX, dict())])
def test_budget_fires_before_any_large_allocation(make_problem, cls, params):
    X, y, _ = make_problem(n=1200, n_labeled=300, n_classes=4, d=3)
    budget = 2**17
    model = cls(gamma=2.0, memory_budget=budget, **params)
    with pytest.raises(MemoryBudgetExceeded) as info:
        model.fit(X, y)
    assert info.value.budget_bytes == budget < info.value.estimate_bytes
    assert isinstance(info.value, MemoryError)
    # the input checks copy X (29 kB); nothing of the fit's own size is allocated
    assert traced_peak(lambda: pytest.raises(MemoryBudgetExceeded, model.fit, X, y)) < budget


def test_default_budget_stops_an_impossible_exact_fit():
    rng = np.random.default_rng(0)
    n = 400_000
    X = rng.uniform(size=(n, 2))
    y = np.full(n, -1)
    y[:300] = np.arange(300) % 3
    with pytest.raises(MemoryBudgetExceeded) as info:
        MSAMULT().fit(X, y)
    assert info.value.estimate_bytes >= 2 * 8 * n * n
    assert info.value.budget_bytes == pytest.approx(DEFAULT_FRACTION * available_memory(), rel=0.1)


def test_budget_argument_is_checked():
    assert resolve_budget(1e6) == 1_000_000
    for bad in (0, -5, "1GB", True):
        with pytest.raises(ValueError, match="memory_budget"):
            resolve_budget(bad)


def test_estimates_grow_as_the_paper_says():
    n = 10_000
    assert MSAMULT.estimate_memory(2 * n, 5, 5) / MSAMULT.estimate_memory(n, 5, 5) == pytest.approx(4, rel=0.01)
    rff = RFFAUC.estimate_memory(2 * n, 5, 5, 512) - RFFAUC.estimate_memory(n, 5, 5, 512)
    assert rff < 1e-3 * MSAMULT.estimate_memory(n, 5, 5)
