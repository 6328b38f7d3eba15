"""Mutation suite of the ledger's statistical rows.

For each row, one change of its inputs that must flip the verdict and one that must not;
and the evidence text must change with the verdict (no clause fixed regardless of the data).
"""

import pathlib

import numpy as np
import pandas as pd
import pytest

from qs3study.claims import verdicts as v
from qs3study.claims.design import load_design
from qs3study.claims.rows import bounds, complexity, exact, rate, stability

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOUNDS = ("lemma1", "lemma3", "theorem1")


@pytest.fixture(scope="module")
def design():
    return load_design(ROOT / "tests" / "theory" / "design_ci.yaml")


def bound_cells(power=(0.5, 20.0, 30.0), classes=("respected",) * 3, premise=(True, True, True)):
    """Per-cell bound summaries of three cells inside the stated range (batch 1, the paper's schedule)."""
    rows = []
    for k, (p, c, holds) in enumerate(zip(power, classes, premise)):
        row = {"instance": "A", "lam": 2.0 ** -k, "theta_lam": 1.5, "batch_size": 1, "schedule": "paper",
               "in_domain": True, "assumption3_exceeded": not holds}
        for name in BOUNDS:
            row.update({f"{name}_class": c, f"{name}_power": p, f"{name}_max_ratio": 2.0 if c == "exceeded" else 0.1,
                        f"{name}_first_t": 10 if c == "exceeded" else -1,
                        f"{name}_lemma2_ratio_there": 1.0 if c == "exceeded" else np.nan,
                        f"{name}_sampled_M_class": c})
        rows.append(row)
    return pd.DataFrame(rows)


def bound_rows(summary):
    return {c.id: c for c in bounds.rows_convergence(summary, "settings", prefix="H")}


@pytest.mark.parametrize("row_id", ["H5a", "H5b", "H6"])
def test_bound_rows_flip_with_an_exceeded_cell_and_not_with_another_cells_power(row_id):
    base = bound_rows(bound_cells())[row_id]
    assert base.verdict == v.HOLDS
    flipped = bound_rows(bound_cells(classes=("respected", "exceeded", "respected")))[row_id]
    assert flipped.verdict == v.FAILS
    assert flipped.evidence != base.evidence
    same = bound_rows(bound_cells(power=(0.5, 2.0, 300.0)))[row_id]
    assert same.verdict == v.HOLDS


@pytest.mark.parametrize("row_id", ["H5a", "H5b", "H6"])
def test_a_bound_no_cell_can_fail_reads_uninformative_and_says_so(row_id):
    informative = bound_rows(bound_cells())[row_id]
    vacuous = bound_rows(bound_cells(power=(1.5, 20.0, 30.0)))[row_id]
    assert vacuous.verdict == v.UNINFORMATIVE
    assert "above 1 in every cell" in vacuous.evidence and "above 1 in every cell" not in informative.evidence
    # a failure is a failure whatever the power
    assert bound_rows(bound_cells(power=(1.5, 20.0, 30.0), classes=("exceeded",) * 3))[row_id].verdict == v.FAILS


def test_a_bound_exceeded_only_where_the_premise_fails_is_a_premise_failure():
    cells = bound_cells(classes=("respected", "exceeded", "respected"), premise=(True, False, True))
    assert bound_rows(cells)["H6"].verdict == v.PREMISE_FAILS


def rate_cells(classes, se=0.01, slope=-1.0):
    """The rate study's per-cell classes: cells inside the range, every one tested."""
    n = len(classes)
    return pd.DataFrame({
        "instance": ["A"] * n, "lam": [2.0 ** -k for k in range(n)], "theta_lam": [1.5] * n, "in_domain": [True] * n,
        "rate_class": list(classes), "n_fitted": [10] * n, "slope": [slope] * n, "low": [slope - 2 * se] * n,
        "high": [slope + 2 * se] * n, "se": [se] * n, "measured_peak": [1.0] * n,
        "holm_consistent": [0.01] * n, "holm_slower": [1.0] * n})


