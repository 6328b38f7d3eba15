"""The lam paths of the closed-form solvers against one solve per value.

Both routes are backward stable: each solution satisfies its own linear system
to a residual of order the rounding, which is what is asserted first.  Their
forward difference is then bounded by the condition number of the system times
that relative residual, so the coefficients are compared with that factor (at
``lam = 2^-20`` and a wide kernel they may differ by ``1e-6`` relative, mostly
along the constant direction the pairwise loss cannot see, and both are equally right).
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qs3orao.exact import exact_solution, exact_solution_path
from qs3orao.kernels import gaussian_kernel
from qs3orao.quadratic import (GroupMoments, kernel_root, ordinal_pairwise_risk, pnu_risk, samult_risk,
                               solve_feature_space, solve_feature_space_path, solve_kernel_expansion,
                               solve_kernel_expansion_path)
from qs3orao.quadratic import _feature_space_problem, _kernel_expansion_problem

LAMS = 2.0 ** np.arange(-20, 4)


@st.composite
def kernel_problems(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(2 * k + 2, 70))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    X = rng.uniform(size=(n, draw(st.integers(1, 3))))
    codes = np.concatenate([np.arange(k), np.arange(k), rng.integers(-1, k, size=n - 2 * k)])
    weights = [draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(k - 1)]
    risk = draw(st.sampled_from([ordinal_pairwise_risk(k, weights), samult_risk(k - 2, k, weights[-1])]))
    lams = np.array(draw(st.lists(st.sampled_from(list(LAMS)), min_size=1, max_size=6)))
    return X, codes, risk, draw(st.sampled_from([0.3, 3.0, 30.0])), lams


@given(problem=kernel_problems())
@settings(max_examples=40, deadline=None)
def test_kernel_expansion_path_solves_every_system(problem):
    X, codes, risk, gamma, lams = problem
    # a risk with an unlabeled side needs unlabeled rows (both solvers refuse it alike)
    assume(np.any(codes == -1) or not any(-1 in t.upper + t.lower for t in risk.terms))
    K = gaussian_kernel(X, gamma=gamma)
    diag, E, C, g = _kernel_expansion_problem(K, codes, risk)
    HK = (np.diag(diag) + E @ C @ E.T) @ K
    size = np.abs(HK).sum(axis=1).max()
    for lam, path in zip(lams, solve_kernel_expansion_path(K, codes, risk, lams)):
        own = solve_kernel_expansion(K, codes, risk, lam)
        backward = 1e-12
        for c in (path, own):
            residual = np.abs(HK @ c + lam * c + g).max()
            assert residual <= backward * ((size + lam) * np.abs(c).max() + np.abs(g).max())
        condition = np.linalg.cond(HK + lam * np.eye(K.shape[0]), np.inf)
        assert np.abs(path - own).max() <= 4 * backward * condition * (np.abs(own).max() + 1e-300)


def test_kernel_expansion_path_takes_a_given_root_and_checks_lams():
    rng = np.random.default_rng(0)
    X, codes = rng.uniform(size=(40, 2)), np.array([0, 1, 2, -1] * 10)
    K = gaussian_kernel(X, gamma=2.0)
    risk = samult_risk(0, 3, 0.3)
    np.testing.assert_array_equal(solve_kernel_expansion_path(K, codes, risk, [0.5, 2.0], root=kernel_root(K)),
                                  solve_kernel_expansion_path(K, codes, risk, [0.5, 2.0]))
    root = kernel_root(K)
    np.testing.assert_allclose(root @ root, K, atol=1e-12)
    for bad in ([], [0.0], [-1.0, 1.0], [np.nan]):
        with pytest.raises(ValueError, match="lams"):
            solve_kernel_expansion_path(K, codes, risk, bad)


# a negative-weight risk may not be convex at small lam: both routes warn, as they should
@pytest.mark.filterwarnings("ignore:the regularised risk is not convex")
@pytest.mark.parametrize("mix, prior", [(0.0, 0.5), (0.6, 0.3), (-0.5, 0.6), (1.0, 0.9)])
def test_feature_space_path_equals_separate_solves(mix, prior):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(120, 2))
    codes = np.concatenate([[0, 1, 2] * 10, rng.integers(-1, 3, size=90)])
    centres = X[::3]
    features = lambda Z: gaussian_kernel(Z, centres, gamma=3.0)  # noqa: E731
    moments = GroupMoments.accumulate(features, X, codes, centres.shape[0])
    risk = pnu_risk(1, 3, mix, prior)
    path = solve_feature_space_path(moments, risk, LAMS)
    hessian = _feature_space_matrix(moments, risk)
    values = np.linalg.eigvalsh(hessian)
    for lam, alpha in zip(LAMS, path):
        own = solve_feature_space(moments, risk, lam)
        # symmetric system: forward error <= condition number x rounding
        condition = (np.abs(values).max() + lam) / max(np.abs(values + lam).min(), 1e-300)
        np.testing.assert_allclose(alpha, own, rtol=0, atol=1e-13 * condition * np.abs(own).max())


def test_feature_space_path_warns_when_a_system_is_not_definite():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(90, 2))
    codes = np.concatenate([[0, 1] * 10, rng.integers(-1, 2, size=70)])
    moments = GroupMoments.accumulate(lambda Z: gaussian_kernel(Z, X[::2], gamma=5.0), X, codes, 45)
    risk = pnu_risk(0, 2, 1.0, 0.95)  # a large prior: negative weight on L(P, P)
    values = np.linalg.eigvalsh(_feature_space_matrix(moments, risk))
    assert values.min() < -1e-3
    with pytest.warns(RuntimeWarning, match="not convex"):
        solve_feature_space_path(moments, risk, [abs(values.min()) / 2, 10.0])


def _feature_space_matrix(moments, risk):
    return _feature_space_problem(moments, risk)[0]()


@pytest.mark.parametrize("tradeoff", [1.0, [0.0, 0.5, 1.0]])
def test_exact_solution_path_equals_exact_solutions(tradeoff):
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(150, 3))
    y = np.concatenate([[0, 1, 2, 3] * 10, rng.integers(-1, 4, size=110)])
    lams = [2.0 ** -10, 0.125, 1.0, 8.0]
    for lam, path in zip(lams, exact_solution_path(X, y, gamma=2.0, lams=lams, tradeoff=tradeoff)):
        own = exact_solution(X, y, gamma=2.0, lam=lam, tradeoff=tradeoff)
        assert path.lam == lam
        np.testing.assert_allclose(path.train_scores, own.train_scores, rtol=0,
                                   atol=1e-12 * (1 + 16 / lam) * np.abs(own.train_scores).max())
        assert path.objective() == pytest.approx(own.objective(), rel=1e-9, abs=1e-12)
