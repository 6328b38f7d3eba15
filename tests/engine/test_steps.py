"""The compiled steps (step_backend="numba") against the numpy steps, and how the choice is made and refused."""

import sys
from functools import partial
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines.converged import ConvergedQS3ORAO
from qs3orao import QS3ORAO, engine
from qs3orao.divergence import DivergenceError
from qs3orao.engine import path, plan, resolve_step_backend, train, train_path
from qs3orao.engine.threads import RowThreads
from qs3orao.stochastic import weights_at_rows

from .problems import make_problem


@pytest.mark.requires_numba
@given(st.integers(1, 5), st.integers(1, 40), st.data())
@settings(max_examples=80, deadline=None)
def test_compiled_weights_equal_the_numpy_weights(splits, batch, data):
    from qs3orao.engine._steps_numba import weights_into  # imports numba

    semi = np.array(sorted(data.draw(st.sets(st.integers(0, splits - 1)))), dtype=np.int64)
    tradeoff = np.array(data.draw(st.lists(st.floats(0, 1), min_size=splits, max_size=splits)))
    tradeoff[semi] = np.minimum(tradeoff[semi], 0.99)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    f = rng.normal(size=(2 * splits + semi.size) * batch) * 10.0 ** data.draw(st.integers(-5, 5))
    out = np.empty_like(f)
    weights_into(f, semi, tradeoff, out)
    expected = weights_at_rows(f, semi, tradeoff)
    # Only the batch means are summed in another order.
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14 * (np.abs(f).max() + 1.0))


