"""Theorem 1's setting: the Huberised loss's update, risk and exact minimiser against independent routes."""

import functools

import numpy as np
import pytest

from qs3orao.exact import exact_solution
from qs3orao.kernels import sampling_rng
from qs3orao.objective import ordinal_risk, split_members
from qs3orao.stochastic import draw_rows, gradient_weights
from qs3study.theory.convergence import checkpoints, make_problem, run_trajectory
from qs3study.theory.huber import (exact_minimiser, huber_derivative, huber_value, pairwise_risk, pairwise_weights,
                                  squared_derivative)


@pytest.fixture(scope="module")
def problem():
    return make_problem(n_labeled=20, n_unlabeled=30, n_classes=3, n_features=2, gamma=2.0, lam=0.5, tradeoff=0.5,
                        seed=0)


def test_huber_meets_assumptions_2_and_3():
    z = np.linspace(-50, 50, 10001)
    d = huber_derivative(z, 1.5)
    assert np.abs(d).max() == pytest.approx(3.0)  # M = 2 delta
    assert (np.abs(np.diff(d)) <= 2.0 * np.diff(z) + 1e-12).all()  # 2-Lipschitz
    numeric = np.gradient(huber_value(z, 1.5), z)
    assert np.abs(numeric - d)[1:-1].max() < 0.05


@pytest.mark.parametrize("batch", [1, 3])
def test_pairwise_weights_with_the_squared_loss_are_the_engine_weights(problem, batch):
    F = np.random.default_rng(1).normal(size=problem.codes.size)
    splits, unlabeled = split_members(problem.codes, problem.tradeoff.size)
    draws = draw_rows(sampling_rng(0), splits, unlabeled, problem.tradeoff, batch)
    fast = np.zeros_like(F)
    np.add.at(fast, *gradient_weights(draws, F.__getitem__, problem.tradeoff))
    plain = np.zeros_like(F)
    np.add.at(plain, *pairwise_weights(draws, F, problem.tradeoff, squared_derivative))
    np.testing.assert_allclose(plain, fast, atol=1e-12)


def test_risk_gradient_against_finite_differences_and_the_squared_risk(problem):
    F = np.random.default_rng(2).normal(size=problem.codes.size)
    value, slope = functools.partial(huber_value, delta=0.7), functools.partial(huber_derivative, delta=0.7)
    _, grad = pairwise_risk(F, problem.codes, problem.tradeoff, value, slope)
    step = 1e-6
    for i in range(0, F.size, 7):
        e = np.zeros_like(F)
        e[i] = step
        numeric = (pairwise_risk(F + e, problem.codes, problem.tradeoff, value, slope)[0]
                   - pairwise_risk(F - e, problem.codes, problem.tradeoff, value, slope)[0]) / (2 * step)
        assert numeric == pytest.approx(grad[i], abs=1e-7)
    squared = pairwise_risk(F, problem.codes, problem.tradeoff, np.square, squared_derivative)[1]
    np.testing.assert_allclose(squared, ordinal_risk(F, problem.codes, problem.tradeoff)[1], atol=1e-12)


def test_exact_minimiser_is_stationary_and_reduces_to_the_squared_solution(problem):
    coef, norm = exact_minimiser(problem.kernel, problem.codes, problem.tradeoff, 0.5, 1.0, gtol=1e-9)
    assert norm <= 1e-9
    F = problem.kernel @ coef
    slope = functools.partial(huber_derivative, delta=1.0)
    grad = pairwise_risk(F, problem.codes, problem.tradeoff, functools.partial(huber_value, delta=1.0), slope)[1]
    np.testing.assert_allclose(grad + 0.5 * coef, 0.0, atol=1e-9)
    assert np.abs(1.0 - F[:, None] + F[None, :]).max() > 1.0  # some pair lies in the linear part: not the squared f*
    wide, _ = exact_minimiser(problem.kernel, problem.codes, problem.tradeoff, 0.5, 1e6, gtol=1e-9)
    labels = np.where(problem.codes < 0, -1, problem.codes)
    squared = exact_solution(problem.X, labels, gamma=problem.gamma, lam=0.5, tradeoff=0.5)
    np.testing.assert_allclose(problem.kernel @ wide, squared.kernel @ squared.coef, atol=1e-8)
    with pytest.raises(RuntimeError, match="gtol"):
        exact_minimiser(problem.kernel, problem.codes, problem.tradeoff, 0.5, 1.0, gtol=1e-30, max_steps=1)


def test_huber_trajectory_samples_no_derivative_above_2_delta(problem):
    run = run_trajectory(problem, 3.0, checkpoints(100, 5), batch_size=1, n_components=1, seed=0, huber_delta=0.5)
    assert np.nanmax(run["derivative_max"]) <= 1.0 + 1e-12
    squared = run_trajectory(problem, 3.0, checkpoints(100, 5), batch_size=1, n_components=1, seed=0)
    assert not np.allclose(run["error_mean"], squared["error_mean"])
