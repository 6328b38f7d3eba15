"""Claim 2: the random-feature gradient is unbiased, xi = E_omega[zeta]."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from qs3orao.kernels import fourier_features, frequency_block, gaussian_kernel
from qs3study.theory.features import expected_feature_product, expected_gradient, exact_gradient

# Quadrature of the implemented features is exact to rounding; cos of arguments
# up to ~1e3 carries absolute rounding errors of a few 1e-14, hence 1e-12.
ABS_TOLERANCE = 1e-12

coordinates = st.floats(-10, 10, allow_nan=False)
gammas = st.floats(1e-4, 1e3, allow_nan=False)


@settings(max_examples=100, deadline=None)
@given(d=st.integers(1, 5), data=st.data(), gamma=gammas)
def test_feature_product_is_unbiased_for_the_kernel(d, data, gamma):
    x = np.array(data.draw(st.lists(coordinates, min_size=d, max_size=d)))
    x2 = np.array(data.draw(st.lists(coordinates, min_size=d, max_size=d)))
    exact = gaussian_kernel(x[None], x2[None], gamma=gamma)[0, 0]
    assert expected_feature_product(x, x2, gamma) == pytest.approx(exact, abs=ABS_TOLERANCE)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), n_rows=st.integers(1, 6), gamma=st.floats(0.01, 20))
def test_random_feature_gradient_is_unbiased(seed, n_rows, gamma):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(5, 3))
    rows, weights = rng.integers(5, size=n_rows), rng.standard_normal(n_rows) * 10
    np.testing.assert_allclose(expected_gradient(X, rows, weights, gamma), exact_gradient(X, rows, weights, gamma),
                               atol=ABS_TOLERANCE * np.abs(weights).sum())


def test_quadrature_uses_the_project_feature_map_at_single_frequencies():
    """A single-frequency product is cos(omega . (x - x')), the integrand the quadrature averages."""
    x, x2, omega = np.array([0.3, -1.0]), np.array([1.1, 0.4]), np.array([[0.7, -2.0]])
    phi = fourier_features(np.vstack([x, x2]), omega)
    assert phi[0] @ phi[1] == pytest.approx(np.cos(omega[0] @ (x - x2)))


def test_frequency_blocks_follow_the_spectral_density():
    gamma = 2.5
    draws = np.concatenate([frequency_block(11, b, 8, 3, gamma).ravel() for b in range(1, 301)])
    assert stats.kstest(draws / np.sqrt(2 * gamma), "norm").pvalue > 1e-3


def test_paper_normalisation_with_all_features_counted_halves_the_kernel():
    """sqrt(1/D) with D = 2m features (the printed map) estimates k/2, not k."""
    x, x2, gamma = np.array([0.2, 0.1]), np.array([0.5, -0.3]), 1.3
    scaled = expected_feature_product(x, x2, gamma) / 2.0  # phi * sqrt(m / 2m) on both sides
    assert scaled == pytest.approx(gaussian_kernel(x[None], x2[None], gamma=gamma)[0, 0] / 2.0)
