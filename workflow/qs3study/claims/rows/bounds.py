"""Rows A3, 5a, 5b, 6 and H5a, H5b, H6: Assumption 3 and the bounds of Lemmas 1, 3 and Theorem 1.

Reads the design's ``checks.assumption3``, ``convergence`` and ``v2.huber_informative``
sections, the convergence study's per-cell summary and the informative Huberised-loss study's.
"""

from __future__ import annotations

import numpy as np

from .. import verdicts as v
from ..ledger import Claim
from .text import FIGURES, cell_name, class_counts, primary_cells


def row_assumption3(a3, m1_fixed, summary, doublings):
    squared = a3["squared"]
    primary = primary_cells(summary)
    exceeded = primary[primary["assumption3_exceeded"]]
    return Claim(
        "A3", "Assumption 3: |l_1'| <= M_1 and |l_2'| <= M_2 for the loss the method minimises (squared pairwise)",
        "Assumption 3 (Sec. 'Convergence Analysis'); used by Lemmas 1 and 3",
        f"Search of margins u - v = +-2^0..2^{doublings} for |l'| above M_1 fixed in advance (largest |l'| at the "
        "exact f* over every pair the sampler can draw); the largest sampled |l'| along every convergence run.",
        v.witness_verdict(squared),
        (f"Squared loss: |l'(u - v = {squared:g})| exceeds M_1 = {m1_fixed:.3g} (|l'| = 2|1 - u + v| is unbounded); "
         if squared is not None else f"Squared loss: no margin up to 2^{doublings} with |l'| above M_1 = "
         f"{m1_fixed:.3g}; ")
        + ("logistic pairwise loss: no margin found (|l'| <= 1). " if a3["logistic"] is None
           else f"logistic pairwise loss: exceeded at u - v = {a3['logistic']:g}. ")
        + f"Along the runs (batch 1, paper's schedule): a sampled |l'| exceeded that cell's fixed M_1 in "
        f"{len(exceeded)}/{len(primary)} cells (largest {primary['derivative_max'].max():.3g}).")


def _bound_evidence(rows, name):
    exceeded = rows[rows[f"{name}_class"] == "exceeded"].sort_values(["lam", "theta_lam"])
    text = class_counts(rows[f"{name}_class"])
    if exceeded.empty:
        return f"cells: {text}."
    first = exceeded.iloc[0]
    worst = exceeded.sort_values(f"{name}_max_ratio", na_position="first").iloc[-1]
    lemma2 = exceeded[f"{name}_lemma2_ratio_there"]
    return (f"cells: {text}. Smallest lambda (then theta*lam) exceeded: {cell_name(first)}, first at t = "
            f"{first[f'{name}_first_t']}; worst: {cell_name(worst)}, measured/bound {worst[f'{name}_max_ratio']:.3g}. "
            f"Where first exceeded, Lemma 2's ratio is > 1 in {(lemma2 > 1).sum()}/{len(exceeded)} cells.")


def _power_statement(rows, name):
    """The bound check's power, from the design alone, and whether any cell could fail it short of divergence.

    ``<name>_power`` is the bound at the last checkpoint over the error of ``f = 0``: at or above 1,
    only an error larger than the zero predictor's (a diverging run) can exceed it.
    """
    power = rows[f"{name}_power"].to_numpy(dtype=float)
    power = power[np.isfinite(power)]
    if not power.size:
        return "Power: no cell with a finite bound.", False
    informative = int((power < 1.0).sum())
    text = (f"Power (from the design, before the data): the bound at t = T over the error of f = 0 is "
            f"{power.min():.3g}..{power.max():.3g} over the {power.size} cells in the stated range; ")
    if informative:
        return text + (f"in {informative}/{power.size} it is below 1, so a run no worse than f = 0 can exceed "
                       "it there."), True
    return text + ("above 1 in every cell, so only a run worse than f = 0 (diverging) could exceed it: a 'holds' "
                   "says nothing beyond convergence."), False


def _premise_evidence(rows, name, fixed_at):
    """Which assumption fails where the bound is exceeded, and the bound read with the sampled M (after the run)."""
    if rows.empty:
        return "no cells."
    violated = rows["assumption3_exceeded"].astype(bool)
    exceeded = rows[f"{name}_class"] == "exceeded"
    holding = rows[~violated]
    text = (f"Assumption 3 (|l'| <= M_1 with M_1 fixed {fixed_at}) is violated (a sampled |l'| above M_1) in "
            f"{int(violated.sum())}/{len(rows)} cells"
            + (f", in {int((exceeded & violated).sum())}/{int(exceeded.sum())} of the cells where the bound is "
               "exceeded. " if exceeded.any() else ". "))
    if holding.empty:
        text += "No cell meets the premise, so none tests the bound in its own setting (rows H*). "
    else:
        text += f"Cells meeting the premise: {class_counts(holding[f'{name}_class'])}. "
    return text + (f"With M_1 the largest |l'| each run sampled (read after the run, not a test): "
                   f"{class_counts(rows[f'{name}_sampled_M_class'])}.")


_BOUND_READING = ("kappa = phi = 1, Q_0 from the appendix, Lemma 1 with sum |a|^2 (the printed sum |a| does not decay). "
                  "A cell exceeds a bound when the bootstrap CI of the mean over rows and seeds lies above it at some "
                  "checkpoint, respects it when the CI of the seed mean of the max over rows lies below it at every "
                  "checkpoint. Premise: 'fails' needs a cell exceeding the bound where Assumption 3 holds; exceeded "
                  "only where it is violated gives 'premise fails'.")
