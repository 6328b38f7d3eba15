"""The rate study's per-cell classes: O(1/t) tested cell by cell with Holm's adjustment.

A cell is one ``(instance, lam, theta_lam)`` of the primary grid under the
paper's schedule, run with the rate section's seeds and checkpoints. Per cell
the slope of the log mean error against log t is fitted on the window
``t >= fit_from T``; its bootstrap standard error gives two one-sided p-values
against the criterion ``b = rate_target + rate_tolerance``:

* ``p_consistent`` for H0 "slope >= b" (rejecting it: consistent with O(1/t));
* ``p_slower`` for H0 "slope <= b" (rejecting it: slower than O(1/t)).

Each is Holm-adjusted over the cells tested (those inside Lemma 2's range that
are not transient), and a cell is "consistent" or "slower" when its adjusted
p-value is below ``alpha``, else "inconclusive". A cell is "transient", reported
apart and counted neither for nor against, when its run amplified the error
above ``transient_peak`` times the error of ``f = 0`` and the slope's interval
lies entirely below ``rate_target - rate_tolerance`` (still decaying from the
amplification faster than any O(1/t) tail). Fewer than ``min_fit_checkpoints``
checkpoints in the window: "too few checkpoints".

:func:`rate_equivalence_classes` is design v2's reading (``v2.rate.criteria``): the
same per-cell slope and bootstrap standard error, tested for equivalence with
``rate_target +- margin`` (:mod:`qs3study.claims.equivalence`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from qs3study.theory.coefficients import in_lemma2_domain
from qs3study.theory.convergence import bootstrap_slopes

from qs3study.stages.tables import holm
from .equivalence import equivalence_classes

__all__ = ["RATE_CELL", "rate_classes", "rate_equivalence_classes"]

#: The columns that identify a cell of the rate study.
RATE_CELL = ["instance", "lam", "theta_lam"]


def _p_values(slope, boot, bound):
    """One-sided normal-approximation p-values of "slope >= bound" and "slope <= bound" from the bootstrap."""
    se = float(np.std(boot, ddof=1))
    if not np.isfinite(slope) or se == 0.0:
        return float("nan"), float("nan")
    z = (slope - bound) / se
    return float(stats.norm.cdf(z)), float(stats.norm.sf(z))


def _cell_slopes(records, problems, criteria):
    """Per cell of the rate records: its slope over the window, the bootstrap resamples and the peak amplification.

    Yields
    ------
    cell : dict
        The cell's keys.
    fit : dict
        ``in_domain``, ``seeds``, ``n_fitted``, ``slope``, ``se`` (the bootstrap standard error of
        the slope), ``measured_peak`` (mean over seeds of the run's largest mean error, over the error
        of ``f = 0``) and ``final_ratio`` (mean error at the last checkpoint over the error of ``f = 0``).
    boot : ndarray
        The slope of each bootstrap resample (empty when the slope is NaN).
    """
    initial = problems.set_index(["instance", "lam"])["initial_error"]
    for key, group in records.groupby(RATE_CELL, sort=True):
        cell = dict(zip(RATE_CELL, key))
        marks = np.sort(group["t"].unique())
        errors = group.pivot(index="seed", columns="t", values="error_mean")[marks].to_numpy()
        peaks = group.pivot(index="seed", columns="t", values="peak_error")[marks].to_numpy()[:, -1]
        slope, boot, n_fitted = bootstrap_slopes(marks, errors, fit_from=criteria["fit_from"],
                                                 n_boot=criteria["bootstrap"], seed=criteria["bootstrap_seed"])
        zero = float(initial.loc[(cell["instance"], cell["lam"])])
        final = errors[:, -1]
        yield cell, {"in_domain": in_lemma2_domain(float(cell["theta_lam"])), "seeds": errors.shape[0],
                     "n_fitted": n_fitted, "slope": slope,
                     "se": float(np.std(boot, ddof=1)) if boot.size > 1 else float("nan"),
                     "measured_peak": float(np.mean(peaks)) / zero if np.isfinite(peaks).all() else float("inf"),
                     "final_ratio": float(np.mean(final)) / zero if np.isfinite(final).all() else float("inf")}, boot


def _untested_label(fit, high, floor, criteria):
    """The class of a cell that is not tested, or None when it is."""
    if fit["n_fitted"] < criteria["min_fit_checkpoints"]:
        return "too few checkpoints"
    if not np.isfinite(fit["slope"]):
        return "not finite"
    if fit["measured_peak"] > criteria["transient_peak"] and high < floor:
        return "transient"
    if not fit["in_domain"]:
        return "outside range"
    return None


def rate_classes(records, problems, criteria):
    """One row per cell: slope, interval, p-values, Holm-adjusted p-values and class.

    Parameters
    ----------
    records : pandas.DataFrame
        The rate study's tidy records (``error_mean`` and ``peak_error`` per cell, seed, ``t``).
    problems : pandas.DataFrame
        ``problems.csv`` (``initial_error`` per ``(instance, lam)``).
    criteria : dict
        The design's ``rate.criteria``.

    Returns
    -------
    pandas.DataFrame
        Per cell: ``in_domain``, ``seeds``, ``n_fitted``, ``slope``, ``low``,
        ``high``, ``se`` (the bootstrap standard error of the slope), ``p_consistent``, ``p_slower``, their Holm adjustments
        ``holm_consistent``, ``holm_slower`` (NaN for cells not tested),
        ``measured_peak`` and ``rate_class`` in {"consistent", "slower",
        "inconclusive", "transient", "not finite", "too few checkpoints",
        "outside range"}.
    """
    bound = criteria["rate_target"] + criteria["rate_tolerance"]
    tail = (1.0 - criteria["confidence"]) / 2.0
    rows = []
    for cell, fit, boot in _cell_slopes(records, problems, criteria):
        low, high = ((float(np.quantile(boot, tail)), float(np.quantile(boot, 1.0 - tail))) if boot.size
                     else (float("nan"), float("nan")))
        p_consistent, p_slower = _p_values(fit["slope"], boot, bound) if boot.size else (float("nan"), float("nan"))
        label = _untested_label(fit, high, criteria["rate_target"] - criteria["rate_tolerance"], criteria)
        rows.append({**cell, **fit, "low": low, "high": high, "p_consistent": p_consistent, "p_slower": p_slower,
                     "rate_class": label})
    table = pd.DataFrame(rows)
    tested = table["rate_class"].isna().to_numpy()
    table["holm_consistent"] = np.nan
    table["holm_slower"] = np.nan
    if tested.any():
        table.loc[tested, "holm_consistent"] = holm(table.loc[tested, "p_consistent"].to_numpy())
        table.loc[tested, "holm_slower"] = holm(table.loc[tested, "p_slower"].to_numpy())
    alpha = criteria["alpha"]
    decided = np.where(table["holm_slower"] < alpha, "slower",
                       np.where(table["holm_consistent"] < alpha, "consistent", "inconclusive"))
    table["rate_class"] = np.where(tested, decided, table["rate_class"])
    return table


def rate_equivalence_classes(records, problems, criteria):
    """Design v2's rate reading: one row per cell, the slope tested for equivalence with O(1/t).

    Parameters
    ----------
    records, problems : pandas.DataFrame
        As :func:`rate_classes`.
    criteria : dict
        The design's ``v2.rate.criteria``.

    Returns
    -------
    pandas.DataFrame
        Per cell: ``in_domain``, ``seeds``, ``n_fitted``, ``slope``, ``se``, ``low`` and ``high``
        (the ``1 - 2 alpha`` interval ``slope +- z se`` the TOST reads), ``measured_peak``,
        ``final_ratio``, the p-values ``p_equivalent``, ``p_slower``, ``p_faster``, the Holm-adjusted
        ``holm_slower``, ``holm_faster`` (NaN for cells not tested) and ``rate_class`` in
        {"consistent", "slower", "faster", "inconclusive", "transient", "not finite",
        "too few checkpoints", "outside range"}.
    """
    z = float(stats.norm.ppf(1.0 - criteria["alpha"]))
    target, margin = criteria["rate_target"], criteria["margin"]
    rows = []
    for cell, fit, _ in _cell_slopes(records, problems, criteria):
        low, high = fit["slope"] - z * fit["se"], fit["slope"] + z * fit["se"]
        rows.append({**cell, **fit, "low": low, "high": high,
                     "rate_class": _untested_label(fit, high, target - margin, criteria)})
    table = pd.DataFrame(rows)
    tested = table["rate_class"].isna().to_numpy()
    for name in ("p_equivalent", "p_slower", "p_faster", "holm_slower", "holm_faster"):
        table[name] = np.nan
    if tested.any():
        labels, p = equivalence_classes(table.loc[tested, "slope"], table.loc[tested, "se"], target=target,
                                        margin=margin, alpha=criteria["alpha"])
        for name in ("equivalent", "slower", "faster", "holm_slower", "holm_faster"):
            table.loc[tested, name if name.startswith("holm") else f"p_{name}"] = p[name]
        table.loc[tested, "rate_class"] = labels
    return table
