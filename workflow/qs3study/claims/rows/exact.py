"""Rows 1a, 1b, 2, 3, 3p, 4, 4p and A1: the exact checks (identities, lemmas, Algorithm 1 as printed).

Reads the deterministic checks' results (:mod:`qs3study.theory.checks`) and the tolerances
of the design's ``checks`` section.
"""

from __future__ import annotations

import numpy as np

from qs3study.theory.checks import (FLOAT_RELATIVE_TOLERANCE, PINNED_EMPTY_CLASS, PINNED_HINGE_NOT_STRICT,
                                   PINNED_HINGE_NOT_UNIQUE, PINNED_NOT_A_MIXTURE, PINNED_SQUARED_F_DEPENDENT,
                                   PINNED_SQUARED_GAP, PINNED_SQUARED_HINGE_NOT_UNIQUE)

from .. import verdicts as v
from ..ledger import Claim
from .text import integer_range, number_set

_LOSSES = ("hinge", "squared_hinge", "logistic")


def row_1a(c1):
    return Claim(
        "1a", "AUC risk identity R_PN = R_PU + R_NU - 1/2 for the zero-one loss",
        "Sec. 'Semi-Supervised Ordinal Regression AUC Optimization', Eq. (7)",
        "Exact rational arithmetic on an exhaustive grid of small score multisets (ties count 1/2) with U an "
        "empirical mixture of P and N; hypothesis search (tests/theory/test_risk_identity.py).",
        v.identity_verdict(c1["zero_one_failures"], c1["cases"], c1["pinned_not_a_mixture_gap"]),
        f"Identity exact in {c1['cases'] - c1['zero_one_failures']}/{c1['cases']} grid cases when U is a P/N "
        f"mixture (any proportion). Condition: U must be such a mixture; without it (pinned: "
        f"P={number_set(PINNED_NOT_A_MIXTURE['FP'])}, N={number_set(PINNED_NOT_A_MIXTURE['FN'])}, "
        f"U={number_set(PINNED_NOT_A_MIXTURE['FU'])}) the gap is {c1['pinned_not_a_mixture_gap']}.")


def row_1b(c1):
    m = c1["minimiser"]
    return Claim(
        "1b", "The objective built on the identity is unbiased (Contribution 1) for the squared loss the "
              "algorithm minimises",
        "Contribution 1; Eq. (8)-(9); Conclusion",
        "Exact rational gap R_PU + R_NU - 1/2 - R_PN for the squared pairwise loss on the same grid, against the "
        "closed form 1/2 + 2 pi Var_P(f) + 2(1-pi) Var_N(f); exact f* with and without U.",
        v.counterexample_verdict(c1["cases"] - c1["squared_unbiased_cases"], c1["cases"]),
        f"Gap non-zero in {c1['cases'] - c1['squared_unbiased_cases']}/{c1['cases']} cases; equals the closed form "
        f"in {c1['cases'] - c1['closed_form_failures']}/{c1['cases']}. Smallest counterexample: "
        f"P={number_set(PINNED_SQUARED_GAP['FP'])}, N={number_set(PINNED_SQUARED_GAP['FN'])}, U = P u N: gap "
        f"{c1['pinned_squared_gap']}; f-dependent: P={number_set(PINNED_SQUARED_F_DEPENDENT['FP'])}, "
        f"N={number_set(PINNED_SQUARED_F_DEPENDENT['FN'])}: {c1['pinned_f_dependent_gap']}. "
        + ("The bias is a within-class variance penalty (the closed form holds in every case)"
           if c1["closed_form_failures"] == 0 else "The bias is not the closed form's variance penalty everywhere")
        + (" and moves the minimiser" if m["relative_shift"] > 0 else " and leaves the minimiser where it is")
        + f": exact f* with and without U differ by {m['relative_shift']:.1%}; within-class variance "
        f"{m['variance_pn']:.4f} -> {m['variance_u']:.4f}.")


def _rounding_bound(error):
    """``error`` as the power of ten above it, ``"< 1e-15"`` for 3.3e-16.

    Errors at the rounding level differ in their digits between CPUs (numpy's
    SIMD ``exp`` and ``cos`` differ in the last bit), and the ledger must
    reassemble byte for byte on any machine.
    """
    return f"< 1e{int(np.floor(np.log10(error))) + 1}" if error > 0 else "0"


