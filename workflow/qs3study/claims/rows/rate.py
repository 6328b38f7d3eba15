"""Rows H6r, 6r and 6b: the O(1/t) rate of the Remark after Theorem 1.

Reads the design's ``rate``, ``huber`` and ``convergence.criteria`` sections, the rate
study's per-cell classes (:mod:`qs3study.claims.rate`), the Huberised-loss study's and
the convergence study's batch sub-grid.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .. import verdicts as v
from ..ledger import Claim
from ..studies import PAPER_SCHEDULE
from .bounds import huber_setting, huber_settings, study_settings
from .text import FIGURES, cell_name, class_counts, primary_cells


def _rate_evidence(rows):
    counts = rows["error_mean_rate"].value_counts().to_dict()
    text = ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))
    bad = rows[rows["error_mean_rate"].isin(["slower", "not finite"])].sort_values(["lam", "theta_lam"])
    slopes = rows["error_mean_slope"][np.isfinite(rows["error_mean_slope"])]
    out = f"cells: {text}; finite slopes {slopes.min():.2f}..{slopes.max():.2f}." if len(slopes) else f"cells: {text}."
    if not bad.empty:
        r = bad.iloc[0]
        out += (f" Smallest lambda not O(1/t): {cell_name(r)} (slope {r['error_mean_slope']:.2f} "
                f"[{r['error_mean_low']:.2f}, {r['error_mean_high']:.2f}], final mean error {r['final_error_mean']:.3g}).")
    return out


def _slope_power(half_width, how, criteria):
    """The rate check's power: the slope interval's half-width against the distance the criterion needs.

    A cell is consistent when its slope lies ``half_width`` below ``b = rate_target + rate_tolerance``
    and slower when it lies ``half_width`` above ``b``; a true O(1/t) slope lies ``rate_tolerance``
    below ``b``. The check can fail short of divergence when a decaying slope (below 0) can be slower.

    Returns
    -------
    text : str
    can_fail : bool
    """
    bound = criteria["rate_target"] + criteria["rate_tolerance"]
    if not np.isfinite(half_width):
        return "Power: no slope interval to read.", False
    reach = criteria["rate_tolerance"] >= half_width
    can_fail = bound + half_width < 0.0
    text = (f"Power ({how}): expected half-width {half_width:.3g}; called consistent below "
            f"{bound - half_width:.3g}, slower above {bound + half_width:.3g}. The claimed slope "
            f"{criteria['rate_target']:g} lies {criteria['rate_tolerance']:g} below the criterion's "
            f"{bound:g}, so a true O(1/t) cell {'can' if reach else 'cannot'} be called consistent")
    if not can_fail:
        text += "; only a slope >= 0 (an error that does not decay) could be called slower"
    return text + ".", can_fail


def rate_half_width(rates, criteria):
    """The rate study's expected slope half-width: Holm's first step over the tested cells, the median standard error.

    Returns
    -------
    half_width : float
        NaN when no cell was tested.
    how : str
        How it was computed, for the power statement.
    """
    tested = rates[rates["in_domain"] & rates["holm_slower"].notna()]
    if tested.empty:
        return float("nan"), ""
    z = float(stats.norm.isf(criteria["alpha"] / len(tested)))
    se = float(np.median(tested["se"]))
    return z * se, (f"{len(tested)} tested cells, Holm at {criteria['alpha']:g}: z = {z:.3g} at its first step, "
                    f"times the median bootstrap standard error {se:.3g}")


def _rate_power(rates, criteria):
    """:func:`_slope_power` of the rate study at :func:`rate_half_width`."""
    return _slope_power(*rate_half_width(rates, criteria), criteria)


def _rate_study_evidence(rates, criteria):
    inside = rates[rates["in_domain"]]
    text = (_rate_power(rates, criteria)[0]
            + f" Inside the stated range, {len(inside)} cells: {class_counts(inside['rate_class'])}.")
    tested = inside[inside["holm_slower"].notna()]
    if len(tested):
        text += (f" Checkpoints in the window: {int(inside['n_fitted'].min())}..{int(inside['n_fitted'].max())}; "
                 f"smallest Holm-adjusted p: consistent {tested['holm_consistent'].min():.3g}, slower "
                 f"{tested['holm_slower'].min():.3g} ({len(tested)} cells tested).")
    slower = inside[inside["rate_class"] == "slower"].sort_values(["lam", "theta_lam"])
    if len(slower):
        r = slower.iloc[0]
        text += (f" Slower, smallest lambda: {cell_name(r)}: slope {r['slope']:.2f} [{r['low']:.2f}, {r['high']:.2f}], "
                 f"Holm p {r['holm_slower']:.3g}.")
    transient = inside[inside["rate_class"] == "transient"]
    if len(transient):
        text += (f" Transient (apart): peaks {transient['measured_peak'].min():.3g}..{transient['measured_peak'].max():.3g}"
                 f" x the error of f = 0, slopes {transient['slope'].min():.2f}..{transient['slope'].max():.2f}.")
    outside = rates[~rates["in_domain"]]
    return text + (f" Outside the range (not tested): {class_counts(outside['rate_class'])}." if len(outside) else "")


def rows_rate(summary, rates, settings, criteria, rate):
    """Rows 6r (the rate study) and 6b (the convergence study's batch sub-grid)."""
    primary = primary_cells(summary)
    inside = primary[primary["in_domain"]]
    secondary = summary[(summary["batch_size"] > summary["batch_size"].min()) & (summary["schedule"] == PAPER_SCHEDULE)]
    criterion = (f"slope of log(mean over seeds of the mean error over rows) against log t on t >= "
                 f"{criteria['fit_from']:g} T, {criteria['confidence']:.0%} bootstrap CI over seeds "
                 f"({criteria['bootstrap']} resamples): consistent with O(1/t) if the CI's upper end <= "
                 f"{criteria['rate_target'] + criteria['rate_tolerance']:g}, slower if its lower end is above, "
                 "inconclusive otherwise; 'not finite': some run overflowed double precision before T")
    rc = rate["criteria"]
    rate_criterion = (
        f"Rate study: {rate['seeds']} seeds, T = {rate['n_iter']}, {rate['n_checkpoints']} log-spaced checkpoints and "
        f"{rate['window_points']} more in the fitted window t >= {rc['fit_from']:g} T (at least "
        f"{rc['min_fit_checkpoints']} required); slope of log(mean over seeds of the mean error) against log t; "
        f"one-sided p-values against {rc['rate_target'] + rc['rate_tolerance']:g} from the bootstrap standard error "
        f"({rc['bootstrap']} resamples), each Holm-adjusted over the tested cells at {rc['alpha']:g}: consistent or "
        f"slower when rejected, else inconclusive; transient (error amplified above {rc['transient_peak']:g} x that "
        f"of f = 0 and the slope's CI below {rc['rate_target'] - rc['rate_tolerance']:g}) reported apart, counted "
        "neither for nor against")
    fail = ("slower", "not finite")
    counted = rates[rates["in_domain"] & ~rates["rate_class"].isin(["transient"])]
    rate_row = Claim(
        "6r", "Remark after Theorem 1: the error converges at the rate O(1/t) (paper's sampling)",
        "Theorem 1 and its Remark; Introduction",
        f"{settings}; {rate_criterion}. Figures {FIGURES}/rate.png (the rate study), {FIGURES}/slopes.png (the "
        "convergence study's slopes).",
        v.powered(v.domain_verdict(counted["rate_class"], fail_class=fail, pass_class="consistent"),
                  _rate_power(rates, rc)[1]),
        _rate_study_evidence(rates, rc) + " The convergence study under its earlier criterion (3 checkpoints in "
        f"the window, {criteria['bootstrap']} resamples, no adjustment), reported: " + _rate_evidence(inside))
    batch_cells = secondary[secondary["in_domain"]]
    widths = (batch_cells["error_mean_high"] - batch_cells["error_mean_low"]) / 2.0
    widths = widths[np.isfinite(widths)]
    batch_power = _slope_power(float(np.median(widths)) if len(widths) else float("nan"),
                               f"the median half-width of the cells' {criteria['confidence']:.0%} intervals", criteria)
    batch = Claim(
        "6b", "The O(1/t) rate with mini-batches (secondary study)",
        "Sec. 'Algorithms' (batches of instances)",
        f"Batch {int(secondary['batch_size'].iloc[0]) if len(secondary) else '-'} on a sub-grid; {criterion}.",
        v.powered(v.domain_verdict(batch_cells["error_mean_rate"], fail_class=fail, pass_class="consistent"),
                  batch_power[1]),
        batch_power[0] + " Inside the stated range: " + (_rate_evidence(batch_cells) if len(secondary) else "-"))
    return [rate_row, batch]


def row_huber_rate(rates, settings, rate, huber):
    """Row H6r: the rate section's criterion on the Huberised-loss study."""
    counted = rates[rates["in_domain"] & ~rates["rate_class"].isin(["transient"])]
    rc = rate["criteria"]
    return Claim(
        "H6r", huber_setting(huber) + "Remark after Theorem 1: the error converges at the rate O(1/t)",
        "Theorem 1 and its Remark",
        f"{settings}; {huber['seeds']} seeds, {huber['n_checkpoints']} log-spaced checkpoints and "
        f"{huber['window_points']} more in the fitted window; the rate section's criterion (Holm over cells at "
        f"{rc['alpha']:g}, transient cells apart). Figure {FIGURES}/huber.png (the study's bounds).",
        v.powered(v.domain_verdict(counted["rate_class"], fail_class=("slower", "not finite"), pass_class="consistent"),
                  _rate_power(rates, rc)[1]),
        _rate_study_evidence(rates, rc))


def rows(inputs):
    """Rows H6r, 6r, 6b from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    design = inputs.design
    return [row_huber_rate(inputs.huber_rates, huber_settings(design), design["rate"], design["huber"]),
            *rows_rate(inputs.summary, inputs.rates, study_settings(design), design["convergence"]["criteria"],
                       design["rate"])]
