"""Memory estimates against traced allocations, and the budget that stops a fit before it allocates."""

import numpy as np
import pytest

from baselines import MPNUAUC, MSAMULT, SVOREX, MemoryBudgetExceeded, NystromAUC, QS3ORAOExact, RFFAUC
from baselines._budget import DEFAULT_FRACTION, available_memory, resolve_budget

CASES = [
    (MPNUAUC, dict(pnu_mix=0.3)),
    (MPNUAUC, dict(pnu_mix=0.3, n_basis=300, random_state=0)),
    (MSAMULT, dict()),
    (RFFAUC, dict(n_random_features=600, random_state=0)),
    (NystromAUC, dict(n_landmarks=600, random_state=0)),
]


@pytest.mark.slow
@pytest.mark.parametrize("cls, params", CASES)
def test_estimate_matches_the_traced_peak(make_problem, traced_peak, cls, params):
    X, y, _ = make_problem(n=1200, n_labeled=300, n_classes=4, d=3)
    model = cls(gamma=2.0, **params)
    peak = traced_peak(lambda: model.fit(X, y))
    assert 0.7 * model.memory_estimate_ <= peak <= 1.1 * model.memory_estimate_


@pytest.mark.parametrize("cls, params", CASES + [(SVOREX, dict())])
def test_budget_fires_before_any_large_allocation(make_problem, traced_peak, cls, params):
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
    with pytest.raises(MemoryBudgetExceeded, match="low-memory solver") as info:
        MSAMULT().fit(X, y)
    assert info.value.estimate_bytes >= 8 * n * n
    assert info.value.budget_bytes == pytest.approx(DEFAULT_FRACTION * available_memory(), rel=0.1)


def test_budget_argument_is_checked():
    assert resolve_budget(1e6) == 1_000_000
    for bad in (0, -5, "1GB", True):
        with pytest.raises(ValueError, match="memory_budget"):
            resolve_budget(bad)


def test_estimates_grow_as_the_paper_says():
    n = 20_000  # where the low-memory solver's row chunks weigh under 1% of its n^2
    for samult in (MSAMULT(low_memory=False), MSAMULT(low_memory=True)):
        assert samult.estimate_memory(2 * n, 5, 5) / samult.estimate_memory(n, 5, 5) == pytest.approx(4, rel=0.01)
    rff, samult = RFFAUC(n_random_features=512), MSAMULT(low_memory=True)
    assert rff.estimate_memory(2 * n, 5, 5) - rff.estimate_memory(n, 5, 5) < 1e-3 * samult.estimate_memory(n, 5, 5)


#: Estimates (bytes) at d = 7, k = 5 as the separate per-method signatures gave them, before every
#: ``estimate_memory`` took one signature: (estimator, n_labeled) -> {n_samples: bytes}.
RECORDED_ESTIMATES = [
    (MSAMULT(low_memory=False), None, {1000: 24160000, 30000: 14421360000}),
    (QS3ORAOExact(), None, {1000: 24072000, 30000: 14418720000}),
    (RFFAUC(n_random_features=512), None, {1000: 14440064, 30000: 52947712}),
    (NystromAUC(n_landmarks=512), None, {1000: 12459648, 30000: 38286080}),
    (NystromAUC(n_landmarks=2000), None, {1000: 32128000, 30000: 98240000}),  # more landmarks than rows at 1000
    (MPNUAUC(low_memory=False), None, {1000: 64176000, 30000: 43238400000}),
    (MPNUAUC(low_memory=False), 300, {1000: 72184000, 30000: 50455200000}),
    (MPNUAUC(n_basis=300), 300, {1000: 12351200, 30000: 57151200}),
    (SVOREX(), 300, {1000: 649200, 30000: 649200}),
    (SVOREX(), None, {1000: 4964000, 30000: 3628920000}),
]


@pytest.mark.parametrize("estimator, n_labeled, recorded", RECORDED_ESTIMATES)
def test_estimates_keep_their_values_under_the_one_signature(estimator, n_labeled, recorded):
    for n_samples, nbytes in recorded.items():
        assert estimator.estimate_memory(n_samples, 7, 5, n_labeled) == nbytes


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), np.float64("nan"), 0.0, -1, "1GB"])
@pytest.mark.parametrize("cls", [MSAMULT, MPNUAUC, SVOREX, QS3ORAOExact])
def test_a_budget_that_is_not_a_finite_positive_number_is_refused_by_name(make_problem, cls, bad):
    X, y = make_problem(n=60, n_labeled=30)[:2]
    with pytest.raises(ValueError, match="memory_budget must be a finite positive number of bytes or None") as error:
        cls(memory_budget=bad).fit(X, y)
    assert "np." not in str(error.value)
