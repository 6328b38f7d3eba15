"""Every verdict function: changing the check's result changes the verdict."""

import math

import pytest

from qs3study.claims import verdicts as v


def test_counterexample_verdict_follows_the_count():
    assert v.counterexample_verdict(0, 10) == v.HOLDS
    assert v.counterexample_verdict(1, 10) == v.FAILS
    assert v.counterexample_verdict(0, 10, conditions=True) == v.CONDITIONAL
    assert v.counterexample_verdict(0, 0) == v.NOT_EVALUATED


def test_identity_verdict_separates_condition_and_failure():
    assert v.identity_verdict(0, 5, 0) == v.HOLDS
    assert v.identity_verdict(0, 5, 0.5) == v.CONDITIONAL
    assert v.identity_verdict(2, 5, 0.5) == v.FAILS
    assert v.identity_verdict(0, 0, 0.5) == v.NOT_EVALUATED


def test_difference_verdict_follows_the_tolerance():
    assert v.difference_verdict(1e-9, 1e-6) == v.HOLDS
    assert v.difference_verdict(1e-3, 1e-6) == v.FAILS
    assert v.difference_verdict(math.nan, 1e-6) == v.INCONCLUSIVE


def test_witness_verdict():
    assert v.witness_verdict(8.0) == v.FAILS
    assert v.witness_verdict(None) == v.CONDITIONAL


@pytest.mark.parametrize("low, high, expected", [
    (-1.3, -0.9, "consistent"), (-0.5, -0.2, "slower"), (-1.2, -0.5, "inconclusive"),
    (math.nan, -0.9, "not finite")])
def test_rate_class(low, high, expected):
    assert v.rate_class(low, high, target=-1.0, tolerance=0.15) == expected


@pytest.mark.parametrize("mean_low, max_high, bound, expected", [
    (2.0, 5.0, 1.0, "exceeded"), (0.1, 0.5, 1.0, "respected"), (0.1, 3.0, 1.0, "inconclusive"),
    (math.inf, math.inf, 1.0, "exceeded"), (0.1, 0.5, math.nan, "undefined")])
def test_bound_class(mean_low, max_high, bound, expected):
    assert v.bound_class(mean_low, max_high, bound) == expected


def test_domain_verdict():
    kwargs = dict(fail_class=("slower", "not finite"), pass_class="consistent")
    assert v.domain_verdict(["consistent"] * 3, **kwargs) == v.HOLDS
    assert v.domain_verdict(["consistent", "inconclusive"], **kwargs) == v.INCONCLUSIVE
    assert v.domain_verdict(["consistent", "not finite"], **kwargs) == v.FAILS
    assert v.domain_verdict([], **kwargs) == v.NOT_EVALUATED


@pytest.mark.parametrize("low, high, expected", [
    (1.8, 2.2, "consistent"), (0.8, 1.2, "inconsistent"), (1.5, 2.5, "inconclusive"), (2.5, 2.9, "inconsistent")])
def test_exponent_class_is_two_sided(low, high, expected):
    assert v.exponent_class(low, high, claimed=2.0, tolerance=0.3) == expected


def test_complexity_verdict():
    assert v.complexity_verdict(["consistent", "consistent"]) == v.HOLDS
    assert v.complexity_verdict(["consistent", "inconclusive"]) == v.INCONCLUSIVE
    assert v.complexity_verdict(["consistent", "inconsistent"]) == v.FAILS


def test_transient_verdict_follows_the_agreement():
    predicted = [1e3, 1e6, 1e9, 1e12, 1.0]
    kwargs = dict(minimum=100.0, decades=2.0, share=0.9, rank=0.8)
    assert v.transient_verdict(predicted, [2e3, 1e7, 1e8, 1e13, 0.5], **kwargs) == v.HOLDS
    assert v.transient_verdict(predicted, [1e12, 1e9, 1e6, 1e3, 0.5], **kwargs) == v.FAILS
    assert v.transient_verdict(predicted, [1e6, 1e9, 1e12, 1e15, 0.5], **kwargs) == v.INCONCLUSIVE
    assert v.transient_verdict([1e3, 1.0], [1e3, 1.0], **kwargs) == v.INCONCLUSIVE