def row_2(c2, tolerance):
    error = max(c2["max_kernel_error"], c2["max_gradient_error"])
    return Claim(
        "2", "The random-feature gradient is unbiased: xi = E_omega[zeta]",
        "Sec. 'Kernel Approximation' (after Eq. (12))",
        f"E_omega[phi_omega(x).phi_omega(x')] integrated to rounding (trapezoidal rule, spectrally exact); "
        f"criterion: error <= {tolerance:g}; hypothesis over points, gamma, weights "
        "(tests/theory/test_features.py); KS test of the frequency sampler.",
        v.identity_verdict(int(error > tolerance), 1, c2["printed_scaling_gap"]),
        f"max |E[phi.phi'] - k| {_rounding_bound(c2['max_kernel_error'])}, "
        f"max |E[zeta] - xi| {_rounding_bound(c2['max_gradient_error'])}; "
        f"KS p = {c2['ks_pvalue']:.2f} ({c2['n_frequency_draws']} draws). Conditions: features scaled by "
        f"1/sqrt(m) for m frequencies, weights computed before omega_t is drawn; the printed sqrt(1/D), D = 2m, "
        f"gives E[phi.phi] - k = {c2['printed_scaling_gap']:g} at x = x'.")


def _intervals(verdict):
    return ", ".join(f"[{lo:g}, {hi:g}]" if lo != hi else f"{lo:g}" for lo, hi in verdict.intervals)


def _scores(scores):
    return "(" + ", ".join(f"{x:g}" for x in scores) + ")"


def _labels(codes):
    return tuple(int(c) + 1 for c in codes)


def row_3(c3):
    hinge = c3["hinge"]

    def counts(loss):
        c = c3[loss]
        return (f"{loss}: {c['not_unique']}/{c['instances']} not unique, {c['not_ordered_midpoints']} midpoints "
                f"not strictly ordered")

    def pinned(name, example):
        verdict = c3[name]
        scores, codes, k, loss = example
        state = []
        if not verdict.unique:
            state.append("minimiser not unique")
        if not verdict.ordered_midpoints:
            state.append("not strictly ordered")
        return (f"{loss} scores {_scores(scores)}, labels {_labels(codes)}, k = {k}: minimiser intervals "
                f"{_intervals(verdict)} ({', '.join(state) or 'unique and strictly ordered'})")

    clean = [loss for loss in _LOSSES if c3[loss]["not_unique"] + c3[loss]["not_ordered_midpoints"] == 0]
    scores, codes, k = PINNED_EMPTY_CLASS
    tied = [loss for loss, verdict in c3["pinned_empty_class"].items() if not verdict.ordered_midpoints]
    return Claim(
        "3", "Threshold lemma: the all-threshold minimiser b* is unique and b_1* < ... < b_{k-1}*",
        "Sec. 'Calculate the Thresholds', Lemma (unnumbered)",
        "Minimiser intervals of every threshold (qs3orao.thresholds), snapped to exact breakpoints; exhaustive grid "
        "for the paper's LP (hinge) and two other surrogates; hypothesis (tests/theory/test_threshold_lemma.py).",
        v.counterexample_verdict(hinge["not_unique"] + hinge["not_ordered_midpoints"], hinge["instances"]),
        "Pinned: " + "; ".join(pinned(name, example) for name, example in (
            ("pinned_hinge_not_unique", PINNED_HINGE_NOT_UNIQUE), ("pinned_hinge_not_strict", PINNED_HINGE_NOT_STRICT),
            ("pinned_squared_hinge_not_unique", PINNED_SQUARED_HINGE_NOT_UNIQUE)))
        + ". Grid: " + "; ".join(counts(loss) for loss in _LOSSES)
        + f". Unique and strictly ordered on every grid instance: {', '.join(clean) or 'no surrogate'}. "
        f"An empty middle class (scores {_scores(scores)}, labels {_labels(codes)}, k = {k}) leaves two thresholds "
        f"not strictly ordered for {len(tied)}/{len(c3['pinned_empty_class'])} surrogates"
        + (f" ({', '.join(tied)})." if tied else "."))


def row_3p(c3p):
    cases, rising, mean = c3p["cases"], c3p["cases"] - c3p["not_increasing"], c3p["equal_to_mean"]
    text = (f"Minimisers not strictly increasing in {c3p['not_increasing']}/{cases} instances; every minimiser "
            f"equals mean(f) in {mean}/{cases}.")
    if mean == cases and cases:
        text += (" As printed, both sums are (b - f_i)^2, so e_j(b) = sum_i (b - f_i)^2 for every j and "
                 "b_1* = ... = b_{k-1}* = mean(f): the proof is of a different objective from the hinge LP of the "
                 "main text.")
    if rising == cases and cases:
        text += " The printed objective's minimisers are strictly increasing on every instance."
    return Claim(
        "3p", "The appendix's proof of the threshold lemma: e_j(b) = sum_{y<=j} (b - f_i)^2 + sum_{y>j} (f_i - b)^2 "
              "has minimisers b_1* < ... < b_{k-1}*",
        "Appendix 'Detailed Proof of Ordered Rule of Thresholds', Eq. (A)",
        f"Exact rational minimisers of e_j as written (d e_j/db = 0), j = 1..k-1, on {cases} random labeled "
        "instances with k >= 3 (every class present).",
        v.counterexample_verdict(c3p["not_increasing"], cases), text)


