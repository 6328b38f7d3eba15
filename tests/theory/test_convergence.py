"""Claims 5-6 machinery: f_t and h_t side by side; curvature, transient, fixed M, slope of the mean error, bounds."""

import warnings

import numpy as np
import pandas as pd
import pytest

from qs3orao.engine import train
from qs3orao.objective import ordinal_risk
from qs3study.theory import bounds
from qs3study.theory.coefficients import step_coefficients
from qs3study.theory.convergence import (checkpoints, derivative_bound, largest_curvature, make_problem,
                                        mean_error_slope, predicted_amplification, run_cells, run_trajectory,
                                        step_sizes)
from qs3study.claims.summary import summarise


@pytest.fixture(scope="module")
def problem():
    return make_problem(n_labeled=24, n_unlabeled=36, n_classes=3, n_features=2, gamma=2.0, lam=0.5,
                        tradeoff=0.5, seed=1)


def test_f_trajectory_is_the_engine(problem):
    """The instrumented loop computes the same f_{t+1} as qs3orao.engine.train (same seed, same rows)."""
    marks = np.array([40])
    for offset in (0.0, 7.0):
        errors = run_trajectory(problem, 3.0, marks, batch_size=2, n_components=3, seed=5, step_offset=offset)
        _, F = train(problem.X, problem.codes, problem.tradeoff, n_iter=40, batch_size=2, n_components=3,
                     gamma=problem.gamma, lam=problem.lam, theta=3.0, seed=5, step_offset=offset)
        squared = (F - problem.fstar_scores) ** 2
        assert errors["error_mean"][0] == pytest.approx(squared.mean(), rel=1e-9)
        assert errors["error_max"][0] == pytest.approx(squared.max(), rel=1e-9)


def test_random_feature_error_shrinks_with_more_frequencies(problem):
    """With a single iteration f - h = a_1^1 (zeta_1 - xi_1), and zeta -> xi as the frequencies grow."""
    few = run_trajectory(problem, 1.0, np.array([1]), batch_size=1, n_components=1, seed=0)
    many = run_trajectory(problem, 1.0, np.array([1]), batch_size=1, n_components=4000, seed=0)
    assert many["fh_error"][0] < few["fh_error"][0] / 50
    assert few["fh_max"][0] >= few["fh_error"][0]


def test_exact_kernel_iterate_converges_to_fstar(problem):
    marks = checkpoints(3000, 8)
    errors = run_trajectory(problem, 1.5 / problem.lam, marks, batch_size=4, n_components=4, seed=0)
    assert errors["h_error"][-1] < errors["h_error"][0] / 20
    assert np.all(np.diff(errors["peak_error"]) >= 0) and np.all(np.diff(errors["derivative_max"]) >= 0)


def test_largest_curvature_against_the_nonsymmetric_eigenproblem(problem):
    """h is the top eigenvalue of K H; checked against numpy's general eigensolver and a finite difference."""
    H = np.zeros((problem.X.shape[0],) * 2)
    for i in range(H.shape[0]):
        e = np.zeros(H.shape[0])
        e[i] = 1e-3
        H[:, i] = (ordinal_risk(e, problem.codes, problem.tradeoff)[1]
                   - ordinal_risk(-e, problem.codes, problem.tradeoff)[1]) / 2e-3
    expected = np.max(np.linalg.eigvals(problem.kernel @ H).real)
    assert largest_curvature(problem) == pytest.approx(expected, rel=1e-6)


def test_predicted_amplification_is_the_running_product():
    theta, lam, h, n_iter = 40.0, 0.1, 1.0, 200
    factors = (1.0 - step_sizes(theta, n_iter) * (lam + h)) ** 2
    running = np.cumprod(factors)
    peak, t_peak = predicted_amplification(theta, lam, h, n_iter)
    assert peak == pytest.approx(running.max(), rel=1e-9) and t_peak == int(np.argmax(running)) + 1
    # a step that never exceeds 2 / (lam + h) amplifies nothing
    assert predicted_amplification(1.0, lam, h, n_iter) == (1.0, 0)
    # the offset that keeps eta_1 (lam + h) <= 1 removes the amplification
    assert predicted_amplification(theta, lam, h, n_iter, step_offset=theta * (lam + h))[0] == 1.0


