r"""The claims ledger: one row per claim of the paper, with verdict and evidence.

:func:`build_claims` turns the outputs of the deterministic checks
(:mod:`qs3orao.theory.checks`) and of the experiments (convergence summary,
complexity exponents, empirical verdicts) into :class:`Claim` rows;
:func:`write_ledger` renders them as Markdown and CSV.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import asdict, dataclass, fields

from . import complexity, convergence
from .checks import (FLOAT_RELATIVE_TOLERANCE, PINNED_NOT_A_MIXTURE, PINNED_SQUARED_F_DEPENDENT,
                     PINNED_SQUARED_GAP)

__all__ = ["VERDICTS", "Claim", "build_claims", "write_ledger"]

VERDICTS = ("holds", "holds under conditions stated", "fails", "not evaluated")
_LOSSES = ("hinge", "squared_hinge", "logistic")


@dataclass(frozen=True)
class Claim:
    """One ledger row."""

    id: str
    claim: str
    where: str
    check: str
    verdict: str
    evidence: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def _set(values):
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"


def _claim1(c1):
    m = c1["minimiser"]
    return Claim(
        "1", "AUC risk identity R_PN = R_PU + R_NU - 1/2, and the objective built on it is unbiased "
             "(Contribution 1) for the squared loss the algorithm minimises",
        "Sec. 'Semi-Supervised Ordinal Regression AUC Optimization', Eq. (7); Contribution 1; Conclusion",
        "Exact rational arithmetic. Zero-one loss (ties count 1/2) with U an empirical mixture of P and N; "
        "squared loss against the closed form R_PU+R_UN-1/2 = R_PN + 1/2 + 2 pi Var_P(f) + 2(1-pi) Var_N(f). "
        "Hypothesis search over all score multisets and mixture weights "
        "(tests/theory/test_risk_identity.py); exhaustive grid in the ledger; exact f* with U = copy of the labeled rows.",
        "holds under conditions stated",
        f"Zero-one identity exact in {c1['cases'] - c1['zero_one_failures']}/{c1['cases']} grid cases when U is a "
        f"P/N mixture (any proportion); fails without it (pinned: P={_set(PINNED_NOT_A_MIXTURE['FP'])}, "
        f"N={_set(PINNED_NOT_A_MIXTURE['FN'])}, U={_set(PINNED_NOT_A_MIXTURE['FU'])} gives gap "
        f"{c1['pinned_not_a_mixture_gap']}). NOT unbiased for the squared surrogate: gap equals the closed form in "
        f"{c1['cases'] - c1['closed_form_failures']}/{c1['cases']} cases and is never 0 "
        f"({c1['squared_unbiased_cases']} zero gaps); pinned smallest (hypothesis-shrunk): "
        f"P={_set(PINNED_SQUARED_GAP['FP'])}, N={_set(PINNED_SQUARED_GAP['FN'])}, U = P u N gives gap "
        f"{c1['pinned_squared_gap']}; f-dependent: P={_set(PINNED_SQUARED_F_DEPENDENT['FP'])}, "
        f"N={_set(PINNED_SQUARED_F_DEPENDENT['FN'])} gives {c1['pinned_f_dependent_gap']}. "
        f"The bias is a within-class variance penalty and moves the minimiser: exact f* with and without U differ by "
        f"{m['relative_shift']:.1%} (relative, labeled rows); mean within-class variance "
        f"{m['variance_pn']:.4f} -> {m['variance_u']:.4f}; objective difference minus closed-form bias "
        f"{max(abs(m['objective_gap_pn']), abs(m['objective_gap_u'])):.1e}.")


def _claim2(c2):
    return Claim(
        "2", "The random-feature gradient is unbiased: xi = E_omega[zeta]",
        "Sec. 'Kernel Approximation' (after Eq. (12))",
        "E_omega[phi_omega(x).phi_omega(x')] of the implemented feature map integrated to rounding along x - x' "
        "(trapezoidal rule, spectrally exact); hypothesis over points, gamma and gradient weights "
        "(tests/theory/test_features.py); KS test of the frequency sampler.",
        "holds under conditions stated",
        f"max |E[phi.phi'] - k| = {c2['max_kernel_error']:.1e}, max |E[zeta] - xi| = {c2['max_gradient_error']:.1e}; "
        f"frequency_block entries / sqrt(2 gamma) vs N(0,1): KS p = {c2['ks_pvalue']:.2f} "
        f"({c2['n_frequency_draws']} draws). Conditions: the weights are computed before omega_t is drawn "
        "(they are), and the features are scaled by 1/sqrt(m) with m frequencies; the paper's printed sqrt(1/D) "
        "with D = 2m features would give E = k/2.")


def _claim3(c3):
    def counts(loss):
        c = c3[loss]
        return (f"{loss}: {c['not_unique']}/{c['instances']} not unique, "
                f"{c['not_ordered_midpoints']} midpoints not strictly ordered, "
                f"{c['not_ordered_any_selection']} with some non-ordered selection")

    return Claim(
        "3", "Threshold lemma: the all-threshold minimiser b* is unique and b_1* < ... < b_{k-1}*",
        "Sec. 'Calculate the Thresholds', Lemma (unnumbered); Appendix 'Proof of Ordered Rule of Thresholds'",
        "Minimiser intervals of every threshold from qs3orao.thresholds, snapped to exact breakpoints; hypothesis over "
        "any scores (ties allowed), any labels with every class present, k = 2..5, each surrogate "
        "(tests/theory/test_threshold_lemma.py); exhaustive grid (scores in {0,1,3}, <= 4 rows, k = 2, 3) in the ledger.",
        "fails",
        "Uniqueness fails for the paper's LP (hinge): pinned scores (0, 0), labels (1, 2), k = 2: every b in "
        "[-1, 1] is optimal; also for the squared hinge: scores (0, 3), k = 2: [1, 2]. Strict order fails for the "
        "hinge even with unique minimisers: pinned scores (0,0,0,0,0), labels (1,2,3,3,3), k = 3 gives "
        "b_1* = b_2* = -1. Holds for the logistic surrogate (unique and strictly ordered) and the squared hinge "
        "(strictly ordered for any selection). Grid: " + "; ".join(counts(loss) for loss in _LOSSES) + ". "
        "With an empty middle class two thresholds coincide for every surrogate (pinned: scores (0, 1), labels "
        "(1, 3), k = 3), so the lemma also needs every class present. The appendix proves the claim for "
        "(b - f)^2 on both sides, which is not the hinge LP of the main text.")


def _claim4(c4):
    c, t, ratio = c4["worst"]
    return Claim(
        "4", "Lemma 2: eta_i = theta/i, theta*lambda in (1,2) or a positive integer => |a_t^i| <= theta/t and "
             "sum_i |a_t^i|^2 <= theta^2/t",
        "Lemma 2 (Sec. 'Convergence Analysis'); Appendix 'Proof of lemma 2'",
        "Exact rational a_t^i; hypothesis over any rational theta, lambda with theta*lambda in the stated set and "
        "any t >= 1 (tests/theory/test_coefficients.py); exact grid: integer theta*lambda <= 40 and 1 + p/q "
        "(q <= 12), t <= 60; floats up to t = 10^4.",
        "fails",
        f"Fails for every integer theta*lambda >= 4 (violations at c = {c4['violating_products'][0]}.."
        f"{c4['violating_products'][-1]}; {c4['violations']}/{c4['cases']} exact grid cases); pinned smallest: "
        f"theta*lambda = 4, t = 2: |a_2^1| = theta = 2 x theta/t, sum |a|^2 = {c4['pinned'][1]} x theta^2/t. "
        f"Exactly, |a_t^1|/(theta/t) = binom(c-2, t-1) for integer c and t < c "
        f"(identity verified: {c4['binomial_identity_holds']}); worst on the grid c = {c}, t = {t}: ratio {ratio:.3g}. "
        f"Holds for theta*lambda in (1, 2) and in {{1, 2, 3}} for all t, and for integer c >= 4 once t >= c - 1 "
        f"(float checks to t = 10^4: {c4['float_violations']}/{c4['float_cases']} violations, relative tolerance "
        f"{FLOAT_RELATIVE_TOLERANCE:g}; c = 1 attains the bound with equality). The proof's first step "
        "('obviously |a_t^i| <= theta/t') is where it breaks; the printed a_t^i = -eta_t prod(...) should read -eta_i.")


def _fmt_slope(row, name):
    return f"{row[f'{name}_slope']:.2f} [{row[f'{name}_low']:.2f}, {row[f'{name}_high']:.2f}]"


def _domain_verdict(rows, rate_column, ratio_column):
    ok = rows[rate_column].astype(bool) & (rows[ratio_column] <= 1.0) & ~rows["diverged"].astype(bool)
    return "holds under conditions stated" if ok.all() else "fails"


def _claims5_6(summary, settings):
    inside = summary[summary["in_domain"]]
    outside = summary[~summary["in_domain"]]
    where = (f"{settings}; criteria: slope 95% CI upper end <= {convergence.SLOPE_TARGET + convergence.SLOPE_TOLERANCE:g} "
             f"on t >= {convergence.FIT_FROM_FRACTION:g} T; divergence if non-finite or final > "
             f"{convergence.DIVERGENCE_FACTOR:g} x first; bound respected if measured/bound <= 1 at every checkpoint")

    def per_product(rows, error, ratio):
        return "; ".join(f"c={r['product']:g}: slope {_fmt_slope(r, error)} (rate criterion "
                         f"{'met' if r[f'{error}_rate_ok'] else 'NOT met'}), max measured/bound "
                         f"{r[ratio]:.2g}" for _, r in rows.iterrows())

    out_rate = ", ".join(f"{r['product']:g}" for _, r in outside.iterrows()
                         if r["f_error_rate_ok"] and not r["diverged"])
    out_slow = ", ".join(f"{r['product']:g} (f slope {r['f_error_slope']:.2f})" for _, r in outside.iterrows()
                         if not r["f_error_rate_ok"] or r["diverged"])
    lemma_verdict = ("holds under conditions stated"
                     if _domain_verdict(inside, "fh_error_rate_ok", "lemma1_ratio") != "fails"
                     and _domain_verdict(inside, "h_error_rate_ok", "lemma3_ratio") != "fails" else "fails")
    precision = ("A 'fails' here means the declared precision criterion on the slope was not met at some c in the "
                 "stated range (see 'NOT met'); the bounds themselves were respected wherever 'measured/bound' <= 1. "
                 "More seeds (config theory.convergence.seeds) narrow the intervals. ")
    conditions = ("Conditions: Assumption 3 fails for the squared loss (|l'| unbounded); bounds use the plug-in "
                  "M = max_t sum_i |w_t,i| observed (<= the paper's M), L1 = L2 = 2, kappa = phi = 1; Lemma 1 with "
                  "sum |a|^2 (the printed sum |a| is a misprint: it does not decay); Q_0 from the appendix.")
    lemma = Claim(
        "5", "Lemma 1 (random-feature error E|f_{t+1}(x) - h_{t+1}(x)|^2 <= B_{1,t+1}^2) and Lemma 3 "
             "(E||h_{t+1} - f*||^2 <= Q_1^2/t)",
        "Lemmas 1 and 3 (Sec. 'Convergence Analysis'); Appendix proofs",
        "f_t (random features) and the paper's h_t (exact kernel, f's weights) on the same samples, against exact "
        "f*; log-log slope with CI over seeds; measured vs bound. " + where + ". Figure figures/theory_convergence.png.",
        lemma_verdict,
        "Inside the stated range: Lemma 1: " + per_product(inside, "fh_error", "lemma1_ratio")
        + ". Lemma 3: " + per_product(inside, "h_error", "lemma3_ratio") + ". "
        + (precision if lemma_verdict == "fails" else "") + conditions)
    theorem_verdict = _domain_verdict(inside, "f_error_rate_ok", "theorem1_ratio")
    theorem = Claim(
        "6", "Theorem 1: E|f_{t+1}(x) - f*(x)|^2 <= (2C^2 + 2 kappa Q_1^2)/t for every training x",
        "Theorem 1 (Sec. 'Convergence Analysis'); Appendix 'Proof of Theorem 1'",
        "Mean over training rows and seeds of |f_t(x) - f*(x)|^2 against t over a grid of theta*lambda inside and "
        "outside (1,2) u Z+. " + where + ". Figures figures/theory_convergence.png, figures/theory_slopes.png.",
        theorem_verdict,
        "Inside the stated range: " + per_product(inside, "f_error", "theorem1_ratio") + ". Outside it: O(1/t) "
        f"also observed at c = {out_rate or 'none'}; slower or divergent at c = {out_slow or 'none'} "
        "(SGD theory predicts t^-min(1, 2c), so the stated range is sufficient, not necessary). The bounds are "
        "loose by orders of magnitude. " + (precision if theorem_verdict == "fails" else "") + conditions)
    return [lemma, theorem]


def _claim7(exponents):
    parts, verdicts = [], []
    for name, (slope, low, high) in exponents.items():
        claimed = complexity.CLAIMED_EXPONENTS[name]
        ok = complexity.exponent_verdict(name, low)
        if ok is not None:
            verdicts.append(ok)
        parts.append(f"{name}: exponent {slope:.2f} [{low:.2f}, {high:.2f}]"
                     + (f" (claimed {claimed:g}: {'consistent' if ok else 'NOT consistent'})" if claimed is not None
                        else " (no claim)"))
    return Claim(
        "7", "Table 1: QS3ORAO time O(D t^2), space O(D n); exact kernel methods O(n^3) time, O(n^2) space",
        "Table 1; Sec. 'Results and Discussion'",
        "Timing (best of repeats) and tracemalloc peak-memory sweeps, log-log exponent with 95% CI; criterion: the "
        f"CI starts at or below the claimed exponent + {complexity.EXPONENT_TOLERANCE:g}. "
        "Figure figures/theory_complexity.png.",
        "holds under conditions stated" if all(verdicts) else "fails",
        "; ".join(parts) + ". Conditions: O(D t^2) is the literal Algorithms 1-2 (every prediction regenerates all "
        "earlier blocks); the project's engine runs in O(t n D) time. Space: the engine's peak memory is the data "
        "plus a bounded working buffer and t x 2m coefficients, so 'O(D n)' holds only while t D = O(n D); the "
        "exact solver's n x n matrices give the O(n^2). Small sizes show the n^3 only as an upper bound.")


def _claim8(empirical, reason):
    texts = {
        "highest_auc": "QS3ORAO has the highest AUC in most cases",
        "beats_supervised": "the semi-supervised methods beat supervised SVOREX",
        "faster_beyond_10k": "QS3ORAO is faster than M-SAMULT and M-PNU-AUC beyond about 10,000 unlabeled rows",
        "exact_out_of_memory": "the exact baselines run out of memory on the larger sets",
    }
    claims = []
    for index, (key, text) in enumerate(texts.items()):
        result = empirical.get(key) if empirical else None
        claims.append(Claim(
            f"8{'abcd'[index]}", text, "Sec. 'Results and Discussion'; Figures 2 and 3",
            "Criteria in qs3orao/theory/empirical.py applied to results/tables/results.csv "
            "(AUC compared at the largest unlabeled size where every method finished).",
            result["verdict"] if result else "not evaluated",
            result["evidence"] if result else reason))
    return claims


def build_claims(*, c1, c2, c3, c4, convergence_summary, convergence_settings, exponents, empirical, empirical_reason=""):
    """All ledger rows, in claim order.

    Parameters
    ----------
    c1, c2, c3, c4 : dict
        Outputs of :mod:`qs3orao.theory.checks`.
    convergence_summary : pandas.DataFrame
        Output of :func:`qs3orao.theory.convergence.summarise`.
    convergence_settings : str
        One-line description of the convergence study's settings.
    exponents : dict of str to tuple
        Sweep name to ``(slope, low, high)``.
    empirical : dict or None
        Output of :func:`qs3orao.theory.empirical.empirical_claims`, or None
        when the results table is absent (``empirical_reason`` says why).
    """
    return [_claim1(c1), _claim2(c2), _claim3(c3), _claim4(c4),
            *_claims5_6(convergence_summary, convergence_settings), _claim7(exponents),
            *_claim8(empirical, empirical_reason)]


def _atomic_write(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _markdown_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_ledger(claims, md_path, csv_path, *, header=""):
    """Write the ledger as a Markdown table and a CSV with the same columns (atomically)."""
    names = [f.name for f in fields(Claim)]
    lines = [header, "", "| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(_markdown_cell(getattr(c, n)) for n in names) + " |" for c in claims]
    _atomic_write(md_path, "\n".join(lines).lstrip() + "\n")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names)
    writer.writeheader()
    writer.writerows(asdict(c) for c in claims)
    _atomic_write(csv_path, buffer.getvalue())


