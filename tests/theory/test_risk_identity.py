"""Claim 1: R_PN = R_PU + R_NU - 1/2 (zero-one loss) and its failure for the squared surrogate."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from qs3orao.objective import pair_risk
from qs3study.theory.checks import PINNED_NOT_A_MIXTURE, PINNED_SQUARED_F_DEPENDENT, PINNED_SQUARED_GAP
from qs3study.theory.risk_identity import (empirical_mixture, identity_gap, pairwise_risk, squared_identity_bias,
                                          variance_penalty_effect)

# Scores: small integers give ties, floats give everything else.
scores = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e3, 1e3, allow_nan=False, width=32))
score_sets = st.lists(scores, min_size=1, max_size=5)
multiplicities = st.tuples(st.integers(0, 3), st.integers(0, 3)).filter(lambda m: m != (0, 0))
# Derandomised so that the search, and the counterexample it shrinks to, are reproducible.
FIND = settings(max_examples=300, derandomize=True, suppress_health_check=list(HealthCheck))


@settings(max_examples=80, deadline=None)
@given(FP=score_sets, FN=score_sets, mult=multiplicities)
def test_zero_one_identity_is_exact_when_U_is_a_mixture(FP, FN, mult):
    assert identity_gap(FP, FN, empirical_mixture(FP, FN, *mult), "zero_one") == 0


@settings(max_examples=80, deadline=None)
@given(FP=score_sets, FN=score_sets, mult=multiplicities)
def test_squared_loss_gap_has_the_closed_form(FP, FN, mult):
    gap = identity_gap(FP, FN, empirical_mixture(FP, FN, *mult), "squared")
    assert gap == squared_identity_bias(FP, FN, *mult)
    assert gap >= Fraction(1, 2)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the paper calls the objective unbiased, but for the squared loss it is off "
                                       "by 1/2 + 2 pi Var_P + 2 (1 - pi) Var_N; pinned as PINNED_SQUARED_GAP")
@settings(max_examples=100, deadline=None)
@given(FP=score_sets, FN=score_sets, mult=multiplicities)
def test_squared_loss_objective_is_unbiased_as_claimed(FP, FN, mult):
    assert identity_gap(FP, FN, empirical_mixture(FP, FN, *mult), "squared") == 0


def test_hypothesis_finds_the_pinned_squared_counterexamples():
    found = find(st.tuples(score_sets, score_sets), lambda e: identity_gap(*e, empirical_mixture(*e, 1, 1), "squared") != 0,
                 settings=FIND)
    assert found == ([0.0], [0.0]) and tuple(found[0]) == PINNED_SQUARED_GAP["FP"]
    # A bias that depends on f (not just a constant) moves the minimiser.
    found = find(st.tuples(score_sets, score_sets),
                 lambda e: identity_gap(*e, empirical_mixture(*e, 1, 1), "squared") != Fraction(1, 2), settings=FIND)
    assert (tuple(found[0]), tuple(found[1])) == (PINNED_SQUARED_F_DEPENDENT["FP"], PINNED_SQUARED_F_DEPENDENT["FN"])


def test_identity_needs_the_mixture_condition():
    pinned = PINNED_NOT_A_MIXTURE
    assert identity_gap(pinned["FP"], pinned["FN"], pinned["FU"], "zero_one") == Fraction(1, 2)
    found = find(st.tuples(score_sets, score_sets, score_sets),
                 lambda e: identity_gap(*e, "zero_one") != 0, settings=FIND)
    assert identity_gap(*found, "zero_one") != 0


@settings(max_examples=50, deadline=None)
@given(FA=score_sets, FB=score_sets)
def test_exact_squared_risk_matches_the_objective_closed_form(FA, FB):
    value = pair_risk(np.array(FA, dtype=float), np.array(FB, dtype=float))[0]
    assert value == pytest.approx(float(pairwise_risk(FA, FB, "squared")), rel=1e-9, abs=1e-9)


def test_the_bias_acts_as_a_within_class_variance_penalty():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(30, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(30), [0.4, 0.7])
    effect = variance_penalty_effect(X, y, gamma=1.0, lam=0.1)
    assert abs(effect["objective_gap_pn"]) < 1e-9 and abs(effect["objective_gap_u"]) < 1e-9
    assert effect["relative_shift"] > 0.01
    assert effect["variance_u"] < effect["variance_pn"]