def test_rate_row_flips_with_a_slower_cell_and_not_with_a_slope_inside_its_class(design):
    row = lambda rates: rate.row_huber_rate(rates, "settings", design["rate"], design["huber"])  # noqa: E731
    base = row(rate_cells(["consistent"] * 3))
    assert base.verdict == v.HOLDS
    flipped = row(rate_cells(["consistent", "slower", "consistent"]))
    assert flipped.verdict == v.FAILS and flipped.evidence != base.evidence
    assert row(rate_cells(["consistent"] * 3, slope=-1.1)).verdict == v.HOLDS


def test_rate_power_follows_the_standard_error(design):
    criteria = design["rate"]["criteria"]
    tight, can_fail = rate._rate_power(rate_cells(["consistent"] * 3, se=0.01), criteria)
    assert can_fail and "can be called consistent" in tight
    # an interval so wide that only a non-decaying error is called slower
    loose, can_fail = rate._rate_power(rate_cells(["consistent"] * 3, se=1.0), criteria)
    assert not can_fail and "cannot be called consistent" in loose and "slope >= 0" in loose
    row = rate.row_huber_rate(rate_cells(["consistent"] * 3, se=1.0), "settings", design["rate"], design["huber"])
    assert row.verdict == v.UNINFORMATIVE


def test_table1_space_evidence_follows_its_counts():
    grows = {"n": 40, "D": 4, "n_iters": [5, 10], "coefficients": [20, 40], "per_iteration": [4]}
    constant = {**grows, "coefficients": [40, 40], "per_iteration": [8, 4]}
    fails, holds = complexity.row_table1_space(grows), complexity.row_table1_space(constant)
    assert (fails.verdict, holds.verdict) == (v.FAILS, v.HOLDS)
    assert "t x D coefficients, which O(Dn) omits" in fails.evidence
    assert "O(Dn) omits" not in holds.evidence and "= D" not in holds.evidence
    # a different growth that still grows does not flip it
    assert complexity.row_table1_space({**grows, "coefficients": [20, 60]}).verdict == v.FAILS


def test_algorithm1_evidence_follows_its_deviations():
    printed = {"finite_difference_step": 1e-7, "cases": 3, "printed_deviation": 4.0, "gradient_deviation": 1e-7,
               "shrink_deviation": 1.0, "shrink_steps": 20, "lam": 0.5}
    agreeing = {**printed, "printed_deviation": 1e-8, "shrink_deviation": 0.0}
    fails, holds = exact.row_algorithm1(printed, 1e-4), exact.row_algorithm1(agreeing, 1e-4)
    assert (fails.verdict, holds.verdict) == (v.FAILS, v.HOLDS)
    assert "l_5 belongs to phi(x_u)" in fails.evidence and "l_5" not in holds.evidence
    assert exact.row_algorithm1({**printed, "printed_deviation": 2.0}, 1e-4).verdict == v.FAILS


def transient_cells(measured, predicted=(1e3, 1e4, 1e5, 1e6)):
    return pd.DataFrame({"instance": "A", "lam": [1.0, 0.5, 0.25, 0.125], "theta_lam": 1.5, "batch_size": 1,
                         "schedule": "paper", "predicted_peak": list(predicted), "measured_peak": measured,
                         "predicted_t_peak": [10, 20, 40, 80], "predicted_peak_sampled": 1e9, "curvature": 1.0,
                         "in_domain": True})


def test_transient_row_flips_when_the_measured_peaks_leave_the_prediction(design):
    criteria = design["convergence"]["criteria"]
    base = stability.row_transient(transient_cells([1e3, 1e4, 1e5, 1e6]), criteria)
    assert base.verdict == v.HOLDS
    flipped = stability.row_transient(transient_cells([1e9, 1e8, 1e7, 1e-6]), criteria)
    assert flipped.verdict == v.FAILS and flipped.evidence != base.evidence
    assert stability.row_transient(transient_cells([2e3, 1e4, 1e5, 3e6]), criteria).verdict == v.HOLDS


def test_transient_sentence_follows_where_the_product_amplifies(design):
    criteria = design["convergence"]["criteria"]
    amplifying = stability.row_transient(transient_cells([1e3, 1e4, 1e5, 1e6]), criteria).evidence
    assert "4 cells are predicted to amplify" in amplifying and "peaks at t = 80" in amplifying
    assert "lam = 0.125" in amplifying
    tame = stability.row_transient(transient_cells([1.0] * 4, predicted=[1.0] * 4), criteria).evidence
    assert "No cell inside the theorem's range is predicted to amplify" in tame and "longest" not in tame