_M_AT_FSTAR = ("M fixed before the run: M_1 = M_2 = the largest |l'| = 2|1 - f*(a) + f*(b)| at the exact f* over "
               "every pair the sampler can draw, M and L the paper's combinations (L_1 = L_2 = 2), ")
_CLAIMS = {
    "5a": ("Lemma 1: E|f_{t+1}(x) - h_{t+1}(x)|^2 <= B_{1,t+1}^2 (random-feature error)", "Lemma 1; Appendix",
           "f_t and the paper's h_t (exact kernel, f's weights) on the same samples", "lemma1"),
    "5b": ("Lemma 3: E||h_{t+1} - f*||^2 <= Q_1^2/t (random-data error)", "Lemma 3; Appendix",
           "||h_t - f*||_H^2 exactly (h kept as kernel coefficients)", "lemma3"),
    "6": ("Theorem 1: E|f_{t+1}(x) - f*(x)|^2 <= (2C^2 + 2 kappa Q_1^2)/t for every training x, "
          "theta*lambda in (1,2) u Z+", "Theorem 1 (Sec. 'Convergence Analysis'); Appendix",
          "f_t against the exact f* at every training row", "theorem1"),
}


def rows_convergence(summary, settings, *, prefix="", setting="", fixed=_M_AT_FSTAR, fixed_at="at f*",
                     figures=(f"{FIGURES}/convergence_*.png", f"{FIGURES}/bounds.png")):
    """Rows 5a, 5b, 6 (``prefix`` + id): the bounds with M fixed in advance, read with their premise.

    ``setting`` is prepended to each claim (the loss, when not the paper's); ``fixed`` says how M was fixed;
    ``figures`` are the study's figures the rows cite.
    """
    primary = primary_cells(summary)
    inside = primary[primary["in_domain"]]
    outside = primary[~primary["in_domain"]]
    rows = []
    for claim_id, (claim, where, check, name) in _CLAIMS.items():
        verdict = v.premise_verdict(inside[f"{name}_class"], ~inside["assumption3_exceeded"].astype(bool),
                                    fail_class="exceeded", pass_class="respected")
        power, can_fail = _power_statement(inside, name)
        evidence = (power + " Inside the stated range: " + _bound_evidence(inside, name) + " "
                    + _premise_evidence(inside, name, fixed_at))
        verdict = v.powered(verdict, can_fail)
        if claim_id == "6" and len(outside):
            evidence += " Outside it: " + _bound_evidence(outside, name)
        rows.append(Claim(f"{prefix}{claim_id}", setting + claim, where,
                          f"{check}; {settings}. {fixed}{_BOUND_READING} Verdict over the cells in the stated range. "
                          f"Figures {', '.join(figures)}.", verdict, evidence))
    return rows


def huber_setting(huber):
    """The prefix of every Huberised-loss row's claim (rows H*)."""
    return f"[Huberised squared loss, delta = {huber['delta']:g}: Assumptions 2-3 hold] "


def rows_huber(summary, settings, huber):
    """Theorem 1 in its own setting: rows H5a, H5b, H6 (the bounds) with the Huberised loss.

    ``summary`` is the design v2 ``huber_informative`` study's, summarised on its checkpoints
    ``t >= huber["check_from"]`` (where the design put the bound below the error of ``f = 0``).
    """
    fixed = (f"M fixed by the loss before the run: M_1 = M_2 = 2 delta = {2 * huber['delta']:g} (|H_delta'| <= "
             "2 delta everywhere), M and L the paper's combinations (L_1 = L_2 = 2), f* the exact minimiser "
             f"for this loss (semismooth Newton, gradient <= {huber['gtol']:g}), the bounds read at the checkpoints "
             f"t >= {huber['check_from']} only (design v2: where the bound is below the error of f = 0), ")
    return rows_convergence(summary, settings, prefix="H", setting=huber_setting(huber), fixed=fixed,
                            fixed_at="by the loss", figures=(f"{FIGURES}/huber_informative.png",))


def study_settings(design):
    """One-line description of the convergence study."""
    conv = design["convergence"]
    instances = "; ".join(f"{name}: {s['n_labeled']} labeled + {s['n_unlabeled']} unlabeled, k = {s['n_classes']}, "
                          f"d = {s['n_features']}, gamma = {s['gamma']}, trade-off {s['tradeoff']}"
                          for name, s in conv["instances"].items())
    return (f"Instances {instances}; lambda in {conv['lambdas']}; theta*lambda in {conv['theta_lams']}; "
            f"T = {conv['n_iter']}, {conv['seeds']} seeds, batch {conv['primary']['batch_size']} with "
            f"{conv['primary']['n_components']} frequency per step (the paper's sampling)")


def huber_settings(design, spec):
    """One-line description of a Huberised-loss study (``spec``: its section of the design)."""
    return (f"Instances {', '.join(design['convergence']['instances'])} (as rows 5a-6); lambda in {spec['lambdas']}; "
            f"theta*lambda in {spec['theta_lams']}; T = {spec['n_iter']}, {spec['seeds']} seeds, batch "
            f"{design['convergence']['primary']['batch_size']} with {design['convergence']['primary']['n_components']} "
            "frequency per step, step theta/t")


def rows(inputs):
    """Rows A3, 5a, 5b, 6, H5a, H5b, H6 from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    design = inputs.design
    m1 = float(primary_cells(inputs.summary)["M1_fixed"].max())
    return [row_assumption3(inputs.checks["assumption3"], m1, inputs.summary, design["checks"]["assumption3"]["doublings"]),
            *rows_convergence(inputs.summary, study_settings(design)),
            *rows_huber(inputs.huber_informative_summary, huber_settings(design, design["v2"]["huber_informative"]),
                        design["v2"]["huber_informative"])]
