"""The closed-form risks against brute-force pairwise sums and finite differences."""

import numpy as np
import pytest
from scipy.optimize import check_grad

from qs3orao.quadratic import (PairwiseRisk, ordinal_pairwise_risk, pnu_risk, rows_in, samult_risk,
                               solve_kernel_expansion)
from qs3orao.objective import ordinal_risk as core_ordinal_risk


def brute_pair(F, codes, upper, lower):
    a, b = F[rows_in(codes, upper)], F[rows_in(codes, lower)]
    return np.mean([(1 - fa + fb) ** 2 for fa in a for fb in b])


def brute_risk(risk, F, codes):
    return risk.offset + sum(t.weight * brute_pair(F, codes, t.upper, t.lower) for t in risk.terms)


@pytest.fixture
def scores():
    rng = np.random.default_rng(3)
    codes = np.array([0, 1, 2, 3, -1] * 6)
    rng.shuffle(codes)
    return rng.normal(size=codes.size), codes


def test_pnu_pu_risk_is_the_pairwise_average(scores):
    F, codes = scores
    prior = 0.4
    risk = pnu_risk(1, 4, 0.7, prior)
    pos, neg, unl = rows_in(codes, (2, 3)), rows_in(codes, (0, 1)), codes == -1
    pn = np.mean([(1 - a + b) ** 2 for a in F[pos] for b in F[neg]])
    pu = np.mean([(1 - a + b) ** 2 for a in F[pos] for b in F[unl]])
    pp = np.mean([(1 - a + b) ** 2 for a in F[pos] for b in F[pos]])
    expected = 0.3 * pn + 0.7 * (pu - prior * pp) / (1 - prior)
    assert risk.value(F, codes)[0] == pytest.approx(expected, rel=1e-12)


def test_pnu_nu_risk_is_the_pairwise_average(scores):
    F, codes = scores
    prior = 0.7
    risk = pnu_risk(2, 4, -0.4, prior)
    pos, neg, unl = codes == 3, rows_in(codes, (0, 1, 2)), codes == -1
    pn = np.mean([(1 - a + b) ** 2 for a in F[pos] for b in F[neg]])
    un = np.mean([(1 - a + b) ** 2 for a in F[unl] for b in F[neg]])
    nn = np.mean([(1 - a + b) ** 2 for a in F[neg] for b in F[neg]])
    expected = 0.6 * pn + 0.4 * (un - (1 - prior) * nn) / prior
    assert risk.value(F, codes)[0] == pytest.approx(expected, rel=1e-12)


def test_samult_risk_is_the_pairwise_average(scores):
    F, codes = scores
    risk = samult_risk(0, 4, 0.25)
    pos, neg, unl = codes > 0, codes == 0, codes == -1
    pairs = lambda A, B: np.mean([(1 - a + b) ** 2 for a in F[A] for b in F[B]])  # noqa: E731
    expected = 0.25 * pairs(pos, neg) + 0.75 * (pairs(pos, unl) + pairs(unl, neg) - 0.5)
    assert risk.value(F, codes)[0] == pytest.approx(expected, rel=1e-12)


def test_ordinal_risk_equals_the_core_objective(scores):
    F, codes = scores
    tradeoff = np.array([0.0, 0.3, 1.0])
    ours, grad = ordinal_pairwise_risk(4, tradeoff).value(F, codes)
    core, core_grad = core_ordinal_risk(F, codes, tradeoff)
    assert ours == pytest.approx(core, rel=1e-12)
    np.testing.assert_allclose(grad, core_grad, atol=1e-14)
    assert ours == pytest.approx(brute_risk(ordinal_pairwise_risk(4, tradeoff), F, codes), rel=1e-12)


@pytest.mark.parametrize("risk", [pnu_risk(1, 4, 0.6, 0.3), pnu_risk(0, 4, -1.0, 0.8), samult_risk(2, 4, 0.1),
                                  ordinal_pairwise_risk(4, np.array([0.2, 0.5, 0.9]))])
def test_gradient_matches_finite_differences(scores, risk):
    F, codes = scores
    error = check_grad(lambda f: risk.value(f, codes)[0], lambda f: risk.value(f, codes)[1], F)
    assert error < 1e-6


@pytest.mark.parametrize("risk", [pnu_risk(1, 4, 0.6, 0.3), samult_risk(2, 4, 0.1),
                                  ordinal_pairwise_risk(4, np.array([0.2, 0.5, 0.9]))])
def test_quadratic_form_reproduces_the_risk(scores, risk):
    F, codes = scores
    counts = {int(a): int(np.sum(codes == a)) for a in np.unique(codes)}
    form = risk.quadratic(counts)
    E = np.stack([rows_in(codes, g) for g in form.groups], axis=1).astype(float)
    H = np.diag(form.per_row(form.diag, codes)) + E @ form.coupling @ E.T
    g = form.per_row(form.grad, codes)
    assert 0.5 * F @ H @ F + g @ F + form.constant == pytest.approx(risk.value(F, codes)[0], rel=1e-12)


def test_pair_term_without_rows_is_rejected():
    with pytest.raises(ValueError, match="rows on both sides"):
        samult_risk(0, 2, 0.5).quadratic({0: 3, 1: 2})