def fit_both(n=2000, d=4, k=5, n_iter=300, tradeoff=(0.3, 1.0, 0.0, 0.8), **params):
    X, codes = make_problem(n, d, k, n // 4, seed=3)
    params = {**dict(n_iter=n_iter, batch_size=6, n_components=4, gamma=1.0, lam=0.5, theta=3.0, seed=7), **params}
    return [train(X, codes, np.array(tradeoff), **params, step_backend=backend) for backend in ("numpy", "numba")]


# A small work budget forces the sparse plan, where the group's rows are a local copy of their scores.
@pytest.mark.requires_numba
@pytest.mark.parametrize("max_memory", [256 * 2**20, 2**15])
# float32: the group's products are float32 sums in another order; the engine's stated float32 error is
# about 1e-7 of the score scale per feature (test_float32_stays_within_its_stated_tolerance uses 1e-5 too).
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_compiled_steps_give_the_numpy_fit(max_memory, dtype, rtol):
    (plain, scores_plain), (compiled, scores_compiled) = fit_both(max_memory=max_memory, dtype=dtype)
    assert engine.group_plan(2000, 6 * 11, 4, np.dtype(dtype).itemsize, max_memory)[0] == (max_memory > 2**20)
    np.testing.assert_allclose(compiled.coef, plain.coef, rtol=0, atol=rtol * np.abs(plain.coef).max())
    np.testing.assert_allclose(scores_compiled, scores_plain, rtol=0, atol=rtol * np.abs(scores_plain).max())


@pytest.mark.requires_numba
def test_a_vanishing_scale_is_folded_as_the_numpy_steps_fold_it():
    # theta * lam = 6 with t0 = 0 makes 1 - eta_6 lam exactly 0 at step 6, inside the first group:
    # the five coefficients before it are folded to 0, step 6's own is not.
    (plain, scores_plain), (compiled, scores_compiled) = fit_both(lam=2.0, theta=3.0, n_iter=40)
    assert np.all(plain.coef[:5] == 0.0) and np.all(np.any(plain.coef[5:] != 0.0, axis=1))
    np.testing.assert_array_equal(compiled.coef[:5], 0.0)
    np.testing.assert_allclose(compiled.coef, plain.coef, rtol=0, atol=1e-12 * np.abs(plain.coef).max())
    np.testing.assert_allclose(scores_compiled, scores_plain, rtol=0, atol=1e-12 * np.abs(scores_plain).max())


@pytest.mark.requires_numba
def test_compiled_steps_raise_the_divergence_the_numpy_steps_raise():
    raised = []
    for backend in ("numpy", "numba"):
        X, codes = make_problem(400, 3, 3, 150, seed=0)
        with pytest.raises(DivergenceError) as error:
            train(X, codes, np.array([0.5, 0.5]), n_iter=400, batch_size=4, n_components=4, gamma=1.0, lam=1e-3,
                  theta=2000.0, seed=0, step_backend=backend)
        raised.append(error.value)
    assert raised[0].iteration == raised[1].iteration < 400
    assert str(raised[0]) == str(raised[1])


@pytest.mark.requires_numba
def test_compiled_steps_say_when_their_guard_and_the_engines_disagree():
    # The loop stops at a score beyond the limit; a guard that lets it pass is a bug, not a reason to go on.
    cos_s, sin_s = np.ones((8, 4)), np.zeros((8, 4))
    scores = np.full(8, np.nan)
    with pytest.raises(RuntimeError, match="pass the guard"):
        resolve_step_backend("numba")(cos_s, sin_s, (np.zeros((1, 2), dtype=np.int64), np.array([], dtype=np.int64)),
                                      scores, np.arange(8), np.zeros((1, 8)), scores, 0, 1.0,
                                      tradeoff=np.array([1.0]), theta=1.0, lam=1.0, step_offset=0.0,
                                      guard=lambda f, iteration: None)


@pytest.mark.requires_numba
def test_same_seed_gives_bit_identical_compiled_fits():
    (_, _), (a, scores_a) = fit_both()
    (_, _), (b, scores_b) = fit_both()
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(scores_a, scores_b)


@pytest.mark.requires_numba
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_converged_fit_stops_where_the_numpy_steps_stop():
    X, codes = make_problem(1500, 5, 4, 400, seed=4)
    fits = [ConvergedQS3ORAO(n_iter=250, max_iter=4000, n_components=4, gamma=0.5, lam=2.0**-8, tol=0.01,
                             step_backend=backend, random_state=0).fit(X, codes)
            for backend in ("numpy", "numba")]
    assert fits[0].n_iter_ == fits[1].n_iter_
    assert [h[0] for h in fits[0].history_] == [h[0] for h in fits[1].history_]
    np.testing.assert_allclose(fits[1].train_scores_, fits[0].train_scores_, rtol=0,
                               atol=1e-12 * np.abs(fits[0].train_scores_).max())
    np.testing.assert_array_equal(fits[1].predict(X), fits[0].predict(X))


def test_an_unknown_step_backend_is_refused():
    X, codes = make_problem(200, 3, 3, 60, seed=0)
    for bad in ("auto", "NUMBA", None):
        with pytest.raises(ValueError, match="step_backend must be one of"):
            QS3ORAO(n_iter=5, step_backend=bad).fit(X, codes)
        with pytest.raises(ValueError, match="step_backend must be one of"):
            train(X, codes, np.array([0.5, 0.5]), n_iter=5, batch_size=2, n_components=2, gamma=1.0, lam=1.0,
                  theta=1.0, seed=0, step_backend=bad)


def test_numba_steps_without_numba_raise_and_say_how_to_get_it():
    X, codes = make_problem(200, 3, 3, 60, seed=0)
    with mock.patch.dict(sys.modules, {"qs3orao.engine._steps_numba": None}):
        with pytest.raises(ImportError, match=r"step_backend='numba' needs numba.*qs3orao\[fast\]"):
            QS3ORAO(n_iter=5, step_backend="numba").fit(X, codes)
        with pytest.raises(ImportError, match=r"step_backend='numba' needs numba"):
            QS3ORAO(n_iter=5, step_backend="numba").fit_path(X, codes, [dict(lam=0.5), dict(lam=1.0)])
        assert QS3ORAO(n_iter=5, step_backend="numpy", random_state=0).fit(X, codes).n_iter_ == 5


# The sparse plan (small budget) reads the base scores at the steps' rows among all rows, the features among the group's.
@pytest.mark.requires_numba
@pytest.mark.parametrize("max_memory", [256 * 2**20, 2**17])
def test_compiled_path_steps_give_the_numpy_path(max_memory):
    X, codes = make_problem(2000, 4, 5, 500, seed=5)
    tradeoffs = np.array([[0.3, 1.0, 0.0, 0.8], [1.0] * 4, [0.0] * 4, [0.5, 1.0, 0.0, 0.8], [1.0] * 4])
    params = dict(lams=[0.5, 2.0, 0.125, 1.0, 1e-3], thetas=[3.0, 0.75, 12.0, 1.5, 1500.0],
                  step_offsets=[0.0, 5.0, 100.0, 0.0, 0.0], n_iter=300, batch_size=6, n_components=4, gamma=1.0,
                  seed=7, max_memory=max_memory)
    (plain, scores_plain), (compiled, scores_compiled) = [
        train_path(X, codes, tradeoffs, **params, step_backend=backend) for backend in ("numpy", "numba")]
    assert engine.group_plan(2000, 6 * 12, 4, 8, max_memory)[0] == (max_memory > 2**20)
    assert isinstance(plain[4], DivergenceError) and str(compiled[4]) == str(plain[4])
    for g in range(4):
        scale = np.abs(scores_plain[:, g]).max()
        np.testing.assert_allclose(compiled[g].coef, plain[g].coef, rtol=0, atol=1e-12 * np.abs(plain[g].coef).max())
        np.testing.assert_allclose(scores_compiled[:, g], scores_plain[:, g], rtol=0, atol=1e-12 * scale)


@pytest.mark.requires_numba
def test_compiled_path_steps_say_when_their_guard_and_the_engines_disagree():
    state = path._PathState(np.ones(1), np.ones(1), np.zeros(1), np.ones((1, 1)), n_iter=1,
                              unread=np.zeros((1, 2), dtype=bool))
    state.guard = lambda *args, **kwargs: None
    base = np.full((1, 8), np.nan)
    draws = (np.zeros((1, 2), dtype=np.int64), np.array([], dtype=np.int64))
    with pytest.raises(RuntimeError, match="pass the guard"), RowThreads(1) as rows:
        resolve_step_backend("numba", path=True)(np.ones((8, 4)), np.zeros((8, 4)), draws, np.arange(8),
                                                 np.zeros((1, 1, 8)), base, 0, state, dense=True, rows=rows)


def path_steps(backend, cos_s, sin_s, draws, base, tradeoffs, n_jobs=1):
    """One group of :func:`engine.train_path`'s steps from ``base``, dense: ``(coef, scores, state)``.

    ``draws`` are the rows of two splits, the unlabeled rows of both among them.
    """
    n_settings, steps, batch = tradeoffs.shape[0], draws[0].shape[0], draws[0].shape[1] // 6
    state = path._PathState(np.linspace(0.1, 1.0, n_settings), np.linspace(1.0, 3.0, n_settings),
                              np.zeros(n_settings), tradeoffs, n_iter=steps,
                              unread=path._unread_rows(tradeoffs, batch))
    coef, scores = np.zeros((n_settings, steps, cos_s.shape[1] // steps * 2)), base.copy()
    with RowThreads(n_jobs) as rows:
        resolve_step_backend(backend, path=True)(cos_s, sin_s, draws, np.arange(base.shape[1]), coef, scores, 0,
                                                 state, dense=True, rows=rows)
    return coef, scores, state


# With threads, the settings are split into one chunk per thread, taken in parallel: every value must be the one
# loop's over all settings, bit for bit, a setting diverging in a chunk on the pool included.
@pytest.mark.requires_numba
def test_compiled_path_steps_in_chunks_on_threads_give_the_one_loop_bit_for_bit():
    rng = np.random.default_rng(3)
    n, m, steps, batch = 60, 2, 3, 3
    cos_s, sin_s = rng.standard_normal((2, n, steps * m))
    # Settings 0-4 weigh the unlabeled rows of both splits, settings 5-7 none (weight zero on those drawn).
    draws = (rng.integers(0, n, (steps, 6 * batch)), np.array([0, 1]))
    tradeoffs = np.vstack([rng.uniform(0, 0.9, (5, 2)), np.ones((3, 2))])
    base = rng.standard_normal((8, n)) * 0.1
    base[7] = 1e151  # setting 7, in the second chunk on two threads, diverges at its first step
    run = partial(path_steps, "numba", cos_s, sin_s, draws, base, tradeoffs)

    (coef_one, scores_one, one), (coef_two, scores_two, two) = run(n_jobs=1), run(n_jobs=2)
    assert isinstance(one.errors[7], DivergenceError) and str(two.errors[7]) == str(one.errors[7])
    assert [e is None for e in two.errors] == [e is None for e in one.errors] == [True] * 7 + [False]
    for got, want in [(coef_two, coef_one), (scores_two, scores_one), (two.scale, one.scale)]:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=pytest.mark.requires_numba)])
