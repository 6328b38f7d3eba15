"""Each study-based ledger row finds its counterexample or its confirmation."""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from qs3study.datasets.registry import DATASETS
from qs3orao.schedule import resolve_step_offset
from qs3study.theory import checks
from qs3study.theory.algorithm_printed import gradient_shrink_factors, printed_shrink_factors
from qs3study.theory.assumptions import LOSS_DERIVATIVES, derivative_exceeding
from qs3study.theory.convergence import (checkpoints, largest_curvature, make_problem, predicted_amplification,
                                        run_trajectory)
from qs3study.theory.dataset_facts import NOT_CHECKABLE, READ, dataset_facts, read_dataset_facts
from qs3study.theory.paper_tables import TABLE2, compare_table2
from qs3study.theory.threshold_lemma import appendix_threshold_minimisers
from qs3study.claims.rows import complexity, data, exact
from qs3study.claims import verdicts as v


def test_algorithm1_as_printed_is_not_the_gradient_and_the_engine_is():
    result = checks.check_algorithm1(cases=4, seed=3, finite_difference_step=1e-7, lam=0.5, shrink_steps=20)
    assert result["printed_deviation"] > 1e-2 and result["gradient_deviation"] < 1e-5
    assert result["shrink_deviation"] > 1e-2
    assert exact.row_algorithm1(result, 1e-4).verdict == v.FAILS
    agreeing = {**result, "printed_deviation": 1e-8, "shrink_deviation": 0.0}
    assert exact.row_algorithm1(agreeing, 1e-4).verdict == v.HOLDS


def test_printed_shrink_differs_from_the_gradient_shrink_after_two_steps():
    etas = np.array([1.0, 0.5, 1 / 3])
    np.testing.assert_allclose(gradient_shrink_factors(etas, 0.5), [0.75 * (1 - 1 / 6), 1 - 1 / 6, 1.0])
    np.testing.assert_allclose(printed_shrink_factors(etas, 0.5), [0.25, 0.75, 1.0])


def test_appendix_threshold_objective_has_one_minimiser_for_every_j():
    scores, codes = [Fraction(0), Fraction(1), Fraction(5), Fraction(2)], [0, 1, 2, 2]
    b = appendix_threshold_minimisers(scores, codes, 3)
    assert b == [Fraction(2), Fraction(2)]
    # independent route: numerical minimisation of e_j as printed
    for j in range(2):
        def e(t):
            return sum((t - float(f)) ** 2 for f, c in zip(scores, codes) if c <= j) + \
                sum((float(f) - t) ** 2 for f, c in zip(scores, codes) if c > j)
        assert minimize_scalar(e).x == pytest.approx(float(b[j]), abs=1e-6)
    result = checks.check_appendix_thresholds(cases=30, seed=5, max_rows=8, classes=[3, 4])
    assert result["not_increasing"] == result["equal_to_mean"] == 30
    assert exact.row_3p(result).verdict == v.FAILS
    assert exact.row_3p({**result, "not_increasing": 0}).verdict == v.HOLDS


def test_assumption3_fails_for_the_squared_loss_and_holds_for_the_logistic():
    for bound in (1.0, 10.0, 1e6):
        s = derivative_exceeding("squared", bound, doublings=60)
        assert s is not None and LOSS_DERIVATIVES["squared"](s) > bound
    assert derivative_exceeding("logistic", 1.0, doublings=60) is None
    assert derivative_exceeding("logistic", 0.4, doublings=60) is not None


def test_table1_space_grows_with_t():
    result = checks.check_table1_space(n=60, n_components=2, n_iters=[5, 10, 20])
    assert result["coefficients"] == [20, 40, 80]
    assert complexity.row_table1_space(result).verdict == v.FAILS
    constant = {**result, "coefficients": [40, 40, 40], "per_iteration": [8, 4, 2]}
    assert complexity.row_table1_space(constant).verdict == v.HOLDS


def test_table2_against_the_registry_and_a_mismatch():
    rows = compare_table2(DATASETS)
    assert len(rows) == 8 and all(r["rows_match"] for r in rows)


@pytest.fixture(scope="module")
def facts_without_mirror():
    return dataset_facts(DATASETS, None)


