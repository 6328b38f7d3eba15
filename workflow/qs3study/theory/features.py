r"""Claim 2: the random-feature gradient is unbiased, ``xi = E_omega[zeta]``.

``zeta = sum_i w_i phi_omega(x_i) . phi_omega(.)`` and ``xi = sum_i w_i k(x_i, .)``
with the same weights ``w`` (they are computed from the scores before
``omega_t`` is drawn, so they do not depend on it).  Unbiasedness therefore
reduces to ``E_omega[phi_omega(x) . phi_omega(x')] = k(x, x')``.  For the
project's features ``[cos(Omega x), sin(Omega x)] / sqrt(m)`` the product is
``mean_r cos(omega_r . (x - x'))``, which depends on ``omega`` only through the
scalar ``s = omega . u`` with ``u = (x - x') / ||x - x'||`` and
``s ~ N(0, 2 gamma)``.  The expectation is therefore a one-dimensional Gaussian
integral, evaluated here by Gauss-Hermite quadrature of the implemented
feature map (:func:`qs3orao.kernels.fourier_features`) at frequencies placed
along ``u``.

With the paper's printed normalisation ``sqrt(1 / D)`` and ``D = 2 m`` (the
number of features) the product would estimate ``k / 2``; the claim holds with
``D = m`` frequencies, the reading the project uses.
"""

from __future__ import annotations

import numpy as np

from qs3orao.kernels import fourier_features, gaussian_kernel

__all__ = ["quadrature_nodes", "expected_feature_product", "expected_gradient", "exact_gradient"]

# The trapezoidal rule with spacing h integrates e^{-z^2/2} cos(a z) with an
# aliasing error of order exp(-(2 pi / h - a)^2 / 2); a margin of 12 puts it
# below 1e-31, and |z| <= 40 leaves out mass below 1e-340.  So the rule is
# exact to rounding for every frequency a, with O(a) nodes.
_ALIAS_MARGIN = 12.0
_Z_MAX = 40.0


def quadrature_nodes(frequency):
    """Standard normal nodes and probability weights that integrate ``cos(frequency * z)`` exactly.

    Parameters
    ----------
    frequency : float
        The largest ``a`` for which ``E[cos(a z)]``, ``z ~ N(0, 1)``, must be exact to rounding.

    Returns
    -------
    nodes, weights : ndarray
    """
    step = 2.0 * np.pi / (frequency + _ALIAS_MARGIN)
    half = int(np.ceil(_Z_MAX / step))
    nodes = step * np.arange(-half, half + 1)
    return nodes, step * np.exp(-0.5 * nodes ** 2) / np.sqrt(2.0 * np.pi)


def expected_feature_product(x, x2, gamma):
    """``E_omega[phi_omega(x) . phi_omega(x2)]`` for ``omega ~ N(0, 2 gamma I)``.

    Parameters
    ----------
    x, x2 : ndarray of shape (d,)
    gamma : float

    Returns
    -------
    float
    """
    delta = x - x2
    norm = np.linalg.norm(delta)
    direction = np.zeros_like(delta)
    if norm > 0.0:
        direction = delta / norm
    else:
        direction[0] = 1.0
    # Components of omega orthogonal to x - x2 cancel in the product, so the
    # frequencies only need to span the line through x - x2.
    z, weights = quadrature_nodes(np.sqrt(2.0 * gamma) * norm)
    omega = np.sqrt(2.0 * gamma) * z[:, None] * direction[None, :]
    m = z.size
    phi = fourier_features(np.vstack([x, x2]), omega) * np.sqrt(m)
    per_node = phi[0, :m] * phi[1, :m] + phi[0, m:] * phi[1, m:]
    return float(weights @ per_node)


def expected_gradient(X, rows, weights, gamma):
    """``E_omega[zeta](x)`` at every row of ``X``, for ``zeta = sum_i w_i phi(x_i) . phi(.)``."""
    return np.array([sum(w * expected_feature_product(X[r], x, gamma) for r, w in zip(rows, weights))
                     for x in X])


def exact_gradient(X, rows, weights, gamma):
    """``xi(x) = sum_i w_i k(x_i, x)`` at every row of ``X``."""
    return gaussian_kernel(X, X[rows], gamma=gamma) @ weights
