"""Rows H6r, 6r and 6b: the O(1/t) rate of the Remark after Theorem 1.

Reads the design's ``rate``, ``v2.rate``, ``huber`` and ``convergence.criteria`` sections,
the v2 rate study's per-cell equivalence classes and the Huberised-loss study's
(:mod:`qs3study.claims.rate`), and the convergence study's batch sub-grid.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from qs3study.theory.convergence import checkpoints

from .. import equivalence
from .. import verdicts as v
from ..ledger import Claim
from ..studies import PAPER_SCHEDULE
from .bounds import huber_setting, huber_settings, study_settings
from .text import FIGURES, cell_name, class_counts


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


def _final_error(cells):
    """The transient cells' mean error at the last checkpoint against the error of ``f = 0``."""
    ratio = cells["final_ratio"]
    return (f"at t = T the mean error is {ratio.min():.3g}..{ratio.max():.3g} x that of f = 0 (median "
            f"{ratio.median():.3g}; {int((ratio > 1).sum())}/{len(cells)} cells still above it)")


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
                 f" x the error of f = 0, slopes {transient['slope'].min():.2f}..{transient['slope'].max():.2f}; "
                 + _final_error(transient) + ".")
    outside = rates[~rates["in_domain"]]
    return text + (f" Outside the range (not tested): {class_counts(outside['rate_class'])}." if len(outside) else "")


def rate_design_power(spec):
    """The v2 rate test's power from its design alone (the noise model of ``v2.rate.criteria``).

    Returns
    -------
    text : str
    can_fail : bool
        Whether a decaying error (slope below 0) can be called slower: the margin's upper edge plus
        the expected half-width is below 0. (A design below the required power to confirm O(1/t) is
        said in ``text``: its cells read inconclusive, never holds by default.)
    """
    rc = spec["criteria"]
    marks = checkpoints(int(spec["n_iter"]), int(spec["n_checkpoints"]), window_from=float(spec["window_from"]),
                        window_points=int(spec["window_points"]))
    window = marks[marks >= rc["fit_from"] * marks[-1]]
    noise = dict(sigma=rc["noise_sigma"], ell=rc["noise_ell"])
    half = equivalence.expected_half_width(window, int(spec["seeds"]), alpha=rc["alpha"], **noise)
    chance = equivalence.power(window, int(spec["seeds"]), alpha=rc["alpha"], margin=rc["margin"], **noise)
    edge = rc["rate_target"] + rc["margin"]
    text = (f"Power (from the design, before the data; noise model sigma {rc['noise_sigma']:g}, ell "
            f"{rc['noise_ell']:g}): {len(window)} checkpoints over t in [{int(window[0])}, {int(window[-1])}] "
            f"(a factor {window[-1] / window[0]:.3g}), {spec['seeds']} seeds: expected half-width {half:.3g} "
            f"against the margin {rc['margin']:g}; a cell whose true slope is {rc['rate_target']:g} is called "
            f"consistent with probability {chance:.2f} (required {rc['power']:g})")
    if chance < rc["power"]:
        text += "; below the required power, so a cell that is O(1/t) will likely read inconclusive"
    can_fail = edge + half < 0.0
    if not can_fail:
        text += "; only a slope near 0 (an error that does not decay) could be called slower"
    return text + ".", can_fail


def _equivalence_evidence(rates, spec):
    inside = rates[rates["in_domain"]]
    text = (rate_design_power(spec)[0] + f" Inside the stated range, {len(inside)} cells: "
            f"{class_counts(inside['rate_class'])}.")
    tested = inside[inside["p_equivalent"].notna()]
    if len(tested):
        text += (f" Tested cells: slopes {tested['slope'].min():.2f}..{tested['slope'].max():.2f}, standard errors "
                 f"{tested['se'].min():.3g}..{tested['se'].max():.3g} (median {tested['se'].median():.3g}); "
                 f"largest TOST p {tested['p_equivalent'].max():.3g}.")
    for label in ("slower", "faster", "inconclusive"):
        cells = inside[inside["rate_class"] == label].sort_values(["lam", "theta_lam"])
        if len(cells):
            r = cells.iloc[0]
            text += (f" {label.capitalize()}, smallest lambda: {cell_name(r)}: slope {r['slope']:.2f} "
                     f"[{r['low']:.2f}, {r['high']:.2f}].")
    transient = inside[inside["rate_class"] == "transient"]
    if len(transient):
        text += (f" Transient (apart): peaks {transient['measured_peak'].min():.3g}..{transient['measured_peak'].max():.3g}"
                 f" x the error of f = 0; " + _final_error(transient) + ".")
    outside = rates[~rates["in_domain"]]
    return text + (f" Outside the range (not tested): {class_counts(outside['rate_class'])}." if len(outside) else "")


