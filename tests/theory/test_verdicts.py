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
