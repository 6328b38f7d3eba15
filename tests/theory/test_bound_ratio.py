"""Theorem 1's bound over the error of f = 0: the closed form against the paper's formulas written out."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from qs3study.theory.bound_ratio import bound_ratio_grid, informative_from, theorem1_ratio


def paper_bound(t, theta_lam, lam, fstar_norm, M, L, kappa=1.0, phi=1.0):
    """Theorem 1 and Lemma 3 (appendix Q_0) transcribed term by term."""
    theta = theta_lam / lam
    c_squared = (kappa + phi) ** 2 * M ** 2 * theta ** 2
    q0 = 2.0 * math.sqrt(2.0) * math.sqrt(kappa) * (kappa + phi) * L * M * theta ** 2
    discriminant = q0 ** 2 + (2.0 * theta * lam - 1.0) * (1.0 + theta * lam) ** 2 * theta ** 2 * kappa * M ** 2
    q1 = max(fstar_norm, (q0 + math.sqrt(discriminant)) / (2.0 * theta * lam - 1.0))
    return (2.0 * c_squared + 2.0 * kappa * q1 ** 2) / t


def test_hand_value_at_unit_constants():
    # theta = 1, M = L = 1: Q_0 = 4 sqrt 2, the root is 6, Q_1^2 = 68 + 48 sqrt 2, C^2 = 4
    exact = 144.0 + 96.0 * math.sqrt(2.0)
    constants = dict(theta_lam=1.0, lam=1.0, fstar_norm=0.0, M=1.0, L=1.0, zero_error=1.0)
    assert float(theorem1_ratio(1, **constants)) == pytest.approx(exact, rel=1e-14)
    assert informative_from(**constants) == math.floor(exact) + 1 == 280


def test_huber_instance_a_value():
    # huber_problems.csv, instance A, lambda 8: the ratio at the huber study's last checkpoint
    constants = dict(theta_lam=1.5, lam=8.0, fstar_norm=0.0983427, M=6.0, L=6.0)
    expected = paper_bound(2000, **constants) / 0.00113363
    assert float(theorem1_ratio(2000, **constants, zero_error=0.00113363)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(56.42, rel=1e-3)


constants = st.fixed_dictionaries({
    "theta_lam": st.sampled_from([1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 4.0, 8.0]),
    "lam": st.floats(1e-3, 1e4), "fstar_norm": st.floats(0.0, 10.0), "M": st.floats(0.1, 20.0),
    "L": st.floats(0.1, 20.0), "zero_error": st.floats(1e-9, 1.0)})


@given(constants, st.integers(1, 10 ** 6))
def test_ratio_is_the_paper_bound_over_the_zero_error(constants, t):
    zero_error = constants.pop("zero_error")
    assert float(theorem1_ratio(t, **constants, zero_error=zero_error)) == pytest.approx(
        paper_bound(t, **constants) / zero_error, rel=1e-12)


@given(constants)
def test_ratio_falls_as_one_over_t_and_crosses_one_where_stated(constants):
    t = np.array([1, 2, 3, 10, 1000, 10 ** 6])
    ratio = theorem1_ratio(t, **constants)
    assert (np.diff(ratio) < 0).all()
    np.testing.assert_allclose(ratio * t, ratio[0], rtol=1e-12)
    assume(ratio[0] < 2.0 ** 40)  # t an exact float with room for the division's rounding
    start = informative_from(**constants)
    assert float(theorem1_ratio(start, **constants)) < 1.0
    assert start == 1 or float(theorem1_ratio(start - 1, **constants)) >= 1.0


def test_undefined_outside_lemma3():
    constants = dict(theta_lam=0.5, lam=1.0, fstar_norm=1.0, M=1.0, L=1.0, zero_error=1.0)
    assert np.isnan(theorem1_ratio(10, **constants))
    assert informative_from(**constants) == -1


def test_grid_rows():
    problems = pd.DataFrame([{"instance": "A", "lam": 8.0, "fstar_norm": 0.0983427, "M": 6.0, "L": 6.0,
                              "initial_error": 0.00113363, "initial_error_max": 0.00432969}])
    grid = bound_ratio_grid(problems, [1.0, 1.5, 2.5], [2000, 4000])
    assert len(grid) == 6
    assert grid["in_domain"].tolist() == [True, True, True, True, False, False]
    row = grid[(grid["theta_lam"] == 1.5) & (grid["t"] == 2000)].iloc[0]
    assert row["ratio"] == pytest.approx(paper_bound(2000, 1.5, 8.0, 0.0983427, 6.0, 6.0) / 0.00113363)
    assert row["ratio_max"] == pytest.approx(row["ratio"] * 0.00113363 / 0.00432969)
    assert row["bound"] == pytest.approx(row["ratio"] * row["zero_error"])
    # the ratio at t = 4000 is half that at 2000
    ratios = grid[grid["theta_lam"] == 1.0].set_index("t")["ratio"]
    assert ratios[4000] == pytest.approx(ratios[2000] / 2.0)
