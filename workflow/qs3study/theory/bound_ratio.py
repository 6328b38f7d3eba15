r"""Theorem 1's bound against the error of ``f = 0``: where the bound says something.

The predictor ``f = 0`` has error ``E|0 - f*(x)|^2 = mean_i f*(x_i)^2`` over the
training rows, so a bound on ``E|f_{t+1}(x) - f*(x)|^2`` above it cannot be
exceeded by any run that does no worse than not moving, and a check against it
cannot fail short of divergence. The ratio

.. math::

    R(t) = \frac{(2 C^2 + 2 \kappa Q_1^2) / t}{\operatorname{mean}_i f^*(x_i)^2}

is a closed form of the theorem's constants (:mod:`qs3study.theory.bounds`),
``lambda``, ``theta`` and ``t``: no stochastic run is needed. It falls as
``1 / t``, so every setting becomes informative from
``t > (2 C^2 + 2 kappa Q_1^2) / mean_i f*(x_i)^2``; the search reports that
``t`` and the ratio on a grid.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .bounds import q1_constant, theorem1_bound
from .coefficients import in_lemma2_domain

__all__ = ["theorem1_ratio", "informative_from", "bound_ratio_grid"]


def theorem1_ratio(t, *, theta_lam, lam, fstar_norm, M, L, zero_error):
    """Theorem 1's bound at ``t`` divided by the error of ``f = 0``.

    Parameters
    ----------
    t : int or array_like of int
        Iterations, ``>= 1``.
    theta_lam, lam : float
        ``theta * lambda`` and ``lambda`` (``theta = theta_lam / lam``).
    fstar_norm : float
        ``||f*||_H``.
    M, L : float
        The paper's combinations of ``M_1 = M_2`` and ``L_1 = L_2``
        (:func:`qs3study.theory.bounds.loss_constant`).
    zero_error : float
        ``mean_i f*(x_i)^2``.

    Returns
    -------
    ndarray
        Of ``t``'s shape; NaN where ``Q_1`` is undefined (``2 theta lambda <= 1``).
    """
    theta = theta_lam / lam
    q1 = q1_constant(fstar_norm, theta, lam, M, L)
    return theorem1_bound(np.asarray(t, dtype=np.float64), theta, M, q1) / zero_error


def informative_from(*, theta_lam, lam, fstar_norm, M, L, zero_error):
    """The smallest integer ``t`` with :func:`theorem1_ratio` below one (``-1`` where undefined)."""
    constants = dict(theta_lam=theta_lam, lam=lam, fstar_norm=fstar_norm, M=M, L=L, zero_error=zero_error)
    at_one = float(theorem1_ratio(1, **constants))
    if not math.isfinite(at_one):
        return -1
    start = math.floor(at_one) + 1
    # where R(1) is an integer up to rounding, R(start) can round to exactly one
    return start if float(theorem1_ratio(start, **constants)) < 1.0 else start + 1


def bound_ratio_grid(problems, theta_lams, t_values):
    """:func:`theorem1_ratio` over every problem, ``theta * lambda`` and ``t``.

    Parameters
    ----------
    problems : pandas.DataFrame
        One row per ``(instance, lam)`` with ``fstar_norm``, ``M``, ``L``,
        ``initial_error`` (``mean_i f*(x_i)^2``) and ``initial_error_max``
        (``max_i f*(x_i)^2``), as :func:`qs3study.claims.studies.build_huber_problems` gives.
    theta_lams : sequence of float
    t_values : sequence of int

    Returns
    -------
    pandas.DataFrame
        One row per ``(instance, lam, theta_lam, t)``: ``in_domain`` (Lemma 2's
        stated range), ``bound``, ``zero_error``, ``ratio`` (bound over the
        mean error of ``f = 0``), ``ratio_max`` (bound over its largest
        per-row error) and ``informative_from`` (:func:`informative_from`).
    """
    rows = []
    t_values = np.asarray(t_values, dtype=np.int64)
    for _, problem in problems.iterrows():
        for c in theta_lams:
            constants = dict(theta_lam=float(c), lam=float(problem["lam"]), fstar_norm=float(problem["fstar_norm"]),
                             M=float(problem["M"]), L=float(problem["L"]))
            zero_error = float(problem["initial_error"])
            ratio = theorem1_ratio(t_values, **constants, zero_error=zero_error)
            start = informative_from(**constants, zero_error=zero_error)
            for t, r in zip(t_values, ratio):
                rows.append({"instance": problem["instance"], "lam": float(problem["lam"]), "theta_lam": float(c),
                             "in_domain": in_lemma2_domain(float(c)), "t": int(t), "bound": float(r) * zero_error,
                             "zero_error": zero_error, "ratio": float(r),
                             "ratio_max": float(r) * zero_error / float(problem["initial_error_max"]),
                             "informative_from": start})
    return pd.DataFrame(rows)
