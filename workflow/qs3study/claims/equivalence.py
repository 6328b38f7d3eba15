r"""An equivalence test that can confirm O(1/t), and the design calculator that sizes it.

The rate claim is confirmed by two one-sided tests (TOST) that the slope of the
log mean error against ``log t`` lies within ``target +- margin``: "consistent"
when both ``H0: slope <= target - margin`` and ``H0: slope >= target + margin``
are rejected at level ``alpha`` (equivalently, the ``1 - 2 alpha`` interval
``slope +- z_{1-alpha} se`` lies inside the margin). "slower" rejects
``H0: slope <= target + margin``, "faster" rejects ``H0: slope >= target - margin``.

Across cells the claim "every tested cell is consistent" is an
intersection-union test: it has level ``alpha`` with each cell tested at
``alpha``, no adjustment (Berger, 1982). The union claims "some cell is slower"
and "some cell is faster" are Holm-adjusted over the cells.

Noise model of the calculator: the per-seed log error at checkpoint ``t_k`` is
the cell's curve plus a Gaussian deviation with standard deviation ``sigma``
and correlation ``exp(-|ln t_i - ln t_j| / ell)`` between checkpoints (a run's
error at nearby ``t`` moves together). The slope of the curve averaged over
``S`` seeds then has variance ``w' Sigma w / S`` with ``w`` the least-squares
weights of the fit.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from qs3study.stages.tables import holm

__all__ = ["tost_p_values", "equivalence_classes", "estimate_noise", "slope_standard_error",
           "expected_half_width", "power"]


def tost_p_values(slope, se, *, target, margin):
    """One-sided normal p-values of the equivalence and difference hypotheses.

    Returns
    -------
    dict of str to float
        ``equivalent``: the larger of the two TOST p-values (reject both: inside
        the margin); ``slower``: of ``H0: slope <= target + margin``;
        ``faster``: of ``H0: slope >= target - margin``. NaN for a non-finite
        slope or a zero standard error.
    """
    if not (np.isfinite(slope) and np.isfinite(se)) or se <= 0.0:
        return {"equivalent": float("nan"), "slower": float("nan"), "faster": float("nan")}
    above_low = (slope - (target - margin)) / se
    below_high = (slope - (target + margin)) / se
    return {"equivalent": float(max(stats.norm.sf(above_low), stats.norm.cdf(below_high))),
            "slower": float(stats.norm.sf(below_high)), "faster": float(stats.norm.cdf(above_low))}


def equivalence_classes(slopes, ses, *, target, margin, alpha):
    """Per cell "consistent", "slower", "faster" or "inconclusive".

    "consistent": TOST at ``alpha`` (unadjusted: intersection-union); "slower"
    and "faster": Holm-adjusted over the cells at ``alpha``. A cell with a NaN
    p-value is "inconclusive".

    Returns
    -------
    labels : ndarray of str
    p : dict of str to ndarray
        ``equivalent``, ``slower``, ``faster`` and the adjusted ``holm_slower``, ``holm_faster``.
    """
    rows = [tost_p_values(s, e, target=target, margin=margin) for s, e in zip(slopes, ses)]
    p = {name: np.array([row[name] for row in rows]) for name in ("equivalent", "slower", "faster")}
    for name in ("slower", "faster"):
        adjusted = np.full(p[name].size, np.nan)
        finite = np.isfinite(p[name])
        if finite.any():
            adjusted[finite] = holm(p[name][finite])
        p[f"holm_{name}"] = adjusted
    labels = np.where(p["equivalent"] < alpha, "consistent",
                      np.where(p["holm_slower"] < alpha, "slower",
                               np.where(p["holm_faster"] < alpha, "faster", "inconclusive")))
    return labels, p


def estimate_noise(marks, per_seed, *, fit_from):
    """``sigma`` and ``ell`` of the noise model from one cell's runs, on the window ``t >= fit_from T``.

    ``sigma``: root mean over the window's checkpoints of the variance over
    seeds of ``log error``; ``ell``: least squares through the origin of
    ``log r_ij = -|ln t_i - ln t_j| / ell`` over the checkpoint pairs with a
    positive correlation ``r_ij`` of the deviations (``inf`` when none decays).

    Returns
    -------
    sigma, ell : float
    """
    marks = np.asarray(marks, dtype=np.float64)
    keep = marks >= fit_from * marks[-1]
    logs = np.log(np.asarray(per_seed, dtype=np.float64)[:, keep])
    sigma = float(np.sqrt(np.mean(np.var(logs, axis=0, ddof=1))))
    upper = np.triu_indices(int(keep.sum()), k=1)
    distance = np.abs(np.subtract.outer(np.log(marks[keep]), np.log(marks[keep])))[upper]
    correlation = np.corrcoef(logs.T)[upper]
    positive = correlation > 0.0
    decay = float(-(distance[positive] * np.log(correlation[positive])).sum())
    return sigma, (float((distance[positive] ** 2).sum()) / decay if decay > 0.0 else float("inf"))


def slope_standard_error(marks, seeds, *, sigma, ell):
    """Standard error of the fitted slope over ``marks`` with ``seeds`` runs under the noise model."""
    x = np.log(np.asarray(marks, dtype=np.float64))
    weights = (x - x.mean()) / ((x - x.mean()) @ (x - x.mean()))
    covariance = sigma ** 2 * np.exp(-np.abs(np.subtract.outer(x, x)) / ell)
    return float(np.sqrt(weights @ covariance @ weights / seeds))


def expected_half_width(marks, seeds, *, sigma, ell, alpha):
    """Half-width ``z_{1-alpha} se`` of the TOST interval (the ``1 - 2 alpha`` interval)."""
    return float(stats.norm.ppf(1.0 - alpha)) * slope_standard_error(marks, seeds, sigma=sigma, ell=ell)


def power(marks, seeds, *, sigma, ell, alpha, margin):
    """Probability that a cell whose true slope is the target is called "consistent" (normal approximation)."""
    se = slope_standard_error(marks, seeds, sigma=sigma, ell=ell)
    return float(max(0.0, 2.0 * stats.norm.cdf(margin / se - stats.norm.ppf(1.0 - alpha)) - 1.0))
