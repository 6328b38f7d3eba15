r"""Lemma 2: the coefficients ``a_t^i`` of the unrolled iteration and their bound.

With ``eta_i = theta / i`` the iterate after ``t`` steps is
``f_{t+1} = sum_i a_t^i zeta_i`` with

.. math::

    a_t^i = -\eta_i \prod_{j=i+1}^{t} (1 - \eta_j \lambda)

(the paper prints ``-eta_t`` in front; ``-eta_i`` is what the update rule
gives).  Lemma 2 claims ``|a_t^i| <= theta / t`` and
``sum_i |a_t^i|^2 <= theta^2 / t`` whenever ``theta * lambda`` lies in
``(1, 2)`` or is a positive integer.  Both ratios below depend on ``theta``
and ``lambda`` only through ``c = theta * lambda``:

.. math::

    \frac{|a_t^i|}{\theta / t} = \frac{t}{i} \prod_{j=i+1}^{t} \Big|1 - \frac{c}{j}\Big| .

For a positive integer ``c`` and ``t < c`` the product has no zero factor and
``|a_t^1| / (theta / t) = binom(c - 2, t - 1)``, which exceeds one for
``c >= 4`` and ``2 <= t <= c - 2``: the lemma's proof starts from
"obviously ``|a_t^i| <= theta / t``", which holds only for ``i = t``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = [
    "in_lemma2_domain", "step_coefficients", "exact_step_coefficients",
    "lemma2_ratios", "exact_lemma2_ratios", "lemma2_grid",
]


def in_lemma2_domain(c):
    """Whether ``c = theta * lambda`` lies in ``(1, 2)`` or is a positive integer."""
    return (1 < c < 2) or (c >= 1 and c == int(c))


def step_coefficients(theta, lam, t):
    """The coefficients ``a_t^1..a_t^t`` in floating point.

    Parameters
    ----------
    theta, lam : float
    t : int
        Number of iterations, ``>= 1``.

    Returns
    -------
    ndarray of shape (t,)
    """
    i = np.arange(1, t + 1)
    factors = 1.0 - theta * lam / i
    # suffix[i-1] = prod_{j=i+1}^t factors[j-1]
    suffix = np.ones(t)
    suffix[:-1] = np.cumprod(factors[::-1])[::-1][1:]
    return -(theta / i) * suffix


def exact_step_coefficients(theta, lam, t):
    """The coefficients ``a_t^1..a_t^t`` in exact rational arithmetic.

    Parameters
    ----------
    theta, lam : Fraction, int or str
        Anything :class:`fractions.Fraction` accepts exactly.
    t : int

    Returns
    -------
    list of Fraction
    """
    theta, c = Fraction(theta), Fraction(theta) * Fraction(lam)
    coef, suffix = [Fraction(0)] * t, Fraction(1)
    for i in range(t, 0, -1):
        coef[i - 1] = -theta / i * suffix
        suffix *= 1 - c / i
    return coef


def lemma2_ratios(theta, lam, t):
    """``max_i |a_t^i| / (theta / t)`` and ``sum_i |a_t^i|^2 / (theta^2 / t)`` (floats).

    The lemma holds at ``(theta, lam, t)`` exactly when both are ``<= 1``.
    """
    a = step_coefficients(theta, lam, t)
    return float(np.abs(a).max() * t / theta), float((a ** 2).sum() * t / theta ** 2)


def exact_lemma2_ratios(theta, lam, t):
    """Exact rational version of :func:`lemma2_ratios`."""
    theta = Fraction(theta)
    a = exact_step_coefficients(theta, lam, t)
    return max(abs(x) for x in a) * t / theta, sum(x * x for x in a) * t / theta ** 2


def lemma2_grid(products, t_values):
    """``max_i |a_t^i| / (theta / t)`` over a grid of ``c = theta * lambda`` and ``t``.

    Evaluated at ``theta = 1``: the ratio depends on ``c`` only.

    Returns
    -------
    ndarray of shape (len(products), len(t_values))
    """
    t_values = np.asarray(t_values)
    out = np.empty((len(products), t_values.size))
    for row, c in enumerate(products):
        for col, t in enumerate(t_values):
            out[row, col] = lemma2_ratios(1.0, c, int(t))[0]
    return out
