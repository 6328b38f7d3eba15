"""Semi-supervised splits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qs3study.datasets import PoolTooSmallError, semisupervised_split, trial_rows

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
        ({"n_labeled": 10, "n_unlabeled": Y.size}, "n_unlabeled=660 rows requested, but the 660 rows leave 650"),
        ({"n_labeled": 10, "n_unlabeled": -1}, "n_unlabeled must be a non-negative integer"),
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


# 40 subjects of 25 to 55 rows; the label is mostly the subject's (as in uci_parkinsons).
SUBJECT = np.repeat(np.arange(40), np.arange(40) % 31 + 25)
Y_SUBJECT = np.searchsorted(np.quantile(np.random.default_rng(0).normal(size=40), [0.2, 0.4, 0.6, 0.8]),
                            np.random.default_rng(0).normal(size=40))[SUBJECT]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_labeled=st.integers(5, 300), n_unlabeled=st.integers(0, 400))
def test_a_group_split_keeps_every_group_on_one_side_and_labels_many_groups(seed, n_labeled, n_unlabeled):
    split = semisupervised_split(Y_SUBJECT, n_labeled=n_labeled, seed=seed, n_unlabeled=n_unlabeled, groups=SUBJECT)
    labeled = SUBJECT[split.train_idx[split.labeled_mask]]
    unlabeled = SUBJECT[split.train_idx[~split.labeled_mask]]
    assert split.n_labeled == n_labeled and split.n_unlabeled == n_unlabeled
    assert not set(labeled) & set(unlabeled)
    assert set(split.y_train[split.labeled_mask]) == set(range(5))
    # The labeled rows are drawn from the labeled side's 20 subjects' rows, not from as few as hold n_labeled
    # (a tenth of them would hold the rows); 100 draws leave 6 of the 20 unseen practically never.
    assert n_labeled < 100 or len(set(labeled)) >= 15
    assert n_unlabeled < 100 or len(set(unlabeled)) >= 15


def test_the_division_of_the_groups_is_the_trials_whatever_the_unlabeled_size():
    small = semisupervised_split(Y_SUBJECT, n_labeled=100, seed=4, n_unlabeled=50, groups=SUBJECT)
    whole = semisupervised_split(Y_SUBJECT, n_labeled=100, seed=4, groups=SUBJECT)
    np.testing.assert_array_equal(small.train_idx[:100], whole.train_idx[:100])
    assert set(small.train_idx[100:]) <= set(whole.train_idx[100:])
    # every row of the unlabeled side's 20 groups, none of the labeled side's
    assert len(set(SUBJECT[whole.train_idx[100:]])) == 20
    assert np.isin(SUBJECT, SUBJECT[whole.train_idx[100:]]).sum() == whole.n_unlabeled


def test_a_group_split_that_cannot_hold_the_sizes_says_so_with_the_numbers():
    whole = semisupervised_split(Y_SUBJECT, n_labeled=100, seed=4, groups=SUBJECT)
    side = whole.n_unlabeled
    with pytest.raises(PoolTooSmallError, match=f"n_unlabeled={side + 1} rows requested, but the unlabeled "
                                                f"side's 20 of 40 groups hold {side} rows"):
        semisupervised_split(Y_SUBJECT, n_labeled=100, seed=4, n_unlabeled=side + 1, groups=SUBJECT)
    labeled_side = SUBJECT.size - side
    with pytest.raises(ValueError, match=f"the labeled side's 20 of 40 groups hold {labeled_side} rows, "
                                         f"fewer than n_labeled={labeled_side + 1}"):
        semisupervised_split(Y_SUBJECT, n_labeled=labeled_side + 1, seed=4, groups=SUBJECT)
    with pytest.raises(ValueError, match="at least 2 groups, got 1"):
        semisupervised_split(Y_SUBJECT, n_labeled=10, seed=0, groups=np.zeros(SUBJECT.size))
    # three classes, each held by its own subjects only: a labeled side of 2 of 4 subjects cannot label them all
    with pytest.raises(ValueError, match=r"the labeled side's 2 of 4 groups cannot hold every class \(it takes 3"):
        semisupervised_split(np.repeat([0, 1, 2, 2], 10), n_labeled=6, seed=0, groups=np.repeat(np.arange(4), 10))


def test_a_class_held_by_one_group_is_always_on_the_labeled_side():
    y = np.where(SUBJECT == 7, 4, Y_SUBJECT % 4)
    for seed in range(20):
        split = semisupervised_split(y, n_labeled=50, seed=seed, groups=SUBJECT)
        assert 7 in SUBJECT[split.train_idx[split.labeled_mask]] and 4 in split.y_train


def test_trial_rows_split_by_the_group_column_and_leave_it_out_of_the_features():
    X = np.column_stack([np.arange(SUBJECT.size), SUBJECT, -np.arange(SUBJECT.size)]).astype(float)
    split, features, groups = trial_rows(X, Y_SUBJECT, n_labeled=60, seed=2, n_unlabeled=300, group_column=1)
    expected = semisupervised_split(Y_SUBJECT, n_labeled=60, seed=2, n_unlabeled=300, groups=SUBJECT)
    np.testing.assert_array_equal(split.train_idx, expected.train_idx)
    np.testing.assert_array_equal(features, X[split.train_idx][:, [0, 2]])
    np.testing.assert_array_equal(groups, SUBJECT[split.train_idx])
    plain, features, groups = trial_rows(X, Y_SUBJECT, n_labeled=60, seed=2, n_unlabeled=300)
    np.testing.assert_array_equal(plain.train_idx,
                                  semisupervised_split(Y_SUBJECT, n_labeled=60, seed=2, n_unlabeled=300).train_idx)
    np.testing.assert_array_equal(features, X[plain.train_idx])
    assert groups is None
