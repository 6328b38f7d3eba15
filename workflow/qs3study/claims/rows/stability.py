"""Rows S, O and O-data: the transient of the paper's step theta/t and the offset schedules that remove it.

Reads the design's ``convergence.criteria`` and ``offset_data`` sections, the convergence
study's per-cell summary and the offset_data study's with its curvature bounds.
"""

from __future__ import annotations

import numpy as np

from .. import verdicts as v
from ..ledger import Claim
from .text import FIGURES, cell_name, index_cell_name, primary_cells


def _inside_range(strong, criteria):
    """Where inside the theorem's range the product amplifies, from the cells predicted to (``strong``)."""
    inside = strong[strong["in_domain"]]
    if inside.empty:
        return f"No cell inside the theorem's range is predicted to amplify by more than {criteria['transient_min']:g}."
    longest = inside.loc[inside["predicted_t_peak"].idxmax()]
    return (f"The factor exceeds 1 while theta (lam + h)/t > 2, so at fixed theta*lambda a smaller lambda (a larger "
            f"theta) amplifies longer: inside the theorem's range {len(inside)} cells are predicted to amplify by more "
            f"than {criteria['transient_min']:g}, lambda {inside['lam'].min():g}..{inside['lam'].max():g}; the longest "
            f"predicted transient peaks at t = {longest['predicted_t_peak']} ({cell_name(longest)}).")


def row_transient(summary, criteria):
    primary = primary_cells(summary)
    strong = primary[primary["predicted_peak"] > criteria["transient_min"]]
    with np.errstate(divide="ignore"):
        gap = np.abs(np.log10(strong["measured_peak"]) - np.log10(strong["predicted_peak"]))
    worst = primary.loc[primary["measured_peak"].replace(np.inf, np.finfo(float).max).idxmax()]
    return Claim(
        "S", "Stability of the paper's step theta/t: the early amplification of the error is predicted by "
             "prod_j (1 - eta_j (lam + h))^2, h the risk's largest curvature",
        "Lemma 2's range theta*lambda in (1,2) u Z+; Theorem 1",
        "h = largest eigenvalue of K H (H the risk's constant Hessian in the scores); predicted peak = max_t of the "
        "product; measured peak = seed mean of max_t mean error / error of f = 0, over the lambda x theta*lambda "
        f"grid (batch 1). Criterion: over cells with predicted peak > {criteria['transient_min']:g}, at least "
        f"{criteria['transient_share']:.0%} within {criteria['transient_decades']:g} decades and Spearman rank "
        f">= {criteria['transient_rank']:g}. Figure {FIGURES}/transient.png.",
        v.transient_verdict(primary["predicted_peak"], primary["measured_peak"], minimum=criteria["transient_min"],
                            decades=criteria["transient_decades"], share=criteria["transient_share"],
                            rank=criteria["transient_rank"]),
        f"{len(strong)}/{len(primary)} cells predicted to amplify by more than {criteria['transient_min']:g}; "
        f"{int((gap <= criteria['transient_decades']).sum())} of them within {criteria['transient_decades']:g} "
        f"decades. Largest curvature h (independent of lambda): "
        + ", ".join(f"instance {i}: {h:.3g}" for i, h in primary.groupby("instance")["curvature"].max().items())
        + ". Largest "
        f"measured peak: {cell_name(worst)}: measured {worst['measured_peak']:.3g}, predicted "
        f"{worst['predicted_peak']:.3g} (at t = {worst['predicted_t_peak']}). " + _inside_range(strong, criteria)
        + " Not part of the criterion: with the bound 4 kappa mean_j (2 - gamma_j) on the "
        "curvature of every sampled risk in place of h, the product bounds the measured peak in "
        f"{int((primary['measured_peak'] <= primary['predicted_peak_sampled']).sum())}/{len(primary)} cells.")


def _offset_comparison(offset, summary, criteria):
    """Verdict, check and evidence of an offset schedule's cells against the paper's on the same cells and seeds.

    ``offset`` holds the offset schedule's summary rows, ``summary`` the convergence study's (the paper's schedule).
    """
    offset = offset.set_index(["instance", "lam", "theta_lam"])
    paper = primary_cells(summary).set_index(["instance", "lam", "theta_lam"]).loc[offset.index]
    pairs = list(zip(paper["error_mean_rate"], offset["error_mean_rate"]))
    verdict = v.offset_verdict(offset["measured_peak"], pairs, peak_limit=criteria["offset_peak"])
    worst = offset["measured_peak"].replace(np.inf, np.finfo(float).max).idxmax()
    where_worst = index_cell_name(worst)
    lost = sum(p == "consistent" and o != "consistent" for p, o in pairs)
    check = (f"Both schedules on the same cells and seeds; removes the transient: measured peak <= "
             f"{criteria['offset_peak']:g} in every cell; keeps the rate: no cell consistent with O(1/t) under the "
             "paper's schedule becomes slower (inconclusive if it becomes inconclusive).")
    evidence = (
        f"Largest measured peak with the offset: {offset['measured_peak'].max():.3g} at {where_worst} (paper's schedule "
        f"there: {paper.loc[worst, 'measured_peak']:.3g}); cells consistent under the paper's schedule and not under "
        f"the offset: {lost}/{len(pairs)}; offset rate classes: "
        + ", ".join(f"{k} {n}" for k, n in sorted(offset['error_mean_rate'].value_counts().to_dict().items())) + ".")
    return verdict, check, evidence