def offset_summary(peaks, rates, schedule="offset_auto", offsets=(3.0, 5.0)):
    """Two cells under ``schedule`` (the offset's classes ``rates``) and the paper's schedule (both consistent)."""
    cells = {"instance": "A", "lam": [1.0, 0.5], "theta_lam": 1.5, "batch_size": 1, "in_domain": True,
             "curvature": 1.0, "predicted_peak": 1.0, "predicted_peak_sampled": 10.0}
    paper = pd.DataFrame({**cells, "schedule": "paper", "measured_peak": [50.0, 80.0], "error_mean_rate": "consistent",
                          "step_offset": 0.0})
    offset = pd.DataFrame({**cells, "schedule": schedule, "measured_peak": list(peaks), "error_mean_rate": list(rates),
                           "step_offset": list(offsets)})
    return paper, offset


def test_offset_row_flips_with_a_peak_above_the_limit_and_not_with_one_below(design):
    criteria = design["convergence"]["criteria"]
    limit = criteria["offset_peak"]

    def row(peaks, rates=("consistent", "consistent")):
        return stability.row_offset(pd.concat(offset_summary(peaks, rates)), criteria)

    base = row([1.0, 1.0])
    assert base.verdict == v.HOLDS
    flipped = row([1.0, 10 * limit])
    assert flipped.verdict == v.FAILS and flipped.evidence != base.evidence and f"{10 * limit:.3g}" in flipped.evidence
    assert row([1.0, 0.9 * limit]).verdict == v.HOLDS
    lost = row([1.0, 1.0], rates=("consistent", "slower"))
    assert lost.verdict == v.FAILS and "not under the offset: 1/2" in lost.evidence


def test_offset_data_row_flips_with_a_peak_above_the_limit_and_its_text_follows_the_bound(design):
    from qs3orao.curvature import CurvatureBound

    criteria = design["convergence"]["criteria"]
    limit = criteria["offset_peak"]
    bound = {"A": CurvatureBound(estimate=1.0, deviation=0.5, data_free=6.0, bound=1.5, n_draws=64, delta=0.01)}

    def row(peaks, bounds=bound):
        paper, offset = offset_summary(peaks, ("consistent", "consistent"), schedule="offset_auto_data")
        return stability.row_offset_data(offset, paper, criteria, design["offset_data"], bounds)

    base = row([1.0, 1.0])
    assert base.verdict == v.HOLDS
    flipped = row([1.0, 10 * limit])
    assert flipped.verdict == v.FAILS and flipped.evidence != base.evidence
    assert row([0.5, 0.9 * limit]).verdict == v.HOLDS
    assert "the exact h 1 <= h_delta" in base.evidence
    below = {"A": CurvatureBound(estimate=0.5, deviation=0.1, data_free=6.0, bound=0.6, n_draws=64, delta=0.01)}
    assert "the exact h 1 > h_delta" in row([1.0, 1.0], below).evidence


def equivalence_cells(classes, slope=-1.0, se=0.02):
    """Design v2's rate classes: cells inside the range, every one tested."""
    n = len(classes)
    return pd.DataFrame({
        "instance": ["A"] * n, "lam": [2.0 ** -k for k in range(n)], "theta_lam": [1.5] * n, "in_domain": [True] * n,
        "rate_class": list(classes), "n_fitted": [12] * n, "slope": [slope] * n, "se": [se] * n,
        "low": [slope - 1.645 * se] * n, "high": [slope + 1.645 * se] * n, "measured_peak": [1.0] * n,
        "final_ratio": [1e-3] * n, "p_equivalent": [0.01] * n, "p_slower": [0.9] * n, "p_faster": [0.9] * n,
        "holm_slower": [1.0] * n, "holm_faster": [1.0] * n})


