import numpy as np
import pytest
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from qs3orao.thresholds import SURROGATES, THRESHOLD_LOSSES, assign_classes, fit_thresholds, threshold_loss


@st.composite
def labeled_scores(draw):
    k = draw(st.integers(2, 5))
    codes = np.concatenate([np.arange(k), draw(arrays(np.int64, draw(st.integers(0, 12)),
                                                      elements=st.integers(0, k - 1)))])
    scores = draw(arrays(np.float64, codes.size, elements=st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0])))
    return scores, codes, k


@pytest.mark.parametrize("loss", sorted(SURROGATES))
@given(data=labeled_scores())
def test_thresholds_minimise_the_all_threshold_loss(loss, data):
    scores, codes, k = data
    b, intervals = fit_thresholds(scores, codes, k, loss, return_intervals=True)
    best = threshold_loss(b, scores, codes, loss)
    grid = np.linspace(scores.min() - 3, scores.max() + 3, 601)
    for j in range(k - 1):
        for value in grid:
            trial = b.copy()
            trial[j] = value
            assert threshold_loss(trial, scores, codes, loss) >= best - 1e-9
        # Both ends of the reported interval are minimisers too.
        for end in intervals[j]:
            trial = b.copy()
            trial[j] = end
            assert threshold_loss(trial, scores, codes, loss) == pytest.approx(best, abs=1e-9)
    assert np.all(np.diff(b) >= 0)


def test_hinge_minimiser_is_an_interval_and_the_midpoint_is_returned():
    # One negative at 0, one positive at 3: every b in [1, 2] has zero hinge loss.
    b, intervals = fit_thresholds(np.array([0.0, 3.0]), np.array([0, 1]), 2, "hinge", return_intervals=True)
    np.testing.assert_allclose(intervals, [[1.0, 2.0]])
    np.testing.assert_allclose(b, [1.5])


def test_logistic_minimiser_is_a_point():
    # Far from the scores the derivative is flat to rounding over a visible width.
    scores, codes = np.full(9, -2.0), np.array([0, 1, 0, 0, 0, 0, 0, 0, 0])
    b, intervals = fit_thresholds(scores, codes, 2, "logistic", return_intervals=True)
    np.testing.assert_array_equal(intervals, [[b[0], b[0]]])
    np.testing.assert_allclose(b, [-2.0 + np.log(8.0)], atol=1e-7)


def test_assign_classes_counts_thresholds_below():
    np.testing.assert_array_equal(assign_classes(np.array([-1.0, 0.0, 0.5, 2.0]), np.array([0.0, 1.0])),
                                  [0, 0, 1, 2])


def test_unknown_loss():
    with pytest.raises(ValueError, match="threshold_loss"):
        fit_thresholds(np.zeros(2), np.array([0, 1]), 2, "cubic")


@pytest.mark.parametrize("loss", THRESHOLD_LOSSES)
@given(st.integers(2, 6), st.integers(0, 60), st.integers(1, 9), st.integers(1, 3), st.integers(0, 2**31))
@settings(max_examples=40, deadline=None)
def test_the_thresholds_of_many_score_vectors_are_each_vectors_own_bit_for_bit(loss, k, extra, n_vectors, n_jobs,
                                                                             seed):
    # Many score vectors at once (the path's settings) take the Newton steps each takes alone, on any number of
    # threads: among them constant scores (no Newton run), reversed ones (a negative scale) and scales far apart.
    rng = np.random.default_rng(seed)
    codes = np.concatenate([np.arange(k), rng.integers(0, k, extra)])
    scores = rng.normal(size=(n_vectors, codes.size)) * 10.0 ** rng.uniform(-4, 3, (n_vectors, 1)) \
        + codes * rng.uniform(-2.0, 3.0, (n_vectors, 1))
    scores[rng.random(n_vectors) < 0.2] = 0.75
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        thresholds, intervals = fit_thresholds(scores, codes, k, loss, return_intervals=True, n_jobs=n_jobs)
        assert thresholds.shape == (n_vectors, k - 1) and intervals.shape == (n_vectors, k - 1, 2)
        for row, threshold, interval in zip(scores, thresholds, intervals):
            alone, alone_interval = fit_thresholds(row, codes, k, loss, return_intervals=True)
            np.testing.assert_array_equal(threshold, alone)
            np.testing.assert_array_equal(interval, alone_interval)


def test_many_score_vectors_warn_for_each_vector_that_carries_no_order():
    codes = np.array([0, 1, 2, 0, 1, 2])
    scores = np.array([[0.0, 1.0, 2.0, 0.1, 1.1, 2.1], np.full(6, 3.0), [2.0, 1.0, 0.0, 2.1, 1.1, 0.1]])
    with pytest.warns(RuntimeWarning) as record:
        thresholds = fit_thresholds(scores, codes, 3, n_jobs=2)
    constant, reversed_ = sorted(str(w.message) for w in record)
    assert constant.startswith("all 6 labeled scores equal 3.0: the scores carry no ordinal information")
    assert reversed_.startswith("the labeled scores decrease with the class")
    assert np.all(np.isfinite(thresholds[0])) and np.all(thresholds[1] == 3.0) and np.all(np.isinf(thresholds[2]))


@pytest.mark.parametrize("n_jobs", [0, -1, 1.5, None, True])
def test_fit_thresholds_refuses_a_thread_count_below_one(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be an integer >= 1"):
        fit_thresholds(np.array([0.0, 1.0]), np.array([0, 1]), 2, n_jobs=n_jobs)


@pytest.mark.parametrize("loss", THRESHOLD_LOSSES)
def test_no_score_vectors_give_no_thresholds(loss):
    thresholds, intervals = fit_thresholds(np.empty((0, 4)), np.array([0, 1, 2, 1]), 3, loss, return_intervals=True)
    assert thresholds.shape == (0, 2) and intervals.shape == (0, 2, 2)
