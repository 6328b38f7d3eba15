"""The training step against an independent route: finite differences of the sampled objective."""

import numpy as np
import pytest

from qs3orao import QS3ORAO
from qs3orao.validation import check_semisupervised
from qs3orao.kernels import fourier_features, frequency_block, sampling_rng
from qs3orao.objective import split_members
from qs3orao.stochastic import draw_rows, gradient_weights
from qs3study.theory.algorithm_printed import printed_direction, sampled_risk_gradient

from .problems import ordinal_problem


@pytest.fixture
def step_setup():
    X, y, _ = ordinal_problem(n=80, n_labeled=30, k=4)
    X, codes, _, tradeoff = check_semisupervised(X, y, tradeoff=[0.3, 0.6, 0.0])
    splits, unlabeled = split_members(codes, 3)
    draws = draw_rows(sampling_rng(1), splits, unlabeled, tradeoff, batch_size=3)
    F0 = np.random.default_rng(2).normal(size=X.shape[0])
    omega = frequency_block(1, 5, 6, X.shape[1], 2.0)
    return X, tradeoff, draws, F0, omega


def restricted_gradient(X, tradeoff, draws, F0, omega):
    """Finite-difference gradient in the new block's weights ``w`` of ``R(f + w . phi_omega)`` at ``w = 0``."""
    return sampled_risk_gradient(X, F0, draws, tradeoff, omega, step=1e-7)


def test_coefficient_update_is_minus_step_times_the_restricted_gradient(step_setup):
    X, tradeoff, draws, F0, omega = step_setup
    eta = 0.37
    rows, weights = gradient_weights(draws, F0.__getitem__, tradeoff)
    alpha = -eta * (weights @ fourier_features(X[rows], omega))
    np.testing.assert_allclose(alpha, -eta * restricted_gradient(X, tradeoff, draws, F0, omega), atol=1e-5)


def test_algorithm_1_as_printed_is_not_the_gradient(step_setup):
    """Algorithm 1 attaches l_5 to phi(x_n) and l_6 to phi(x_u); Equation (11) does the opposite."""
    X, tradeoff, draws, F0, omega = step_setup
    pseudo = printed_direction(X, F0, draws, tradeoff, omega)
    assert not np.allclose(pseudo, restricted_gradient(X, tradeoff, draws, F0, omega), atol=1e-3)


def test_each_step_shrinks_earlier_coefficients_by_the_current_step():
    X, y, _ = ordinal_problem()
    lam, theta, t = 0.4, 3.0, 12
    short = QS3ORAO(n_iter=t, lam=lam, theta=theta, n_components=4, random_state=3).fit(X, y)
    longer = QS3ORAO(n_iter=t + 1, lam=lam, theta=theta, n_components=4, random_state=3).fit(X, y)
    shrink = 1 - theta / (t + 1) * lam
    np.testing.assert_allclose(longer.coef_[:t], shrink * short.coef_, rtol=1e-12, atol=1e-15)
    # f_{t+2} = (1 - eta lam) f_{t+1} + alpha_{t+1} phi_{t+1}: the new block adds exactly its own term.
    new_term = fourier_features(X, frequency_block(3, t + 1, 4, X.shape[1], 1.0)) @ longer.coef_[t]
    np.testing.assert_allclose(longer.train_scores_, shrink * short.train_scores_ + new_term, atol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # one step of the paper's schedule
@pytest.mark.parametrize("step_offset", [0.0, 7.0, 2.5])
def test_offset_schedule_step_is_minus_the_offset_step_times_the_gradient(step_offset):
    """The first fitted coefficient is -theta / (1 + t0) times the finite-difference gradient at f = 0."""
    X, y, _ = ordinal_problem(n=80, n_labeled=30, k=4)
    theta, seed, m = 3.0, 4, 6
    model = QS3ORAO(n_iter=1, lam=0.4, theta=theta, step_offset=step_offset, n_components=m, batch_size=3,
                    tradeoff=[0.3, 0.6, 0.0], random_state=seed).fit(X, y)
    assert model.step_offset_ == step_offset
    X, codes, _, tradeoff = check_semisupervised(X, y, tradeoff=[0.3, 0.6, 0.0])
    splits, unlabeled = split_members(codes, 3)
    draws = draw_rows(sampling_rng(seed), splits, unlabeled, tradeoff, batch_size=3)
    omega = frequency_block(seed, 1, m, X.shape[1], 1.0)
    gradient = restricted_gradient(X, tradeoff, draws, np.zeros(X.shape[0]), omega)
    np.testing.assert_allclose(model.coef_[0], -theta / (1 + step_offset) * gradient, atol=1e-5)


def test_offset_schedule_shrinks_earlier_coefficients_by_the_offset_step():
    X, y, _ = ordinal_problem()
    lam, theta, t, t0 = 0.4, 3.0, 12, 5.0
    short = QS3ORAO(n_iter=t, lam=lam, theta=theta, step_offset=t0, n_components=4, random_state=3).fit(X, y)
    longer = QS3ORAO(n_iter=t + 1, lam=lam, theta=theta, step_offset=t0, n_components=4, random_state=3).fit(X, y)
    np.testing.assert_allclose(longer.coef_[:t], (1 - theta / (t + 1 + t0) * lam) * short.coef_,
                               rtol=1e-12, atol=1e-15)