def test_table2_without_the_mirror_is_inconclusive_and_says_it_needs_it(tmp_path, facts_without_mirror):
    table2_only = {name: DATASETS[name] for name in TABLE2}
    for facts in (facts_without_mirror, dataset_facts(table2_only, tmp_path / "absent"),
                  dataset_facts(table2_only, tmp_path)):
        assert (facts.loc[facts["table2"] != "", "status"] == NOT_CHECKABLE).all()
        row = data.row_table2(facts, "m")
        assert row.verdict == v.INCONCLUSIVE and "0/8 Table 2 datasets checked against their files" in row.evidence
    assert "needs the mirror (absent)" in data.row_table2(facts_without_mirror, "m").evidence
    assert "not in the mirror" in data.row_table2(dataset_facts(table2_only, tmp_path), "m").evidence
    # the generated data need no mirror: they are counted either way
    generated = facts_without_mirror[facts_without_mirror["kind"] == "generated"]
    assert len(generated) and (generated["status"] == READ).all() and generated["rows"].notna().all()


MIRROR = Path(__file__).resolve().parents[3] / "shared" / "data"


def test_dataset_facts_survive_their_tidy_file(tmp_path, facts_without_mirror):
    facts = facts_without_mirror
    facts.to_csv(tmp_path / "datasets.csv", index=False)
    back = read_dataset_facts(tmp_path / "datasets.csv")
    pd.testing.assert_frame_equal(back, facts)
    assert data.row_table2(back, "m") == data.row_table2(facts, "m")


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"offline mirror {MIRROR} absent")
def test_table2_against_the_mirror_reads_sgemm_and_a_mismatch_fails():
    facts = dataset_facts(DATASETS, MIRROR)
    read = facts[facts["status"] == READ].set_index("dataset")
    assert read.loc["sgemm", "rows"] == 241_600 and read.loc["sgemm", "features"] == 14
    assert data.row_table2(facts, "m").verdict == v.CONDITIONAL
    broken = facts.copy()
    broken.loc[broken["dataset"] == "sgemm", "rows"] = 241_599
    row = data.row_table2(broken, "m")
    assert row.verdict == v.FAILS and "MISMATCH" in row.evidence
    documented_only = facts.copy()
    documented_only.loc[documented_only["dataset"] == "yolanda", "documented_rows"] = 1
    row = data.row_table2(documented_only, "m")
    assert row.verdict == v.CONDITIONAL and "DISAGREES" in row.evidence
    # a dataset outside Table 2 that differs from its documented shape is reported, not counted
    other = facts.copy()
    other.loc[other["dataset"] == "uci_kin40k", "rows"] = 39_999
    row = data.row_table2(other, "m")
    assert row.verdict == v.CONDITIONAL and "uci_kin40k (39,999 x 8 read, 40,000 x 8 documented)" in row.evidence


def test_lemma3_proof_is_unproven_where_lemma2_fails():
    c4 = checks.check_claim4(max_integer=6, max_exact_t=8, denominators=[2, 3], float_t=[100])
    assert c4["violating_products"] == [4, 5, 6]
    a3 = {"squared": -2.0, "logistic": None}
    assert exact.row_4p(c4, a3).verdict == v.FAILS
    assert exact.row_4p({**c4, "violating_products": []}, a3).verdict == v.HOLDS


def test_novelty_is_not_checkable():
    assert data.row_novelty().verdict == v.NOT_CHECKABLE


@pytest.fixture(scope="module")
def small_lambda_problem():
    return make_problem(n_labeled=20, n_unlabeled=30, n_classes=3, n_features=2, gamma=2.0, lam=0.125,
                        tradeoff=0.5, seed=0)


def test_transient_prediction_matches_a_measured_peak(small_lambda_problem):
    """theta * lambda = 4 at lambda = 1/8: a predicted amplification of many decades, measured within two."""
    problem = small_lambda_problem
    theta = 4.0 / problem.lam
    predicted, _ = predicted_amplification(theta, problem.lam, largest_curvature(problem), 200)
    assert predicted > 1e6
    run = run_trajectory(problem, theta, checkpoints(200, 6), batch_size=4, n_components=64, seed=0)
    measured = run["peak_error"][-1] / np.mean(problem.fstar_scores ** 2)
    assert abs(np.log10(measured) - np.log10(predicted)) <= 2.0


def test_offset_schedule_removes_the_predicted_and_the_measured_transient(small_lambda_problem):
    problem = small_lambda_problem
    theta = 4.0 / problem.lam
    t0 = resolve_step_offset("auto", theta=theta, lam=problem.lam, tradeoff=problem.tradeoff)
    assert predicted_amplification(theta, problem.lam, largest_curvature(problem), 200, t0) == (1.0, 0)
    run = run_trajectory(problem, theta, checkpoints(200, 6), batch_size=1, n_components=1, seed=0,
                         step_offset=t0)
    assert run["peak_error"][-1] / np.mean(problem.fstar_scores ** 2) <= 10.0