def row_rate(rates, settings, spec):
    """Row 6r: design v2's rate study, an equivalence test of the slope with -1 per cell."""
    rc = spec["criteria"]
    criterion = (
        f"Rate study (design v2): {spec['seeds']} seeds, T = {spec['n_iter']}, lambda in "
        f"{spec.get('lambdas', 'the convergence grid')}, theta*lambda in {spec['theta_lams']}; slope of log(mean over "
        f"seeds of the mean error) against log t on t >= {rc['fit_from']:g} T (at least {rc['min_fit_checkpoints']} "
        f"checkpoints), its standard error the bootstrap's ({rc['bootstrap']} resamples over seeds). Per cell, two "
        f"one-sided tests at {rc['alpha']:g} that the slope lies within {rc['rate_target']:g} +- {rc['margin']:g}: "
        "consistent when both reject; slower or faster when the one-sided test against the margin's edge rejects "
        f"after Holm over the tested cells; else inconclusive. Holds when every tested cell is consistent "
        f"(intersection-union, level {rc['alpha']:g}), fails when one is slower or not finite. Transient (the error "
        f"amplified above {rc['transient_peak']:g} x that of f = 0 and the interval's upper end below "
        f"{rc['rate_target'] - rc['margin']:g}) reported apart")
    counted = rates[rates["in_domain"] & ~rates["rate_class"].isin(["transient"])]
    return Claim(
        "6r", "Remark after Theorem 1: the error converges at the rate O(1/t) (paper's sampling)",
        "Theorem 1 and its Remark; Introduction",
        f"{settings}; {criterion}. Figure {FIGURES}/rate.png.",
        v.powered(v.domain_verdict(counted["rate_class"], fail_class=("slower", "not finite"),
                                   pass_class="consistent"), rate_design_power(spec)[1]),
        _equivalence_evidence(rates, spec))


def row_batch(summary, criteria):
    """Row 6b: the convergence study's batch sub-grid under the convergence section's criterion."""
    secondary = summary[(summary["batch_size"] > summary["batch_size"].min()) & (summary["schedule"] == PAPER_SCHEDULE)]
    criterion = (f"slope of log(mean over seeds of the mean error over rows) against log t on t >= "
                 f"{criteria['fit_from']:g} T, {criteria['confidence']:.0%} bootstrap CI over seeds "
                 f"({criteria['bootstrap']} resamples): consistent with O(1/t) if the CI's upper end <= "
                 f"{criteria['rate_target'] + criteria['rate_tolerance']:g}, slower if its lower end is above, "
                 "inconclusive otherwise; 'not finite': some run overflowed double precision before T")
    fail = ("slower", "not finite")
    batch_cells = secondary[secondary["in_domain"]]
    widths = (batch_cells["error_mean_high"] - batch_cells["error_mean_low"]) / 2.0
    widths = widths[np.isfinite(widths)]
    batch_power = _slope_power(float(np.median(widths)) if len(widths) else float("nan"),
                               f"the median half-width of the cells' {criteria['confidence']:.0%} intervals", criteria)
    return Claim(
        "6b", "The O(1/t) rate with mini-batches (secondary study)",
        "Sec. 'Algorithms' (batches of instances)",
        f"Batch {int(secondary['batch_size'].iloc[0]) if len(secondary) else '-'} on a sub-grid; {criterion}.",
        v.powered(v.domain_verdict(batch_cells["error_mean_rate"], fail_class=fail, pass_class="consistent"),
                  batch_power[1]),
        batch_power[0] + " Inside the stated range: " + (_rate_evidence(batch_cells) if len(secondary) else "-"))


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
    return [row_huber_rate(inputs.huber_rates, huber_settings(design, design["huber"]), design["rate"], design["huber"]),
            row_rate(inputs.rates, study_settings(design), design["v2"]["rate"]),
            row_batch(inputs.summary, design["convergence"]["criteria"])]
