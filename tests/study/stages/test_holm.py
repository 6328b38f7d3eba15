"""Holm's adjustment of the AUC table, against its definition by brute force."""

import itertools

import numpy as np
from hypothesis import given, strategies as st

from qs3study.stages.tables import holm


def brute_force_holm(p):
    """Adjusted p_i: the smallest alpha at which Holm's step-down procedure rejects hypothesis i."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    for rank, i in enumerate(order):
        adjusted[i] = min(1.0, max((m - r) * p[order[r]] for r in range(rank + 1)))
    return adjusted


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_holm_matches_its_definition(p):
    np.testing.assert_allclose(holm(p), brute_force_holm(p), rtol=0, atol=1e-12)


def test_nan_entries_are_left_out_of_the_family():
    adjusted = holm([0.01, np.nan, 0.02])
    assert np.isnan(adjusted[1]) and adjusted[0] == 0.02 and adjusted[2] == 0.02
    assert list(itertools.chain(holm([]))) == []
