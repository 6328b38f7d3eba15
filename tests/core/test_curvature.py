"""The data-based curvature bound behind step_offset="auto-data"."""

import math

import numpy as np
import pytest

from qs3orao import QS3ORAO
from qs3orao.curvature import data_curvature_bound, sampled_risk_hessian, top_curvature
from qs3orao.kernels import curvature_rng, gaussian_kernel
from qs3orao.objective import ordinal_risk_hessian, split_members
from qs3orao.schedule import AUTO_DATA, auto_step_offset, contracting_offset, curvature_bound, resolve_step_offset
from qs3orao.stochastic import draw_rows
from qs3study.theory.convergence import largest_curvature, make_problem


def _data(n_labeled=24, n_unlabeled=36, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_labeled + n_unlabeled, 2))
    codes = np.r_[np.arange(n_labeled) % n_classes, np.full(n_unlabeled, -1)]
    return X, codes, np.full(n_classes - 1, 0.4)


def _exact_curvature(X, codes, tradeoff, gamma):
    """The full risk's largest curvature: eigenvalues of K H by a general (non-symmetric) eigensolver."""
    values = np.linalg.eigvals(gaussian_kernel(X, gamma=gamma) @ ordinal_risk_hessian(codes, tradeoff))
    return float(values.real.max())


def _brute_force_estimate(X, codes, tradeoff, gamma, n_draws, seed):
    """lambda_max of the mean of the sampled risks' Hessians, from the Gram matrix of its rank-one terms.

    The mean is ``sum_t w_t d_t (x) d_t`` with ``d_t = k(b_t, .) - k(a_t, .)``; its nonzero eigenvalues are those
    of ``G_{tt'} = sqrt(w_t w_t') <d_t, d_t'>``, the inner products written out from the kernel.
    """
    rng = curvature_rng(seed)
    splits, unlabeled = split_members(codes, tradeoff.size)
    terms = []
    for _ in range(n_draws):
        for (p, n, u), weight in zip(draw_rows(rng, splits, unlabeled, tradeoff, 1), tradeoff):
            terms.append((int(p[0]), int(n[0]), weight))
            if weight < 1.0 and u.size:
                terms += [(int(p[0]), int(u[0]), 1.0 - weight), (int(u[0]), int(n[0]), 1.0 - weight)]
    scale = 2.0 / (tradeoff.size * n_draws)

    def k(i, j):
        return math.exp(-gamma * float(np.sum((X[i] - X[j]) ** 2)))

    G = np.empty((len(terms), len(terms)))
    for s, (a, b, w) in enumerate(terms):
        for t, (c, d, v) in enumerate(terms):
            G[s, t] = scale * math.sqrt(w * v) * (k(b, d) - k(b, c) - k(a, d) + k(a, c))
    return float(np.linalg.eigvalsh(G)[-1])


def test_the_estimate_is_the_exact_top_eigenvalue_of_the_sampled_mean():
    X, codes, tradeoff = _data()
    for seed, n_draws in [(0, 5), (3, 12)]:
        result = data_curvature_bound(X, codes, tradeoff, gamma=0.7, n_draws=n_draws, random_state=seed)
        assert result.estimate == pytest.approx(_brute_force_estimate(X, codes, tradeoff, 0.7, n_draws, seed),
                                                rel=1e-9)


def test_top_curvature_matches_a_general_eigensolver_on_the_full_risk():
    X, codes, tradeoff = _data(seed=1)
    H = ordinal_risk_hessian(codes, tradeoff)
    assert top_curvature(gaussian_kernel(X, gamma=1.3), H) == pytest.approx(
        _exact_curvature(X, codes, tradeoff, 1.3), rel=1e-9)


@pytest.mark.slow
def test_the_sampled_risks_average_to_the_full_risk():
    """E S(xi) = H: the premise of the bound (the draws are the paper's single-sample step)."""
    X, codes, tradeoff = _data(n_labeled=6, n_unlabeled=4, seed=2)
    rows, hessian = sampled_risk_hessian(codes, tradeoff, 40000, np.random.default_rng(0))
    full = np.zeros((codes.size, codes.size))
    full[np.ix_(rows, rows)] = hessian
    H = ordinal_risk_hessian(codes, tradeoff)
    assert np.abs(full - H).max() < 0.03 * np.abs(H).max()


def test_the_estimate_converges_to_the_exact_curvature():
    problem = make_problem(n_labeled=30, n_unlabeled=50, n_classes=3, n_features=2, gamma=2.0, tradeoff=0.5,
                           seed=0, lam=1.0)
    h = largest_curvature(problem)
    result = data_curvature_bound(problem.X, problem.codes, problem.tradeoff, gamma=2.0, n_draws=4000)
    assert abs(result.estimate - h) < 0.05 * h


@pytest.mark.slow
def test_the_bound_holds_with_the_stated_probability_and_the_margin_is_what_makes_it_hold():
    """Over 200 seeds the bound is below the exact curvature in at most a delta share of them; the estimate
    alone (no McDiarmid margin) falls below it in some, so the check could fail."""
    delta, n_draws = 0.05, 16
    estimates_below, bounds_below = 0, 0
    for data_seed in range(4):
        X, codes, tradeoff = _data(seed=data_seed)
        h = _exact_curvature(X, codes, tradeoff, 1.0)
        for seed in range(50):
            result = data_curvature_bound(X, codes, tradeoff, gamma=1.0, n_draws=n_draws, delta=delta,
                                          random_state=seed)
            assert result.deviation == pytest.approx(curvature_bound(tradeoff) * math.sqrt(math.log(1 / delta)
                                                                                          / (2 * n_draws)))
            estimates_below += result.estimate < h
            bounds_below += result.bound < h
    assert bounds_below <= delta * 200
    assert estimates_below > 0


