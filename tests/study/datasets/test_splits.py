"""Semi-supervised splits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qs3study.datasets import semisupervised_split

Y = np.repeat(np.arange(5), [300, 200, 100, 50, 10])


def test_layout_labeled_first_then_unlabeled():
    split = semisupervised_split(Y, n_labeled=40, seed=3)
    assert split.train_idx.size == Y.size and np.unique(split.train_idx).size == Y.size
    assert split.n_labeled == 40 and split.labeled_mask[:40].all() and not split.labeled_mask[40:].any()
    np.testing.assert_array_equal(split.y_true, Y[split.train_idx])
    np.testing.assert_array_equal(split.y_train[:40], split.y_true[:40])
    assert np.all(split.y_train[40:] == -1)
    assert split.y_train.dtype == np.int64


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_labeled=st.integers(5, 60))
def test_every_class_is_labeled_and_draw_is_deterministic(seed, n_labeled):
    split = semisupervised_split(Y, n_labeled=n_labeled, seed=seed)
    again = semisupervised_split(Y, n_labeled=n_labeled, seed=seed)
    np.testing.assert_array_equal(split.train_idx, again.train_idx)
    assert set(split.y_train[split.labeled_mask]) == set(range(5))


def test_seeds_give_different_labeled_sets():
    a = semisupervised_split(Y, n_labeled=40, seed=0).train_idx[:40]
    b = semisupervised_split(Y, n_labeled=40, seed=1).train_idx[:40]
    assert not np.array_equal(a, b)


def test_unlabeled_pools_are_nested_and_labeled_rows_fixed():
    small = semisupervised_split(Y, n_labeled=30, seed=7, n_unlabeled=50)
    large = semisupervised_split(Y, n_labeled=30, seed=7, n_unlabeled=300)
    np.testing.assert_array_equal(small.train_idx[:30], large.train_idx[:30])
    assert small.n_unlabeled == 50 and large.n_unlabeled == 300
    assert set(small.train_idx[30:]) <= set(large.train_idx[30:])
    assert not set(large.train_idx[30:]) & set(large.train_idx[:30])


def test_labeled_draw_is_uniform_apart_from_one_row_per_class():
    n_labeled, n_seeds = 66, 300
    counts = np.zeros(Y.size)
    for seed in range(n_seeds):
        counts[semisupervised_split(Y, n_labeled=n_labeled, seed=seed).train_idx[:n_labeled]] += 1
    sizes = np.bincount(Y)
    expected = 1 / sizes + (n_labeled - 5) / (Y.size - 5) * (1 - 1 / sizes)
    observed = np.array([counts[Y == c].mean() / n_seeds for c in range(5)])
    np.testing.assert_allclose(observed, expected, rtol=0.1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_labeled": 4}, "number of classes"),
        ({"n_labeled": Y.size + 1}, "number of rows"),
        ({"n_labeled": 10, "n_unlabeled": Y.size}, "n_unlabeled"),
    ],
)
def test_impossible_requests_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        semisupervised_split(Y, seed=0, **kwargs)


def test_singleton_classes_are_always_labeled():
    y = np.r_[np.zeros(100_000, dtype=int), 1, 2]
    split = semisupervised_split(y, n_labeled=3, seed=0)
    np.testing.assert_array_equal(np.sort(split.y_train[:3]), [0, 1, 2])


def test_labels_must_be_non_negative_integers():
    with pytest.raises(ValueError, match="y must be"):
        semisupervised_split(np.array([0, 1, -1]), n_labeled=2, seed=0)
