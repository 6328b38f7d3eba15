"""Claims 5-6 machinery: f_t, h_t, g_t side by side; slopes, bounds and verdict criteria."""

import numpy as np
import pandas as pd
import pytest

from qs3orao.engine import train
from qs3orao.theory import bounds
from qs3orao.theory.coefficients import step_coefficients
from qs3orao.theory.convergence import (checkpoints, fit_slope, is_diverged, make_problem, rate_verdict,
                                        run_study, run_trajectory, summarise)


@pytest.fixture(scope="module")
def problem():
    return make_problem(n_labeled=24, n_unlabeled=36, n_classes=3, n_features=2, gamma=2.0, lam=0.5,
                        tradeoff=0.5, seed=1)


def test_f_trajectory_is_the_engine(problem):
    """The instrumented loop computes the same f_{t+1} as qs3orao.engine.train (same seed, same rows)."""
    marks = np.array([40])
    errors, _ = run_trajectory(problem, 3.0, marks, batch_size=2, n_components=3, seed=5)
    _, F = train(problem.X, problem.codes, problem.tradeoff, n_iter=40, batch_size=2, n_components=3,
                 gamma=problem.gamma, lam=problem.lam, theta=3.0, seed=5)
    assert errors["f_error"][0] == pytest.approx(np.mean((F - problem.fstar_scores) ** 2), rel=1e-9)


def test_random_feature_error_is_the_weighted_sum_of_lemma1(problem):
    """With a single iteration f - h = a_1^1 (zeta_1 - xi_1), and zeta -> xi as the frequencies grow."""
    few, _ = run_trajectory(problem, 1.0, np.array([1]), batch_size=1, n_components=1, seed=0)
    many, _ = run_trajectory(problem, 1.0, np.array([1]), batch_size=1, n_components=4000, seed=0)
    assert many["fh_error"][0] < few["fh_error"][0] / 50


def test_exact_kernel_sgd_converges_to_fstar(problem):
    marks = checkpoints(3000, 8)
    errors, weight_bound = run_trajectory(problem, 1.5 / problem.lam, marks, batch_size=4, n_components=4, seed=0)
    assert errors["g_error"][-1] < errors["g_error"][0] / 20
    assert errors["h_error"][-1] < errors["h_error"][0] / 20
    assert weight_bound > 0


def test_fit_slope_recovers_a_known_rate():
    marks = checkpoints(10_000, 20)
    rng = np.random.default_rng(0)
    per_seed = 3.0 * marks[None, :] ** -1.0 * np.exp(0.05 * rng.standard_normal((6, marks.size)))
    slope, low, high = fit_slope(marks, per_seed)
    assert low < -1.0 < high and rate_verdict(high)
    assert not rate_verdict(fit_slope(marks, marks[None, :] ** -0.5 * np.ones((3, 1)) + 1e-12 * rng.random((3, marks.size)))[2])


def test_divergence_criterion():
    assert is_diverged([1.0, np.inf]) and is_diverged([1.0, 2e3]) and not is_diverged([1.0, 0.1])


def test_bounds_constants():
    assert bounds.loss_constant(np.array([1.0, 0.0]), 2.0) == pytest.approx(6.0)
    assert np.isnan(bounds.q1_constant(1.0, 0.5, 0.5, 1.0, 1.0))
    theta, lam, M = 3.0, 0.5, 2.0
    a = step_coefficients(theta, lam, 50)
    assert bounds.lemma1_bound(50, theta, lam, M) == pytest.approx(M ** 2 * 4 * (a ** 2).sum())
    q1 = bounds.q1_constant(0.1, theta, lam, M, 8.0)
    assert bounds.theorem1_bound(50, theta, M, q1) >= 2 * bounds.lemma3_bound(50, q1)


def test_study_and_summary(problem):
    records = run_study(problem, products=[0.25, 1.5], seeds=2, n_iter=60, n_checkpoints=6, batch_size=2,
                        n_components=2)
    assert set(records["product"]) == {0.25, 1.5} and len(records) == 2 * 2 * len(checkpoints(60, 6))
    summary = summarise(records, fstar_norm=problem.fstar_norm, lam=problem.lam, tradeoff=problem.tradeoff)
    assert list(summary["in_domain"]) == [False, True]
    assert np.isnan(summary.loc[0, "Q1"]) and np.isfinite(summary.loc[1, "Q1"])
    assert isinstance(summary, pd.DataFrame)