def test_v2_rate_row_text_follows_its_cells(design):
    row = lambda rates: rate.row_rate(rates, "settings", design["v2"]["rate"])  # noqa: E731
    base = row(equivalence_cells(["consistent"] * 3))
    assert base.verdict == v.HOLDS and "consistent 3" in base.evidence
    slower = row(equivalence_cells(["consistent", "slower", "consistent"], slope=-0.5))
    assert slower.verdict == v.FAILS and "Slower, smallest lambda" in slower.evidence
    assert "Slower" not in base.evidence and slower.evidence != base.evidence
    unsure = row(equivalence_cells(["consistent", "inconclusive", "consistent"]))
    assert unsure.verdict == v.INCONCLUSIVE and "Inconclusive, smallest lambda" in unsure.evidence
    transient = row(equivalence_cells(["transient"] * 2 + ["consistent"]).assign(final_ratio=[3.0, 0.5, 0.1]))
    assert "1/2 cells still above it" in transient.evidence and "Transient" not in base.evidence


def test_complexity_row_memory_clause_follows_the_growth(design):
    flat = complexity_row(design)
    grows = complexity_row(design, growth=tuple(x / 2**20 for x in (128.0, 120.0, 136.0)))
    assert flat.verdict == v.HOLDS and "does not grow vs O(Dn), which does not grow with t: consistent" in flat.evidence
    assert grows.verdict == v.FAILS and "grows as expected vs O(Dn)" in grows.evidence
    assert "does not grow vs" not in grows.evidence


def batch_summary(classes, slope=-1.0):
    """The convergence study's primary cells and a batch sub-grid whose cells have ``classes``."""
    n = len(classes)
    cells = {"instance": "A", "lam": [2.0 ** -k for k in range(n)], "theta_lam": 1.5, "schedule": "paper",
             "in_domain": True, "error_mean_slope": slope, "error_mean_low": slope - 0.05,
             "error_mean_high": slope + 0.05, "final_error_mean": 1e-3}
    return pd.concat([pd.DataFrame({**cells, "batch_size": 1, "error_mean_rate": "consistent"}),
                      pd.DataFrame({**cells, "batch_size": 8, "error_mean_rate": list(classes)})], ignore_index=True)


def test_batch_rate_row_flips_with_a_slower_cell_and_not_with_a_slope_inside_its_class(design):
    def row(summary):
        return rate.row_batch(summary, design["convergence"]["criteria"])

    base = row(batch_summary(["consistent"] * 3))
    assert base.id == "6b" and base.verdict == v.HOLDS
    flipped = row(batch_summary(["consistent", "slower", "consistent"]))
    assert flipped.verdict == v.FAILS and flipped.evidence != base.evidence and "slower 1" in flipped.evidence
    assert row(batch_summary(["consistent"] * 3, slope=-1.2)).verdict == v.HOLDS


def complexity_row(design, tail_high=2.1, all_sizes=(1.5, 1.0, 2.5), growth=(0.0, -1e-6, 1e-6)):
    criteria = design["complexity"]["criteria"]
    claimed = {name: c for name, c in criteria["claimed"].items() if c is not None}
    exponents = {name: all_sizes for name in claimed}
    local = {name: [c, c] for name, c in claimed.items()}
    tail = {name: (c, c - 0.1, c + tail_high - 2.0) for name, c in claimed.items()}
    v2 = design["v2"]["complexity"]
    return complexity.row_complexity(exponents, {**v2["criteria"], "claimed": claimed}, local, tail,
                                     {**design["complexity"]["settings"], "repeats": v2["repeats"]}, growth)


def test_complexity_row_flips_with_the_tail_fit_and_not_with_the_all_sizes_fit(design):
    tolerance = design["complexity"]["criteria"]["tolerance"]
    base = complexity_row(design)
    assert base.verdict == v.HOLDS
    # every tail interval's upper end above claimed + tolerance, lower end still below: inconclusive, not holds
    wide = complexity_row(design, tail_high=2.0 + 2 * tolerance)
    assert wide.verdict == v.INCONCLUSIVE and wide.evidence != base.evidence
    # the all-sizes fit is reported, not read by the verdict
    same = complexity_row(design, all_sizes=(9.0, 8.0, 10.0))
    assert same.verdict == v.HOLDS and same.evidence != base.evidence