def row_4(c4):
    text = f"Violated in {c4['violations']}/{c4['cases']} exact cases"
    if c4["violations"]:
        c, t, top, total = c4["smallest"]
        worst_c, worst_t, worst = c4["worst"]
        last = c4["last_violating_t"]
        ends = all(t_last == int(k) - 2 for k, t_last in last.items())
        text += (f", at the integers c = theta*lambda in {integer_range(c4['violating_products'])}; smallest: c = {c}, "
                 f"t = {t}: max_i |a_t^i| = {top:g} x theta/t, sum |a|^2 = {total:g} x theta^2/t; worst on the grid "
                 f"c = {worst_c}, t = {worst_t}: ratio {worst:.3g}. The last violated t is c - 2 for "
                 f"{'every' if ends else 'not every'} violating c (so it holds for t >= c - 1 there)")
    else:
        text += " (no violation on the grid)"
    text += (f". |a_t^1|/(theta/t) = binom(c-2, t-1) for integer c, t < c: "
             f"{'verified' if c4['binomial_identity_holds'] else 'NOT verified'}. Integers without violation: "
             f"{integer_range(c4['holding_products'])}; rationals in (1, 2): {c4['float_violations']}/{c4['float_cases']} "
             f"float violations (rel. tol. {FLOAT_RELATIVE_TOLERANCE:g}) at larger t.")
    return Claim(
        "4", "Lemma 2: eta_i = theta/i, theta*lambda in (1,2) or a positive integer => |a_t^i| <= theta/t and "
             "sum_i |a_t^i|^2 <= theta^2/t",
        "Lemma 2 (Sec. 'Convergence Analysis'); Appendix 'Proof of lemma 2'",
        "Exact rational a_t^i on integer theta*lambda <= 40 and 1 + p/q (q <= 12), t <= 60; floats to t = 10^4; "
        "hypothesis (tests/theory/test_coefficients.py). Figure figures/theory/lemma2_ratio.png.",
        v.counterexample_verdict(c4["violations"] + c4["float_violations"], c4["cases"] + c4["float_cases"]), text)


def row_4p(c4, assumption3):
    products = c4["violating_products"]
    a3 = (" Assumption 3 itself fails for the squared loss (row A3)." if assumption3["squared"] is not None else
          " No violation of Assumption 3 was found for the squared loss (row A3).")
    return Claim(
        "4p", "Lemma 3's (and so Theorem 1's) proof over its stated range theta*lambda in (1,2) u Z+",
        "Appendix 'Proof of Lemma 3' (uses Lemma 2); Theorem 1",
        "Lemma 3's proof bounds sum |a_t^i|^2 by Lemma 2; the proof is complete only where Lemma 2 holds "
        "(row 4's exact check).",
        v.dependent_proof_verdict(products),
        ((f"Unproven for integer theta*lambda in {integer_range(products)}, where Lemma 2 fails; proven (given Assumptions "
          f"1-5) for theta*lambda in (1, 2) and the integers {integer_range(c4['holding_products'])}.")
         if products else "Lemma 2 holds on the whole checked range, so the proof's use of it is sound there.") + a3)


def row_algorithm1(a1, tolerance):
    return Claim(
        "A1", "Algorithm 1 as printed (line 11's l_5/l_6, line 12's shrink by eta_j) performs the gradient step "
              "of the objective",
        "Algorithm 1; Sec. 'Update Rules' Eq. (11)",
        f"qs3study.theory.algorithm_printed against finite differences of the sampled risk (step "
        f"{a1['finite_difference_step']:g}) on {a1['cases']} random steps; criterion: relative "
        f"deviation <= {tolerance:g}. Line 12 against the gradient's shrink prod_(i>j) (1 - eta_i lam).",
        v.difference_verdict(max(a1["printed_deviation"], a1["shrink_deviation"]), tolerance),
        f"Printed line 11: relative deviation {a1['printed_deviation']:.3g} from the gradient"
        + (" (l_5 belongs to phi(x_u), l_6 to phi(x_n))" if a1["printed_deviation"] > tolerance else " (agrees)")
        + f"; the project's update: {a1['gradient_deviation']:.1e}. Printed line 12: shrink factors off by up to "
        f"{a1['shrink_deviation']:.3g} (relative) over {a1['shrink_steps']} steps eta_t = 1/t with lambda = "
        f"{a1['lam']:g}"
        + ("; the gradient step shrinks every coefficient by the current (1 - eta_i lam)."
           if a1["shrink_deviation"] > tolerance else " (agrees with the gradient's shrink)."))


def rows(inputs):
    """Rows 1a-A1 from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    c, spec = inputs.checks, inputs.design["checks"]
    return [row_1a(c["claim1"]), row_1b(c["claim1"]), row_2(c["claim2"], spec["claim2"]["tolerance"]),
            row_3(c["claim3"]), row_3p(c["appendix_thresholds"]), row_4(c["claim4"]),
            row_4p(c["claim4"], c["assumption3"]), row_algorithm1(c["algorithm1"], spec["algorithm1"]["tolerance"])]