def test_risks_add_and_scale(scores):
    F, codes = scores
    a, b = samult_risk(0, 4, 0.3), pnu_risk(1, 4, 0.5, 0.5)
    total = (a + b).scaled(0.5)
    assert total.value(F, codes)[0] == pytest.approx(0.5 * (a.value(F, codes)[0] + b.value(F, codes)[0]))
    assert isinstance(total, PairwiseRisk)


def dense_system(K, codes, risk, lam):
    """``(H K + lam I)`` and ``-g``, ``H`` and ``g`` from the pairwise gradient (``risk.value``), not the quadratic form."""
    n = codes.size
    g = risk.value(np.zeros(n), codes)[1]
    H = np.array([risk.value(e, codes)[1] - g for e in np.eye(n)]).T
    return H @ K + lam * np.eye(n), -g


@pytest.mark.parametrize("tradeoff", [0.0, 0.4, 1.0])  # 1.0: the unlabeled rows weigh nothing (d = 0 there)
@pytest.mark.parametrize("lam", [2.0 ** -20, 2.0 ** -4, 8.0])
@pytest.mark.parametrize("make_risk", [lambda t: ordinal_pairwise_risk(4, np.full(3, t)), lambda t: samult_risk(2, 4, t),
                                       lambda t: pnu_risk(1, 4, 0.9, 0.7)])  # pnu: negative d, the LU route
def test_kernel_expansion_solve_is_backward_stable(tradeoff, lam, make_risk):
    rng = np.random.default_rng(5)
    codes = np.array([0, 1, 2, 3, -1, -1] * 8)
    X = rng.normal(size=(codes.size, 2))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(axis=-1))
    risk = make_risk(tradeoff)
    A, rhs = dense_system(K, codes, risk, lam)
    expected = np.linalg.solve(A, rhs)
    work = np.full_like(K, np.nan)  # the work array is overwritten, never read
    coef = solve_kernel_expansion(K, codes, risk, lam, system=work)
    # Backward stable: a normwise backward error ||A c - rhs|| / (||A||_F ||c||) of at most the unit roundoff.
    # Measured on 10 such problems, these 27 cases: at most 0.41 u (np.linalg.solve's: 0.29 u); without the step of
    # iterative refinement, up to 4.2 u (2.6 u on this problem, the ordinal risk at lam = 2^-20).
    backward_error = np.linalg.norm(A @ coef - rhs) / (np.linalg.norm(A) * np.linalg.norm(coef))
    assert backward_error <= np.finfo(np.float64).eps
    # Scores agree to the system's conditioning times the rounding.
    bound = 1e-14 * np.linalg.cond(A) * np.abs(K @ expected).max()
    np.testing.assert_allclose(K @ coef, K @ expected, rtol=0, atol=max(bound, 1e-13))


class RowsAndProducts:
    """A kernel matrix offered only as ``shape``, row blocks and products, in row chunks of 5."""

    def __init__(self, K):
        self._K, self.shape = K, K.shape

    def __getitem__(self, rows):
        return self._K[rows].copy()

    def __matmul__(self, M):
        return np.concatenate([self._K[start:start + 5] @ M for start in range(0, self.shape[0], 5)])


@pytest.mark.parametrize("make_risk", [lambda: samult_risk(1, 3, 0.5), lambda: samult_risk(1, 3, 1.0),
                                       lambda: pnu_risk(1, 3, 0.9, 0.7)])  # every row weighed, some idle, the LU route
def test_a_kernel_given_by_rows_and_products_gives_the_dense_kernels_solution(make_risk):
    codes = np.array([0, 1, 2, -1, -1] * 6)
    X = np.random.default_rng(4).normal(size=(codes.size, 2))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(axis=-1))
    dense = solve_kernel_expansion(K, codes, make_risk(), 0.1)
    by_rows = solve_kernel_expansion(RowsAndProducts(K), codes, make_risk(), 0.1)
    np.testing.assert_allclose(by_rows, dense, rtol=0, atol=1e-12 * np.abs(dense).max())


def test_the_cholesky_route_factorises_only_the_weighed_rows():
    from unittest import mock

    from scipy import linalg

    codes = np.array([0, 1, 2, -1, -1] * 4)
    K = np.exp(-np.subtract.outer(np.arange(20.0), np.arange(20.0)) ** 2 / 50)
    factorised = []
    cholesky, lu = linalg.cho_factor, linalg.lu_factor
    with mock.patch.object(linalg, "cho_factor", lambda a, **kw: factorised.append(("cholesky", a.shape)) or
                           cholesky(a, **kw)), \
            mock.patch.object(linalg, "lu_factor", lambda a, **kw: factorised.append(("lu", a.shape)) or lu(a, **kw)):
        solve_kernel_expansion(K, codes, ordinal_pairwise_risk(3, np.ones(2)), 0.5)
        solve_kernel_expansion(K, codes, ordinal_pairwise_risk(3, np.full(2, 0.5)), 0.5)
        solve_kernel_expansion(K, codes, pnu_risk(1, 3, 1.0, 0.9), 0.5)
    # tradeoff 1: the 12 labeled rows; 0.5: all 20; each with an LU of the low-rank part's small system
    # (one row and column per group); PNU with a large prior (negative d): one LU of the whole system.
    assert [f for f in factorised if f[1][0] > 10] == [("cholesky", (12, 12)), ("cholesky", (20, 20)), ("lu", (20, 20))]