def test_offset_verdict():
    pairs = [("consistent", "consistent"), ("slower", "consistent")]
    assert v.offset_verdict([1.0, 2.0], pairs, peak_limit=10.0) == v.HOLDS
    assert v.offset_verdict([1.0, 50.0], pairs, peak_limit=10.0) == v.FAILS
    assert v.offset_verdict([1.0, 2.0], [("consistent", "slower")], peak_limit=10.0) == v.FAILS
    assert v.offset_verdict([1.0, 2.0], [("consistent", "inconclusive")], peak_limit=10.0) == v.INCONCLUSIVE
    assert v.offset_verdict([], [], peak_limit=10.0) == v.NOT_EVALUATED


def test_dependent_proof_and_facts_verdicts():
    assert v.dependent_proof_verdict([4, 5]) == v.FAILS
    assert v.dependent_proof_verdict([]) == v.HOLDS
    assert v.facts_verdict([True, True, None], choices=False) == v.HOLDS
    assert v.facts_verdict([True, True], choices=True) == v.CONDITIONAL
    assert v.facts_verdict([True, False], choices=True) == v.FAILS
    assert v.not_checkable() == v.NOT_CHECKABLE
    assert v.not_evaluated() == v.NOT_EVALUATED


def test_premise_verdict_separates_a_counterexample_from_a_failed_premise():
    kwargs = dict(fail_class="exceeded", pass_class="respected")
    assert v.premise_verdict(["exceeded", "respected"], [True, True], **kwargs) == v.FAILS
    assert v.premise_verdict(["exceeded", "respected"], [False, True], **kwargs) == v.PREMISE_FAILS
    assert v.premise_verdict(["exceeded", "exceeded"], [False, True], **kwargs) == v.FAILS
    assert v.premise_verdict(["respected", "respected"], [False, False], **kwargs) == v.HOLDS
    assert v.premise_verdict(["respected", "inconclusive"], [True, True], **kwargs) == v.INCONCLUSIVE
    assert v.premise_verdict([], [], **kwargs) == v.NOT_EVALUATED
    with pytest.raises(ValueError, match="premise_holds"):
        v.premise_verdict(["exceeded"], [True, False], **kwargs)


@pytest.mark.parametrize("low, high, local, expected", [
    (2.8, 3.1, [2.5, 2.9, 3.0], "consistent"),        # settled at the claimed exponent
    (1.5, 2.0, [1.9, 1.95], "consistent"),            # grows slower than the bound allows
    (3.6, 3.9, [3.7, 3.8], "inconsistent"),           # faster than the bound
    (2.9, 3.6, [3.1, 3.2], "inconclusive"),
    (2.0, 2.5, [1.47, 2.52], "not dominant"),         # still curving upward: the leading term not shown
    (2.0, 2.5, [2.5], "not dominant"),
])
def test_upper_bound_class(low, high, local, expected):
    assert v.upper_bound_class(low, high, local, claimed=3.0, tolerance=0.3, dominance=0.3) == expected


@pytest.mark.parametrize("successes, trials", [(32, 33), (30, 33), (28, 33), (0, 5), (5, 5), (230, 330)])
def test_bar_verdict_interval_is_the_exact_binomial_one(successes, trials):
    """The Clopper-Pearson bounds solve P(X >= k | low) = P(X <= k | high) = 2.5 %, found here by bisection."""
    from scipy.stats import binom

    def solve(tail, lo=0.0, hi=1.0):
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if tail(mid) < 0 else (lo, mid)
        return (lo + hi) / 2

    low, high, verdict = v.bar_verdict(successes, trials, bar=0.95, confidence=0.95)
    expected_low = 0.0 if successes == 0 else solve(lambda p: binom.sf(successes - 1, trials, p) - 0.025)
    expected_high = 1.0 if successes == trials else solve(lambda p: 0.025 - binom.cdf(successes, trials, p))
    assert low == pytest.approx(expected_low, abs=1e-9) and high == pytest.approx(expected_high, abs=1e-9)
    share = successes / trials
    assert verdict == ("reaches the bar" if share >= 0.95 else "below the bar" if high < 0.95 else "inconclusive")


def test_bar_verdict_refuses_no_trials():
    with pytest.raises(ValueError, match="at least one trial"):
        v.bar_verdict(0, 0, bar=0.95, confidence=0.95)


def test_the_docstring_examples_run():
    import doctest

    result = doctest.testmod(v)
    assert result.attempted >= 2 and result.failed == 0