def row_offset(summary, criteria):
    claim = ("Project: the offset schedule (QS3ORAO step_offset='auto', eta_t = theta/(t + t0)) removes "
             "the transient and keeps the rate")
    where = "README 'step schedule'"
    if "offset_auto" not in set(summary["schedule"]):
        return Claim("O", claim, where, "The theory study runs both schedules over its lambda grid (batch 1).",
                     v.not_evaluated(), "the design runs no offset_auto schedule")
    verdict, check, evidence = _offset_comparison(summary[summary["schedule"] == "offset_auto"], summary, criteria)
    return Claim("O", claim, where, check, verdict, evidence)


def row_offset_data(offset_summary, summary, criteria, spec, bounds):
    """Row O-data: row O's criteria for the offset from a data-based curvature bound.

    Parameters
    ----------
    offset_summary : pandas.DataFrame
        :func:`qs3study.claims.summary.summarise` of the offset_data study.
    summary : pandas.DataFrame
        The convergence study's (the paper's schedule, and ``offset_auto`` when it ran).
    criteria : dict
        ``convergence.criteria``.
    spec : dict
        The design's ``offset_data`` section.
    bounds : dict
        Instance to :class:`qs3orao.curvature.CurvatureBound` (:func:`qs3study.claims.studies.offset_data_bounds`).
    """
    verdict, check, evidence = _offset_comparison(offset_summary, summary, criteria)
    exact = primary_cells(summary).groupby("instance")["curvature"].max()
    curvature = "; ".join(
        f"instance {name}: h_delta = {b.bound:.3g} (largest curvature of the mean of {b.n_draws} sampled risks "
        f"{b.estimate:.3g} + margin {b.deviation:.3g}; the exact h {exact[name]:.3g} "
        f"{'<=' if exact[name] <= b.bound else '>'} h_delta; data-free bound {b.data_free:.3g})"
        for name, b in bounds.items())
    offsets = offset_summary.set_index(["instance", "lam", "theta_lam"])["step_offset"]
    text = f"Curvature: {curvature}. Offsets t0 (data-based): largest {offsets.max():g} at {index_cell_name(offsets.idxmax())}"
    if "offset_auto" in set(summary["schedule"]):
        free = summary[summary["schedule"] == "offset_auto"].set_index(["instance", "lam", "theta_lam"])["step_offset"]
        free = free.loc[offsets.index]
        text += (f" (data-free 'auto' there: {free.loc[offsets.idxmax()]:g}; largest data-free {free.max():g} at "
                 f"{index_cell_name(free.idxmax())}); data-based <= data-free in {int((offsets <= free).sum())}/{len(offsets)} "
                 f"cells, median ratio {float(np.median(offsets[free > 0] / free[free > 0])):.2f} where t0 > 0")
    text += (f". Not part of the criterion: prod_j (1 - eta_j (lam + h))^2 under these offsets predicts a peak of at most "
             f"{offset_summary['predicted_peak'].max():.3g}"
             + (" (every expected step contracts)" if offset_summary["predicted_peak"].max() <= 1.0 else "")
             + "; with the bound on every "
             f"sampled risk's curvature in place of h it bounds the measured peak in "
             f"{int((offset_summary['measured_peak'] <= offset_summary['predicted_peak_sampled']).sum())}/"
             f"{len(offset_summary)} cells")
    return Claim(
        "O-data",
        "Project: the offset schedule with step_offset='auto-data' (t0 from a data-based bound h_delta "
        "on the full risk's largest curvature, P(h > h_delta) <= delta) removes the transient and keeps the rate",
        "qs3orao.curvature",
        f"t0 = smallest integer with theta (lam + h_delta)/(1 + t0) <= 1, h_delta from {spec['n_draws']} sampled "
        f"single-sample risks (McDiarmid, delta = {spec['delta']:g}, seed {spec['seed']}), one per instance. " + check,
        verdict, text + ". " + evidence)


def rows(inputs):
    """Rows S, O, O-data from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    criteria = inputs.design["convergence"]["criteria"]
    return [row_transient(inputs.summary, criteria), row_offset(inputs.summary, criteria),
            row_offset_data(inputs.offset_data_summary, inputs.summary, criteria, inputs.design["offset_data"],
                            inputs.offset_data_bounds)]