def test_the_path_ignores_the_unlabeled_rows_a_setting_does_not_weigh(backend):
    """A setting weighing no unlabeled rows (tradeoff 1) is not stopped by the pass's unlabeled rows, and takes
    the steps it takes when they are zero: their weight is zero, even at non-finite scores."""
    rng = np.random.default_rng(5)
    n, m, steps, batch = 40, 2, 4, 2
    cos_s, sin_s = rng.standard_normal((2, n, steps * m))
    # The labeled rows among the first half, the unlabeled among the second.
    draws = (np.hstack([rng.integers(0, n // 2, (steps, 4 * batch)), rng.integers(n // 2, n, (steps, 2 * batch))]),
             np.array([0, 1]))
    tradeoffs = np.array([[0.5, 0.2], [1.0, 1.0], [1.0, 0.3]])
    unlabeled = np.arange(n // 2, n)
    base = rng.standard_normal((3, n)) * 0.1
    finite, wild = base.copy(), base.copy()
    finite[1, unlabeled] = 0.0
    wild[1, unlabeled] = np.inf  # beyond the limit at rows setting 1 does not read; settings 0 and 2 read them
    wild[1, unlabeled[::2]] = np.nan
    (coef_finite, _, ok), (coef_wild, _, state) = [path_steps(backend, cos_s, sin_s, draws, b, tradeoffs)
                                                   for b in (finite, wild)]
    assert ok.errors == state.errors == [None] * 3
    np.testing.assert_array_equal(coef_wild[1], coef_finite[1])
    # Setting 2 reads the unlabeled rows of its second split only: beyond the limit there, it stops.
    wild[2, draws[0][0, 5 * batch:]] = 1e151
    *_, state = path_steps(backend, cos_s, sin_s, draws, wild, tradeoffs)
    assert isinstance(state.errors[2], DivergenceError) and state.errors[2].iteration == 1


@given(st.integers(1, 64), st.integers(10, 300_000), st.integers(1, 2000), st.integers(1, 400), st.integers(1, 64),
       st.sampled_from([4, 8]))
def test_the_compiled_group_length_stays_within_the_plan(group, n_rows, n_features, rows_per_step, m, itemsize):
    length = engine.compiled_group_length(group, n_rows=n_rows, n_features=n_features, rows_per_step=rows_per_step,
                                          n_components=m, itemsize=itemsize)
    assert 1 <= length <= group
    if n_rows * n_features * itemsize > plan._COMPILED_CACHE_BYTES:
        assert length == group  # the data stream from memory once per group: the longest group


def test_the_compiled_group_is_shorter_where_the_steps_cost_more():
    def length(n_rows, m):
        return engine.compiled_group_length(64, n_rows=n_rows, n_features=14, rows_per_step=176,
                                            n_components=m, itemsize=8)

    assert length(2500, 4) > length(2500, 16) and length(2500, 4) > length(20000, 4) >= plan._MIN_COMPILED_GROUP