def test_deterministic_given_random_state():
    X, codes, tradeoff = _data()
    first = data_curvature_bound(X, codes, tradeoff, gamma=1.0, n_draws=20, random_state=7)
    assert data_curvature_bound(X, codes, tradeoff, gamma=1.0, n_draws=20, random_state=7) == first
    assert data_curvature_bound(X, codes, tradeoff, gamma=1.0, n_draws=20, random_state=8).estimate != first.estimate


def test_the_offset_is_at_most_the_data_free_one_and_smaller_on_the_study_instances():
    """h <= h_bar always, and the bound is capped there: the data-based t0 never exceeds "auto"'s."""
    for seed in range(5):
        X, codes, tradeoff = _data(seed=seed)
        for n_draws in (1, 4, 256):  # one draw: the margin alone exceeds h_bar, the cap applies
            bound = data_curvature_bound(X, codes, tradeoff, gamma=0.2, n_draws=n_draws, random_state=seed).bound
            assert bound <= curvature_bound(tradeoff)
            for lam in (1 / 32, 0.5, 8.0):
                for product in (0.5, 1.5, 8.0):
                    assert (contracting_offset(product / lam, lam, bound)
                            <= auto_step_offset(product / lam, lam, tradeoff))
    problem = make_problem(n_labeled=50, n_unlabeled=150, n_classes=4, n_features=3, gamma=1.0, tradeoff=0.3,
                           seed=1, lam=1 / 32)
    bound = data_curvature_bound(problem.X, problem.codes, problem.tradeoff, gamma=1.0).bound
    assert bound >= largest_curvature(problem)
    assert contracting_offset(256.0, 1 / 32, bound) < auto_step_offset(256.0, 1 / 32, problem.tradeoff) / 3


def _fit_data():
    X, codes, _ = _data(n_labeled=30, n_unlabeled=30)
    return X, np.where(codes >= 0, codes, -1)


def test_qs3orao_resolves_auto_data_from_its_rows_and_seed():
    X, y = _fit_data()
    model = QS3ORAO(n_iter=20, lam=0.05, gamma=0.5, step_offset="auto-data", random_state=3).fit(X, y)
    codes = y  # classes 0..2 are their own codes
    bound = data_curvature_bound(X, codes, model.tradeoff_, gamma=0.5, random_state=3).bound
    assert model.step_offset_ == contracting_offset(model.theta_, 0.05, bound)
    assert model.step_offset_ < auto_step_offset(model.theta_, 0.05, model.tradeoff_)
    again = QS3ORAO(n_iter=20, lam=0.05, gamma=0.5, step_offset="auto-data", random_state=3).fit(X, y)
    np.testing.assert_array_equal(again.train_scores_, model.train_scores_)
    path = QS3ORAO(n_iter=20, lam=0.05, gamma=0.5, step_offset="auto-data", random_state=3).fit_path(
        X, y, [{"lam": 0.05}, {"lam": 0.5}])
    assert path[0].step_offset_ == model.step_offset_ and path[1].step_offset_ < path[0].step_offset_


@pytest.mark.parametrize("value", ["auto_data", "Auto-Data", "data"])
def test_a_misspelt_named_offset_is_refused(value):
    X, y = _fit_data()
    with pytest.raises(ValueError, match="step_offset.*'auto-data'"):
        QS3ORAO(n_iter=5, step_offset=value).fit(X, y)


def test_auto_data_needs_the_data():
    with pytest.raises(ValueError, match="auto-data.*data_curvature"):
        resolve_step_offset(AUTO_DATA, theta=1.0, lam=1.0, tradeoff=[0.5])


@pytest.mark.parametrize("change, error, message", [
    (dict(delta=0.0), ValueError, "delta"), (dict(delta=1.0), ValueError, "delta"),
    (dict(delta=float("nan")), ValueError, "delta"), (dict(delta=True), ValueError, "delta"),
    (dict(n_draws=0), ValueError, "n_draws"), (dict(n_draws=2.5), TypeError, "n_draws"),
    (dict(gamma=0.0), ValueError, "gamma"), (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(random_state=-1), ValueError, "random_state"), (dict(random_state=None), ValueError, "random_state"),
    (dict(tradeoff=[0.5, 1.5]), ValueError, "tradeoff"), (dict(tradeoff=[]), ValueError, "tradeoff"),
    (dict(codes=np.zeros(5, dtype=int)), ValueError, "codes"), (dict(codes=np.full(60, 0.5)), ValueError, "codes"),
    (dict(codes=np.r_[np.full(20, 0), np.full(20, 1), np.full(20, -1)]), ValueError, "split 1"),
    (dict(codes=np.r_[np.full(30, 0), np.full(30, 2)]), ValueError, "unlabeled"),
    (dict(X=np.full((60, 2), np.nan)), ValueError, "X"),
])
def test_bad_arguments_are_named(change, error, message):
    X, codes, tradeoff = _data()
    arguments = dict(X=X, codes=codes, tradeoff=tradeoff, gamma=1.0, n_draws=8, delta=0.01, random_state=0)
    arguments.update(change)
    with pytest.raises(error, match=message):
        data_curvature_bound(arguments.pop("X"), arguments.pop("codes"), arguments.pop("tradeoff"), **arguments)
