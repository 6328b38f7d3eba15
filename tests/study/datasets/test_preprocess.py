"""Properties of binning, scaling and de-duplication."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from qs3study.datasets import DegenerateBinsError, equal_frequency_bins, minmax_scale_inplace
from qs3study.datasets.preprocess import first_occurrence_mask, ordinal_labels

# Few distinct values so that ties are common.
tied_targets = arrays(
    np.float64,
    st.integers(10, 300),
    elements=st.integers(-20, 20).map(float) | st.floats(-1e6, 1e6),
)


def _largest_tie(target):
    return np.unique(target, return_counts=True)[1].max()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(target=tied_targets, n_bins=st.integers(2, 8))
def test_bins_are_monotone_and_within_tie_mass(target, n_bins):
    try:
        labels, edges = equal_frequency_bins(target, n_bins)
    except DegenerateBinsError:
        # Refusal is only allowed when a tie group is at least as big as a bin.
        assert _largest_tie(target) >= len(target) / n_bins
        return
    counts = np.bincount(labels, minlength=n_bins)
    assert counts.size == n_bins and counts.min() > 0
    assert np.abs(counts - len(target) / n_bins).max() <= _largest_tie(target)
    order = np.argsort(target, kind="stable")
    assert np.all(np.diff(labels[order]) >= 0)
    # Equal targets share a bin; bins are right-closed at the edges.
    for value in np.unique(target):
        assert np.unique(labels[target == value]).size == 1
    np.testing.assert_array_equal(labels, np.searchsorted(edges, target, side="left"))


@settings(max_examples=100, deadline=None)
@given(n=st.integers(10, 500), n_bins=st.integers(2, 10), seed=st.integers(0, 2**32 - 1))
def test_bins_without_ties_differ_by_at_most_one(n, n_bins, seed):
    target = np.random.default_rng(seed).permutation(n).astype(float)
    labels, _ = equal_frequency_bins(target, n_bins)
    counts = np.bincount(labels, minlength=n_bins)
    assert counts.max() - counts.min() <= 1


def test_collapsing_bins_are_refused_with_the_name():
    target = np.r_[np.zeros(70), np.arange(30.0)]
    with pytest.raises(DegenerateBinsError, match="toy: 5 equal-frequency bins collapse"):
        equal_frequency_bins(target, 5, name="toy")


@pytest.mark.parametrize("bad", [1, 2.5, "5"])
def test_n_bins_is_validated(bad):
    with pytest.raises((ValueError, TypeError)):
        equal_frequency_bins(np.arange(10.0), bad)


@settings(max_examples=100, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 6)),
                elements=st.floats(-1e9, 1e9)))
def test_scaling_lands_in_unit_interval(X):
    original = X.copy()
    constant = minmax_scale_inplace(X)
    assert X.min() >= 0.0 and X.max() <= 1.0
    varying = np.setdiff1d(np.arange(X.shape[1]), constant)
    assert np.all(X[:, constant] == 0.0)
    assert np.allclose(X[:, varying].min(axis=0), 0.0) and np.allclose(X[:, varying].max(axis=0), 1.0)
    # Order within each column is preserved.
    for j in varying:
        assert np.all(np.diff(X[np.argsort(original[:, j], kind="stable"), j]) >= 0)


def test_scaling_rejects_non_finite_values():
    with pytest.raises(ValueError, match="NaN"):
        minmax_scale_inplace(np.array([[0.0], [np.nan]]))


def test_dedupe_keeps_first_of_exact_duplicates_only():
    X = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [3.0, 4.0]])
    target = np.array([0.5, 0.5, 0.7, 0.5])
    np.testing.assert_array_equal(first_occurrence_mask(X, target), [True, False, True, True])
    texts = ["a", "a", "b"]
    np.testing.assert_array_equal(first_occurrence_mask(texts, np.array([5, 5, 5])), [True, False, True])


def test_ratings_map_to_consecutive_labels():
    labels, classes = ordinal_labels([5, 1, 3, 5])
    np.testing.assert_array_equal(labels, [2, 0, 1, 2])
    np.testing.assert_array_equal(classes, [1, 3, 5])
