import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import approx_fprime

from qs3orao.exact import exact_solution, objective_value
from qs3orao.kernels import gaussian_kernel
from qs3orao.objective import ordinal_risk, ordinal_risk_hessian, ordinal_risk_value

from .problems import ordinal_problem


def brute_pairs(FA, FB):
    return np.mean([(1 - a + b) ** 2 for a in FA for b in FB])


def brute_risk(F, codes, tradeoff):
    """The paper's Equations (4)-(9) with the squared loss, as explicit pairwise sums."""
    unl = F[codes == -1]
    total = 0.0
    for j, g in enumerate(tradeoff):
        P, N = F[codes > j], F[(codes >= 0) & (codes <= j)]
        total += g * brute_pairs(P, N)
        if g < 1:
            total += (1 - g) * (brute_pairs(P, unl) + brute_pairs(unl, N) - 0.5)
    return total / tradeoff.size


@st.composite
def risk_inputs(draw):
    k = draw(st.integers(2, 4))
    n_lab = draw(st.integers(k, 12))
    n_unl = draw(st.integers(1, 8))
    codes = np.concatenate([np.arange(k), draw(arrays(np.int64, n_lab - k, elements=st.integers(0, k - 1))),
                            np.full(n_unl, -1)])
    F = draw(arrays(np.float64, codes.size, elements=st.floats(-3, 3)))
    tradeoff = draw(arrays(np.float64, k - 1, elements=st.floats(0, 1)))
    return F, codes, tradeoff


@given(risk_inputs())
def test_closed_form_risk_equals_brute_force_pairwise_sums(inputs):
    F, codes, tradeoff = inputs
    assert ordinal_risk(F, codes, tradeoff)[0] == pytest.approx(brute_risk(F, codes, tradeoff), rel=1e-10, abs=1e-10)


@given(risk_inputs(), st.lists(st.sampled_from([0.0, 0.4, 1.0]), min_size=1, max_size=4))
def test_score_columns_are_risks_of_their_own(inputs, weights):
    """S columns with their own split weights (as in QS3ORAO.fit_path) give each column its own risk and gradient."""
    F, codes, tradeoff = inputs
    columns = np.stack([F * (1 + s) for s in range(len(weights))], axis=1)
    tradeoffs = np.stack([np.full(tradeoff.size, w) if w != 0.4 else tradeoff for w in weights], axis=1)
    values, grads = ordinal_risk(columns, codes, tradeoffs)
    for s in range(len(weights)):
        value, grad = ordinal_risk(columns[:, s], codes, tradeoffs[:, s])
        assert values[s] == pytest.approx(value, rel=1e-14, abs=1e-14)
        np.testing.assert_allclose(grads[:, s], grad, rtol=1e-14, atol=1e-14)


@given(risk_inputs(), st.lists(st.sampled_from([0.0, 0.4, 1.0]), min_size=1, max_size=4), st.booleans())
def test_risk_value_alone_is_the_risks_value_bit_for_bit(inputs, weights, unlabeled):
    """ordinal_risk_value (each set's moments once; the warnings and the stopping rule read it) is ordinal_risk's
    value exactly, for one column and for several with their own weights, with and without unlabeled rows."""
    F, codes, tradeoff = inputs
    if not unlabeled:
        F, codes = F[codes >= 0], codes[codes >= 0]
    assert ordinal_risk_value(F, codes, tradeoff) == ordinal_risk(F, codes, tradeoff)[0]
    columns = np.stack([F * (1 + s) for s in range(len(weights))], axis=1)
    tradeoffs = np.stack([np.full(tradeoff.size, w) if w != 0.4 else tradeoff for w in weights], axis=1)
    np.testing.assert_array_equal(ordinal_risk_value(columns, codes, tradeoffs),
                                  ordinal_risk(columns, codes, tradeoffs)[0])


@given(risk_inputs())
def test_risk_gradient_matches_finite_differences(inputs):
    F, codes, tradeoff = inputs
    _, grad = ordinal_risk(F, codes, tradeoff)
    numeric = approx_fprime(F, lambda v: brute_risk(v, codes, tradeoff), 1e-6)
    np.testing.assert_allclose(grad, numeric, atol=1e-4)


@given(risk_inputs())
def test_hessian_is_the_derivative_of_the_gradient(inputs):
    F, codes, tradeoff = inputs
    H = ordinal_risk_hessian(codes, tradeoff)
    g0 = ordinal_risk(F, codes, tradeoff)[1]
    step = np.random.default_rng(0).normal(size=F.size)
    # The risk is quadratic, so the gradient is exactly affine in F.
    np.testing.assert_allclose(ordinal_risk(F + step, codes, tradeoff)[1] - g0, H @ step, atol=1e-9)


def test_functional_gradient_vanishes_at_the_exact_solution():
    X, y, _ = ordinal_problem(n=150, n_labeled=50)
    sol = exact_solution(X, y, gamma=2.0, lam=0.3, tradeoff=[0.2, 0.5, 0.9])
    _, grad = ordinal_risk(sol.train_scores, sol.codes, sol.tradeoff)
    # grad L = sum_i (dR/dF_i + lam c_i) k(x_i, .): every coefficient must vanish.
    np.testing.assert_allclose(grad + sol.lam * sol.coef, 0.0, atol=1e-10)


def test_exact_solution_minimises_the_objective():
    X, y, _ = ordinal_problem(n=120, n_labeled=40)
    sol = exact_solution(X, y, gamma=1.0, lam=0.5, tradeoff=0.5)
    best = sol.objective()
    rng = np.random.default_rng(0)
    for _ in range(20):
        other = sol.coef + 0.01 * rng.normal(size=sol.coef.size)
        assert objective_value(other, sol.kernel, sol.codes, sol.tradeoff, sol.lam) > best
    X_new = rng.uniform(size=(5, X.shape[1]))
    np.testing.assert_allclose(sol.decision_function(X_new), gaussian_kernel(X_new, X, gamma=1.0) @ sol.coef)
