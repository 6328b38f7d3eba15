"""The Gaussian kernel and its random Fourier features, one convention for the project.

``k(x, x') = exp(-gamma * ||x - x'||^2)``, whose spectral density is
``omega ~ N(0, 2 * gamma * I)`` (Rahimi and Recht, 2008).  A block of ``m``
frequencies maps ``x`` to ``[cos(Omega x), sin(Omega x)] / sqrt(m)``, so that
``phi(x) @ phi(x')`` is an unbiased estimate of ``k(x, x')``.

Every frequency block is a pure function of ``(seed, block)``: the same pair
regenerates the same block, which is how the doubly stochastic method
"remembers" its random features without storing them (Dai et al., 2014).
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.spatial.distance import cdist

__all__ = ["gaussian_kernel", "resolve_seed", "sampling_rng", "curvature_rng", "frequency_block", "fourier_features"]

_FREQUENCY_STREAM = 1
_SAMPLING_STREAM = 0
_CURVATURE_STREAM = 2


def gaussian_kernel(X, Y=None, *, gamma):
    """Gaussian kernel matrix ``exp(-gamma * ||x_i - y_j||^2)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d), optional
        Defaults to ``X``.
    gamma : float
        Inverse squared width, ``> 0``.

    Returns
    -------
    ndarray of shape (n, m)
    """
    Y = X if Y is None else Y
    return np.exp(-gamma * cdist(X, Y, "sqeuclidean"))


def resolve_seed(random_state):
    """Turn ``random_state`` (None, int or ``numpy.random.Generator``) into an int seed.

    ``None`` draws fresh OS entropy; the result is what makes a fit reproducible.
    """
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return int(random_state)
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return int(random_state.integers(2**63) if isinstance(random_state, np.random.Generator)
                   else random_state.randint(2**31))
    raise TypeError(f"random_state must be None, an int or a numpy Generator, got {type(random_state).__name__}")


def sampling_rng(seed):
    """The generator that draws the training rows of every iteration."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_SAMPLING_STREAM,)))


def curvature_rng(seed):
    """The generator of ``step_offset="auto-data"``'s curvature estimate (apart from the training rows')."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_CURVATURE_STREAM,)))


def frequency_block(seed, block, n_components, n_features, gamma):
    """Frequencies of one random-feature block, a pure function of ``(seed, block)``.

    Parameters
    ----------
    seed : int
    block : int
        Block (iteration) index.
    n_components : int
        Number of frequencies ``m`` in the block.
    n_features : int
    gamma : float

    Returns
    -------
    ndarray of shape (n_components, n_features)
        Rows drawn from ``N(0, 2 * gamma * I)``.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_FREQUENCY_STREAM, block)))
    return rng.standard_normal((n_components, n_features)) * np.sqrt(2.0 * gamma)


def fourier_features(X, omega):
    """Random Fourier features ``[cos(X omega^T), sin(X omega^T)] / sqrt(m)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    omega : ndarray of shape (m, d)

    Returns
    -------
    ndarray of shape (n, 2 m)

    Examples
    --------
    >>> import numpy as np
    >>> phi = fourier_features(np.zeros((1, 3)), frequency_block(0, 0, 4, 3, 1.0))
    >>> float((phi @ phi.T)[0, 0])  # k(x, x) = 1 exactly for any frequencies
    1.0
    """
    projection = X @ omega.T
    return np.hstack([np.cos(projection), np.sin(projection)]) / np.sqrt(omega.shape[0])
