import numpy as np
import pytest

from qs3orao.kernels import fourier_features, frequency_block, gaussian_kernel, resolve_seed


def test_gaussian_kernel_convention():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    expected = np.array([[np.exp(-0.7 * np.sum((x - y) ** 2)) for y in Y] for x in X])
    np.testing.assert_allclose(gaussian_kernel(X, Y, gamma=0.7), expected, rtol=1e-12)


def test_frequency_block_is_a_pure_function_of_seed_and_block():
    a = frequency_block(3, 7, 16, 4, 0.5)
    np.testing.assert_array_equal(a, frequency_block(3, 7, 16, 4, 0.5))
    assert not np.array_equal(a, frequency_block(3, 8, 16, 4, 0.5))
    assert not np.array_equal(a, frequency_block(4, 7, 16, 4, 0.5))


def test_frequencies_have_the_spectral_variance():
    omega = frequency_block(0, 1, 20000, 3, 0.5)
    np.testing.assert_allclose(omega.var(axis=0), 2 * 0.5, rtol=0.03)


def test_random_feature_gram_converges_at_rate_one_over_sqrt_D():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 3))
    K = gaussian_kernel(X, gamma=2.0)
    sizes = np.array([32, 128, 512, 2048])
    errors = []
    for m in sizes:
        per_seed = []
        for seed in range(20):
            phi = fourier_features(X, frequency_block(seed, 0, m, 3, 2.0))
            per_seed.append(np.sqrt(np.mean((phi @ phi.T - K) ** 2)))
        errors.append(np.mean(per_seed))
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert -0.6 < slope < -0.4, slope
    # The error is a Monte-Carlo average of bounded terms: its variance is at most 2 / m.
    assert errors[-1] < np.sqrt(2 / sizes[-1])


def test_resolve_seed():
    assert resolve_seed(5) == 5
    assert isinstance(resolve_seed(None), int)
    assert resolve_seed(np.random.default_rng(1)) == resolve_seed(np.random.default_rng(1))
    with pytest.raises(TypeError, match="random_state"):
        resolve_seed("a")
    with pytest.raises(ValueError, match="random_state"):
        resolve_seed(-1)
