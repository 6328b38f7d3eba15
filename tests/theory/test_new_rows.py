"""Each study-based ledger row finds its counterexample or its confirmation."""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from qs3study.datasets.registry import DATASETS
from qs3orao.schedule import resolve_step_offset
from qs3study.theory import checks
from qs3study.theory.algorithm_printed import gradient_shrink_factors, printed_shrink_factors
from qs3study.theory.assumptions import LOSS_DERIVATIVES, derivative_exceeding
from qs3study.theory.convergence import (checkpoints, largest_curvature, make_problem, predicted_amplification,
                                        run_trajectory)
from qs3study.theory.paper_tables import compare_table2
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


def test_table2_without_the_mirror_is_inconclusive(tmp_path):
    for mirror in (None, tmp_path / "absent", tmp_path):
        result = checks.check_table2(mirror)
        assert all(r["source"] == "documented" for r in result["rows"])
        row = data.row_table2(result, "m")
        assert row.verdict == v.INCONCLUSIVE and "0/8 datasets checked against their files" in row.evidence


MIRROR = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"offline mirror {MIRROR} absent")
def test_table2_against_the_mirror_reads_sgemm_and_a_mismatch_fails():
    result = checks.check_table2(MIRROR)
    read = {r["dataset"]: r for r in result["rows"] if r["source"] == "data"}
    assert read["Sgemm"]["data_rows"] == 241_600 and read["Sgemm"]["data_features"] == 14
    assert data.row_table2(result, "m").verdict == v.CONDITIONAL
    broken = {**result, "rows": [{**r, "rows_match": False} if r["dataset"] == "Sgemm" else r
                                 for r in result["rows"]]}
    assert data.row_table2(broken, "m").verdict == v.FAILS
    documented_only = {**result, "rows": [{**r, "rows_match": False} if r["source"] == "documented" else r
                                          for r in result["rows"]]}
    assert data.row_table2(documented_only, "m").verdict == v.CONDITIONAL


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
