"""Divergence: an error naming the schedule and the remedy, never a hang; a warning when a fit ends far off."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from qs3orao import QS3ORAO, DivergenceError, exact_solution
from qs3orao.validation import check_semisupervised
from qs3orao.divergence import SCORE_LIMIT, check_scores, gap_growth_bound, warn_if_far
from qs3orao.exact import objective_value

from .problems import ordinal_problem, quality_bar_problem


def test_paper_schedule_at_tiny_lambda_raises_early_with_the_remedy():
    X, y, _ = ordinal_problem()
    model = QS3ORAO(n_iter=20_000, n_components=4, batch_size=1, lam=1e-4, random_state=0)
    with pytest.raises(DivergenceError) as info:
        model.fit(X, y)
    error = info.value
    # Detected within the first few hundred of 20,000 steps: the fit stops, it does not run on (or hang).
    assert error.iteration < 500
    assert isinstance(error, FloatingPointError)
    message = str(error)
    for part in ("lam=0.0001", "theta=15000", f"iteration {error.iteration} of 20000", "step_offset='auto'",
                 "larger lam"):
        assert part in message


def test_auto_offset_at_tiny_lambda_does_not_diverge():
    X, y, _ = ordinal_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = QS3ORAO(n_iter=300, n_components=4, batch_size=1, lam=1e-4, step_offset="auto",
                        random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.train_scores_))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 2 * SCORE_LIMIT])
def test_check_scores_refuses_non_finite_and_overflowing_scores(bad):
    scores = np.array([0.0, 1.0, bad])
    with pytest.raises(DivergenceError, match="iteration 7 of 9"):
        check_scores(scores, iteration=7, n_iter=9, lam=0.1, theta=15.0, step_offset=0.0, tradeoff=np.array([0.5]))
    check_scores(scores[:2], iteration=7, n_iter=9, lam=0.1, theta=15.0, step_offset=0.0, tradeoff=np.array([0.5]))


def test_a_fit_that_ends_far_off_warns_and_a_converged_one_does_not():
    X, y, _ = quality_bar_problem()
    params = dict(n_iter=1000, batch_size=1, gamma=1.0, lam=0.05, tradeoff=0.5, random_state=0)
    with pytest.warns(ConvergenceWarning, match="objective gap to f\\* at least .* step_offset='auto'"):
        QS3ORAO(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        QS3ORAO(step_offset="auto", **params).fit(X, y)


def test_gap_growth_bound_is_below_the_true_ratio():
    """Against the exact objective of functions in the kernel span (an independent route to L(f) - L(f*))."""
    X, y, _ = quality_bar_problem()
    lam, tradeoff = 0.05, 0.5
    exact = exact_solution(X, y, gamma=1.0, lam=lam, tradeoff=tradeoff)
    _, codes, _, weights = check_semisupervised(X, y, tradeoff=tradeoff)
    optimum = exact.objective()
    start = objective_value(np.zeros(codes.size), exact.kernel, codes, weights, lam)
    rng = np.random.default_rng(0)
    bounds = []
    for size in [0.01, 0.1, 1.0, 10.0]:
        coef = exact.coef + size * rng.standard_normal(codes.size)
        true_ratio = (objective_value(coef, exact.kernel, codes, weights, lam) - optimum) / (start - optimum)
        bound = gap_growth_bound(exact.kernel @ coef, codes, weights)
        assert bound <= true_ratio
        bounds.append(bound)
    assert bounds[-1] > 1  # far-off functions are recognised as such


def test_score_columns_warn_each_for_its_own_setting():
    """warn_if_far over S columns (one pass of QS3ORAO.fit_path) warns exactly as S separate calls do."""
    X, y, _ = quality_bar_problem()
    _, codes, _, weights = check_semisupervised(X, y, tradeoff=0.5)
    rng = np.random.default_rng(1)
    columns = np.stack([np.zeros(codes.size), 30.0 * rng.standard_normal(codes.size),
                        0.01 * rng.standard_normal(codes.size), 50.0 * rng.standard_normal(codes.size)], axis=1)
    tradeoffs = np.stack([weights, weights, np.ones_like(weights), np.ones_like(weights)], axis=1)
    schedule = dict(lam=np.array([0.1, 0.2, 0.3, 0.4]), theta=np.array([1.0, 2.0, 3.0, 4.0]),
                    step_offset=np.array([0.0, 1.0, 2.0, 3.0]))
    with warnings.catch_warnings(record=True) as together:
        warnings.simplefilter("always")
        warn_if_far(columns, codes, tradeoffs, n_iter=9, **schedule)
    with warnings.catch_warnings(record=True) as apart:
        warnings.simplefilter("always")
        for s in range(4):
            warn_if_far(columns[:, s], codes, tradeoffs[:, s], n_iter=9, **{k: v[s] for k, v in schedule.items()})
    assert [str(w.message) for w in together] == [str(w.message) for w in apart]
    assert len(apart) == 2 and "lam=0.2" in str(apart[0].message) and "lam=0.4" in str(apart[1].message)


@pytest.mark.parametrize("weights", [[0.0, 0.5], [1.0, 1.0], [0.3, 1.0]])
@pytest.mark.parametrize("n_unlabeled", [0, 7])
def test_the_bound_is_zero_at_the_zero_function(weights, n_unlabeled):
    """R(0) in closed form is the risk of the zero scores (with and without unlabeled rows)."""
    codes = np.concatenate([[0, 1, 2, 0, 1, 2, 2], np.full(n_unlabeled, -1)])
    assert gap_growth_bound(np.zeros(codes.size), codes, np.array(weights)) == 0.0
    columns = np.zeros((codes.size, 2))
    np.testing.assert_array_equal(gap_growth_bound(columns, codes, np.stack([weights, weights[::-1]], axis=1)), 0.0)