def test_an_amplification_past_the_float_range_is_inf_without_a_warning():
    # theta = 1e4 at lam + h = 1.1: the running log-product passes log(max float) ~ 709 at its peak
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        peak, t_peak = predicted_amplification(1e4, 0.1, 1.0, 2000)
    assert peak == np.inf and 0 < t_peak <= 2000


def test_derivative_bound_is_the_largest_pair_derivative(problem):
    from qs3orao.objective import split_members

    scores = problem.fstar_scores
    splits, unlabeled = split_members(problem.codes, problem.tradeoff.size)
    brute = max(2 * abs(1 - scores[a] + scores[b])
                for pos, neg in splits for A, B in ((pos, neg), (pos, unlabeled), (unlabeled, neg))
                for a in A for b in B)
    assert derivative_bound(scores, problem.codes, problem.tradeoff) == pytest.approx(brute)


def test_mean_error_slope_is_the_slope_of_the_mean():
    """A mixture of rates: the mean is dominated by the slow seed, unlike the mean of per-seed slopes."""
    marks = checkpoints(10_000, 20).astype(float)
    per_seed = np.vstack([marks ** -1.0, marks ** -2.0 * 1e3])
    slope, low, high = mean_error_slope(marks, per_seed, fit_from=0.5, n_boot=200, confidence=0.95, seed=0)
    mean_of_slopes = np.mean([np.polyfit(np.log(marks[marks >= 5000]), np.log(s[marks >= 5000]), 1)[0]
                              for s in per_seed])
    assert slope > mean_of_slopes + 0.3
    exact = mean_error_slope(marks, 3.0 * np.ones((4, 1)) * marks ** -1.0, fit_from=0.25, n_boot=50,
                             confidence=0.95, seed=0)
    assert exact == pytest.approx((-1.0, -1.0, -1.0))
    assert np.isnan(mean_error_slope(marks, np.full((2, marks.size), np.nan), fit_from=0.25, n_boot=10,
                                     confidence=0.9, seed=0)[0])


def test_bounds_constants():
    assert bounds.loss_constant(np.array([1.0, 0.0]), 2.0) == pytest.approx(6.0)
    assert np.isnan(bounds.q1_constant(1.0, 0.5, 0.5, 1.0, 1.0))
    theta, lam, M = 3.0, 0.5, 2.0
    a = step_coefficients(theta, lam, 50)
    assert bounds.lemma1_bound(50, theta, lam, M) == pytest.approx(M ** 2 * 4 * (a ** 2).sum())
    q1 = bounds.q1_constant(0.1, theta, lam, M, 8.0)
    assert bounds.theorem1_bound(50, theta, M, q1) >= 2 * bounds.lemma3_bound(50, q1)


CRITERIA = {"fit_from": 0.25, "rate_target": -1.0, "rate_tolerance": 0.15, "bootstrap": 50, "bootstrap_seed": 0,
            "confidence": 0.95}


def test_cells_and_summary(problem):
    cells = [{"instance": "A", "lam": problem.lam, "theta_lam": c, "batch_size": 1, "n_components": 1,
              "schedule": "paper", "step_offset": 0.0} for c in (0.25, 1.5)]
    records = run_cells(cells, {("A", problem.lam): problem}, seeds=2, n_iter=60, n_checkpoints=6)
    assert len(records) == 2 * 2 * len(checkpoints(60, 6))
    assert {"instance", "lam", "theta_lam", "batch_size", "seed", "t", "error_mean", "error_max"} <= set(records)
    fstar = problem.fstar_scores
    problems = pd.DataFrame([{"instance": "A", "lam": problem.lam, "fstar_norm": problem.fstar_norm,
                              "curvature": largest_curvature(problem),
                              "M1": derivative_bound(fstar, problem.codes, problem.tradeoff),
                              "M": 6.0, "L": 6.0, "initial_error": float(np.mean(fstar ** 2))}])
    summary = summarise(records, problems, CRITERIA)
    assert list(summary["in_domain"]) == [False, True]
    assert np.isnan(summary.loc[0, "Q1"]) and np.isfinite(summary.loc[1, "Q1"])
    assert summary.loc[0, "theorem1_class"] == "undefined"
    # an impossibly small M makes the theorem's bound fail: the check can fail
    tiny = summarise(records, problems.assign(M=1e-9, fstar_norm=1e-9), CRITERIA)
    assert tiny.loc[1, "theorem1_class"] == "exceeded"
