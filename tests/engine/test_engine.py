"""The fast engine against the plain Algorithms 1-2, its storage strategies, memory and threads."""

import os
import threading
import time
import tracemalloc
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qs3orao._reference import reference_decision_function, reference_fit
from qs3orao.engine import group_plan, memory_plan, plan, resolve_n_jobs, train
from qs3orao.engine.groups import with_features
from qs3orao.engine.threads import RowThreads
from qs3orao.kernels import sampling_rng
from qs3orao.objective import split_members, split_risk
from qs3orao.stochastic import draw_rows, draw_steps, gradient_rows, gradient_weights, weights_at_rows
from qs3orao.trig import resolve_trig_backend

from .problems import fit_problem, make_problem


@st.composite
def problems(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2 * k + 1, 90))
    n_labeled = draw(st.integers(2 * k, n - 1))
    tradeoff = np.array(draw(st.lists(st.sampled_from([0.0, 0.3, 0.7, 1.0]), min_size=k - 1, max_size=k - 1)))
    X, codes = make_problem(n, draw(st.integers(1, 4)), k, n_labeled, draw(st.integers(0, 2**16)))
    lam = draw(st.sampled_from([0.1, 0.5, 2.0]))
    params = dict(
        n_iter=draw(st.integers(1, 30)), batch_size=draw(st.integers(1, 4)), n_components=draw(st.integers(1, 6)),
        gamma=draw(st.sampled_from([0.3, 1.0, 4.0])), lam=lam,
        # theta * lam = 1 zeroes the first coefficient at step 1 (the scale factor hits exactly 0).
        theta=draw(st.sampled_from([1.0 / lam, 1.5 / lam, 3.0])), seed=draw(st.integers(0, 2**32)),
        step_offset=draw(st.sampled_from([0.0, 2.5, 40.0])))
    return X, codes, tradeoff, params


# Few steps of the paper's schedule often end farther from f* than f = 0, which the engine rightly warns about.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@given(problem=problems(), dense=st.booleans(), group=st.integers(1, 12),
       storage=st.sampled_from(["memory", "regenerate"]), n_jobs=st.sampled_from([1, 2]),
       trig_backend=st.sampled_from(["numba", "numpy"]), step_backend=st.sampled_from(["numba", "numpy"]))
@pytest.mark.requires_numba
@settings(max_examples=60, deadline=None)
def test_fast_engine_equals_the_reference(problem, dense, group, storage, n_jobs, trig_backend, step_backend):
    X, codes, tradeoff, params = problem
    with mock.patch.object(plan, "group_plan", return_value=(dense, group)):
        model, train_scores = train(X, codes, tradeoff, **params, block_storage=storage, n_jobs=n_jobs,
                                    trig_backend=trig_backend, step_backend=step_backend)
    assert model.trig_backend == trig_backend
    coef = reference_fit(X, codes, tradeoff, **params)
    scale = np.abs(coef).max() + 1e-300
    np.testing.assert_allclose(model.coef, coef, rtol=0, atol=1e-12 * scale)
    expected = reference_decision_function(X, coef, seed=params["seed"], gamma=params["gamma"])
    tolerance = 1e-11 * (np.abs(expected).max() + 1e-300)
    np.testing.assert_allclose(train_scores, expected, rtol=0, atol=tolerance)
    np.testing.assert_allclose(model.decision_function(X), expected, rtol=0, atol=tolerance)


def test_regenerated_and_kept_blocks_give_the_same_function():
    X, _, (kept, scores) = fit_problem(block_storage="memory")
    _, _, (regenerated, scores_again) = fit_problem(block_storage="regenerate")
    assert kept.blocks is not None and regenerated.blocks is None
    np.testing.assert_array_equal(kept.coef, regenerated.coef)
    np.testing.assert_array_equal(scores, scores_again)
    Z = np.random.default_rng(5).uniform(size=(300, X.shape[1]))
    np.testing.assert_array_equal(kept.decision_function(Z), regenerated.decision_function(Z))


@pytest.mark.parametrize("trig_backend", [pytest.param("numba", marks=pytest.mark.requires_numba), "numpy"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_same_seed_gives_bit_identical_output_with_threads(n_jobs, trig_backend):
    # A small work budget forces the sparse plan, so the all-row passes run on several row chunks.
    def fit(jobs):
        return fit_problem(n=3000, n_jobs=jobs, max_memory=2**16, trig_backend=trig_backend)[2]

    a, scores_a = fit(n_jobs)
    b, scores_b = fit(n_jobs)
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(scores_a, scores_b)
    single, scores_single = fit(1)
    np.testing.assert_allclose(scores_a, scores_single, rtol=0, atol=1e-12)


def test_float32_stays_within_its_stated_tolerance():
    _, _, (exact, scores) = fit_problem(d=10)
    _, _, (single, scores32) = fit_problem(d=10, dtype=np.float32)
    # |f| <= sum |coef| / sqrt(m): the documented error is about 1e-7 of that bound.
    bound = np.abs(exact.coef).sum() / np.sqrt(8)
    assert np.abs(scores32 - scores).max() <= 1e-5 * bound
    assert np.abs(scores32 - scores).max() > 0
    np.testing.assert_allclose(single.coef, exact.coef, rtol=0, atol=1e-5 * np.abs(exact.coef).max())


@pytest.mark.slow
@pytest.mark.parametrize("storage, within", [("auto", True), ("memory", False)])
def test_peak_memory_respects_max_memory(storage, within):
    n, d, n_iter, m, max_memory = 2000, 40, 1000, 16, 2 * 2**20
    X, codes = make_problem(n, d, 4, 500, seed=2)
    block_bytes = n_iter * m * d * 8
    assert block_bytes > 2 * max_memory
    # Importing numba and loading the compiled loops is once per process, not memory of the fit.
    resolve_trig_backend("auto")
    tracemalloc.start()
    try:
        model, scores = train(X, codes, np.full(3, 0.5), n_iter=n_iter, batch_size=4, n_components=m, gamma=0.1,
                              lam=1.0, theta=1.5, seed=0, block_storage=storage, max_memory=max_memory,
                              dtype=np.float32)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Beyond max_memory: the float32 copy of X, a few length-n vectors, the coefficients, small temporaries.
    allowance = max_memory + X.nbytes // 2 + 4 * n * 8 + model.coef.nbytes + 2**18
    assert (peak <= allowance) == within, (peak, allowance)
    assert (model.blocks is None) == within


def test_group_plan_stays_within_the_work_budget():
    for n in [10, 1000, 30_000, 400_000]:
        for rows_per_step, m, itemsize, work in [(192, 32, 8, 32 * 2**20), (12, 4, 4, 2**20), (400, 64, 8, 2**20)]:
            dense, group = group_plan(n, rows_per_step, m, itemsize, work)
            members = n if dense else min(n, group * rows_per_step)
            assert group >= 1 and members * group * 2 * m * itemsize <= max(work, rows_per_step * 2 * m * itemsize)


def test_feature_buffers_are_the_same_memory_from_group_to_group():
    with RowThreads(1) as rows:
        cos_a, sin_a = rows.feature_buffers(50, 8, np.float64)
        cos_b, sin_b = rows.feature_buffers(30, 6, np.float64)  # a smaller last group: the same memory
        assert cos_b.shape == sin_b.shape == (30, 6) and cos_b.flags.c_contiguous and sin_b.flags.c_contiguous
        assert np.shares_memory(cos_a, cos_b) and np.shares_memory(sin_a, sin_b)
        assert not np.shares_memory(cos_b, sin_b)
        cos_c, _ = rows.feature_buffers(60, 8, np.float64)  # larger: grown
        assert cos_c.shape == (60, 8) and not np.shares_memory(cos_a, cos_c)
        assert rows.feature_buffers(60, 8, np.float32)[0].dtype == np.float32


def test_feature_buffer_slots_are_separate_memory():
    with RowThreads(1) as rows:
        first, second = rows.feature_buffers(50, 8, np.float64, 0), rows.feature_buffers(50, 8, np.float64, 1)
        assert not any(np.shares_memory(a, b) for a in first for b in second)
        assert np.shares_memory(rows.feature_buffers(40, 8, np.float64, 1)[0], second[0])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_each_group_keeps_its_features_while_the_next_groups_are_computed(n_jobs):
    # With threads the next group's features are computed during the current group's steps: into other buffers,
    # so what the steps read stays that group's features until the caller asks for the next group.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    omegas = [rng.standard_normal((16, 5)) for _ in range(5)]
    with RowThreads(n_jobs) as rows:
        labels = []
        for _, omega, label, cos_s, sin_s in with_features(X, ((None, w, i) for i, w in enumerate(omegas)),
                                                                   rows, np.arange(300)):
            time.sleep(0.05)  # the next group's features are finished by now
            labels.append(label)
            np.testing.assert_allclose(cos_s, np.cos(X @ omega.T), rtol=0, atol=1e-12)
            np.testing.assert_allclose(sin_s, np.sin(X @ omega.T), rtol=0, atol=1e-12)
        assert labels == list(range(5))


def _rows_threads():
    return [thread for thread in threading.enumerate() if thread.name.startswith("qs3orao-rows-")]


def test_a_caller_waiting_for_its_chunks_runs_queued_ones_itself():
    # n_jobs threads in all: n_jobs - 1 workers and the caller, which takes queued chunks instead of idling. With the
    # only worker held by work started before, every chunk of the caller's run is the caller's own.
    started, release, ran = threading.Event(), threading.Event(), []
    with RowThreads(2) as rows:
        assert len(_rows_threads()) == 1
        held = rows.start(lambda a, b: started.set() or release.wait(5.0), 2, 1, background=True)
        assert started.wait(5.0)  # the worker holds one chunk, the other waits in the queue
        rows.run(lambda a, b: ran.append((a, threading.get_ident())), 4, 1)
        release.set()
        held()
    assert sorted(a for a, _ in ran) == [0, 1, 2, 3]
    assert {ident for _, ident in ran} == {threading.get_ident()}
    assert not _rows_threads()


def test_urgent_chunks_are_taken_before_background_ones():
    order, started, release = [], threading.Event(), threading.Event()
    with RowThreads(2) as rows:
        held = rows.start(lambda a, b: started.set() or release.wait(5.0) if a == 0
                          else order.append(("background", a)), 3, 1, background=True)
        assert started.wait(5.0)  # the worker holds chunk 0; chunks 1 and 2 wait in the background queue
        rows.call_all([lambda: order.append(("urgent", 0)), lambda: order.append(("urgent", 1))])
        release.set()
        held()
    assert order[:2] == [("urgent", 0), ("urgent", 1)]
    assert sorted(order[2:]) == [("background", 1), ("background", 2)]


def test_a_failing_chunk_raises_in_the_caller_once_every_chunk_has_run():
    ran = []

    def chunk(a, b):
        time.sleep(0.01)
        ran.append(a)
        if a == 1:
            raise ZeroDivisionError("chunk 1")

    with RowThreads(2) as rows:
        with pytest.raises(ZeroDivisionError, match="chunk 1"):
            rows.run(chunk, 6, 1)
        assert sorted(ran) == list(range(6))  # nothing of this run still going while the caller unwinds
        rows.run(lambda a, b: ran.append(a), 2, 1)  # the workers are still there
    assert not _rows_threads()


def test_leaving_the_rows_drops_queued_chunks_and_stops_the_workers():
    started, ran = threading.Event(), []

    def held_until_closed():
        # The worker is released by the leaving itself, once the queued chunks are dropped: no timer to race.
        started.set()
        with rows._changed:
            rows._changed.wait_for(lambda: rows._closed, 5.0)

    with pytest.raises(KeyError):
        with RowThreads(2) as rows:
            rows.start(lambda a, b: held_until_closed() if a == 0 else ran.append(a), 4, 1, background=True)
            assert started.wait(5.0)
            raise KeyError("the caller stops before waiting")
    assert ran == [] and not _rows_threads()


@given(st.integers(2, 4), st.lists(st.tuples(st.sampled_from(["background", "run", "call_all"]), st.integers(1, 9),
                                             st.integers(1, 4)), min_size=1, max_size=8))
@settings(max_examples=60, deadline=None)
def test_every_chunk_runs_exactly_once_whatever_the_mix_of_work(n_jobs, operations):
    counts, lock = {}, threading.Lock()

    def mark(key):
        with lock:
            counts[key] = counts.get(key, 0) + 1

    with RowThreads(n_jobs) as rows:
        waits = []
        for op, (kind, n, chunk) in enumerate(operations):
            if kind == "background":
                waits.append(rows.start(lambda a, b, op=op: mark((op, a)), n, chunk, background=True))
            elif kind == "run":
                rows.run(lambda a, b, op=op: mark((op, a)), n, chunk)
                assert [counts.get((op, a)) for a in range(0, n, chunk)] == [1] * len(range(0, n, chunk))
            else:
                rows.call_all([lambda op=op, i=i: mark((op, i)) for i in range(n)])
                assert [counts.get((op, i)) for i in range(n)] == [1] * n
        for wait in waits:
            wait()
    expected = {(op, a) for op, (kind, n, chunk) in enumerate(operations)
                for a in (range(n) if kind == "call_all" else range(0, n, chunk))}
    assert counts == dict.fromkeys(expected, 1)
    assert not _rows_threads()


def test_memory_plan_keeps_blocks_only_when_they_fit():
    assert memory_plan(100, 10, 10, "auto", 2**30)[1]
    assert not memory_plan(10**5, 100, 100, "auto", 2**30)[1]
    assert memory_plan(10**6, 100, 100, "memory", 2**31)[1]
    assert not memory_plan(1, 1, 1, "regenerate", 2**30)[1]
    # 2 MiB of blocks beside 2 MiB of coefficients in 6 MiB: one set of 2 MiB buffers leaves room for them, two do not.
    blocks = dict(n_iter=2**14, n_components=8, n_features=2)
    assert memory_plan(**blocks, max_memory=6 * 2**20) == (2 * 2**20, True)
    assert memory_plan(**blocks, max_memory=6 * 2**20, buffer_sets=2) == (2 * 2**20, False)
    with pytest.raises(ValueError, match="block_storage"):
        memory_plan(1, 1, 1, "disk", 0)


@given(st.integers(1, 9), st.integers(1, 4), st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=4),
       st.integers(0, 99))
def test_drawing_many_steps_at_once_gives_the_rows_of_one_step_at_a_time(n_steps, batch_size, tradeoff, seed):
    _, codes = make_problem(60, 2, len(tradeoff) + 1, 30, seed=seed)
    tradeoff = np.array(tradeoff)
    splits, unlabeled = split_members(codes, tradeoff.size)
    one_at_a_time = sampling_rng(seed)
    ahead, semi = draw_steps(sampling_rng(seed), splits, unlabeled, tradeoff, batch_size, n_steps)
    assert ahead.shape[0] == n_steps
    for rows in ahead:
        draws = draw_rows(one_at_a_time, splits, unlabeled, tradeoff, batch_size)
        for (positives, negatives, drawn), weight in zip(draws, tradeoff):
            assert positives.size == negatives.size == batch_size and drawn.size == batch_size * (weight < 1.0)
        want, want_semi = gradient_rows(draws, tradeoff)
        assert rows.dtype == want.dtype and np.array_equal(rows, want)
        assert np.array_equal(semi, want_semi)


@given(st.integers(1, 5), st.integers(1, 3), st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=4),
       st.integers(0, 99))
def test_the_rows_drawn_do_not_depend_on_the_weights(n_steps, batch_size, tradeoff, seed):
    """Every split draws its unlabeled rows whatever its weight (Algorithm 1): a fit weighing fewer of them reads
    a subset of the rows a fit weighing all of them reads, from the same stream."""
    _, codes = make_problem(60, 2, len(tradeoff) + 1, 30, seed=seed)
    tradeoff = np.array(tradeoff)
    splits, unlabeled = split_members(codes, tradeoff.size)
    every, _ = draw_steps(sampling_rng(seed), splits, unlabeled, np.zeros(tradeoff.size), batch_size, n_steps)
    rows, semi = draw_steps(sampling_rng(seed), splits, unlabeled, tradeoff, batch_size, n_steps)
    labeled = 2 * tradeoff.size * batch_size
    kept = np.concatenate([np.arange(labeled), *(labeled + batch_size * j + np.arange(batch_size) for j in semi)])
    np.testing.assert_array_equal(rows, every[:, kept])


def test_drawing_weighed_unlabeled_rows_needs_some():
    _, codes = make_problem(40, 2, 3, 40, seed=0)
    splits, unlabeled = split_members(codes, 2)
    assert unlabeled.size == 0
    rows, semi = draw_steps(sampling_rng(0), splits, unlabeled, np.ones(2), 2, 3)
    assert rows.shape == (3, 8) and semi.size == 0
    with pytest.raises(ValueError, match=r"splits \[1\] weigh unlabeled rows"):
        draw_steps(sampling_rng(0), splits, unlabeled, np.array([1.0, 0.5]), 2, 3)


def test_unlabeled_rows_are_weighed_only_where_every_setting_weighs_them():
    _, codes = make_problem(60, 2, 4, 30, seed=1)
    splits, unlabeled = split_members(codes, 3)
    draws = draw_rows(sampling_rng(2), splits, unlabeled, np.array([0.5, 0.5, 1.0]), 2)
    rows, semi = gradient_rows(draws, np.array([[0.5, 0.5, 1.0], [0.2, 1.0, 1.0]]))
    assert semi.tolist() == [0]  # split 1 drew unlabeled rows, but the second setting does not weigh them
    assert rows.tolist() == [*draws[0][0], *draws[1][0], *draws[2][0], *draws[0][1], *draws[1][1], *draws[2][1],
                             *draws[0][2]]
    assert gradient_rows(draws, np.array([0.5, 0.5, 1.0]))[1].tolist() == [0, 1]


@given(st.integers(1, 5), st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_the_weights_of_several_settings_at_once_are_each_settings_own_bit_for_bit(k1, batch, n_settings, seed):
    rng = np.random.default_rng(seed)
    semi = np.flatnonzero(rng.random(k1) < 0.6)  # every, some or none of the splits weigh unlabeled rows
    tradeoff = np.where(np.isin(np.arange(k1), semi), rng.random((n_settings, k1)), 1.0)
    f = rng.normal(size=(n_settings, (2 * k1 + semi.size) * batch)) * 10.0 ** rng.uniform(-3, 3)
    together = weights_at_rows(f, semi, tradeoff)
    for s in range(n_settings):
        np.testing.assert_array_equal(together[s], weights_at_rows(f[s], semi, tradeoff[s]))


def test_gradient_weights_are_the_split_risk_gradients():
    X, codes = make_problem(200, 2, 4, 80, seed=3)
    tradeoff = np.array([0.0, 0.6, 1.0])
    splits, unlabeled = split_members(codes, 3)
    draws = draw_rows(sampling_rng(4), splits, unlabeled, tradeoff, 6)
    F = np.random.default_rng(5).normal(size=200)
    rows, weights = gradient_weights(draws, F.__getitem__, tradeoff)
    expected = np.zeros(200)
    got = np.zeros(200)
    np.add.at(got, rows, weights)
    for (p, n, u), g in zip(draws, tradeoff):
        _, gp, gn, gu = split_risk(F[p], F[n], F[u], g)
        np.add.at(expected, p, gp / 3)
        np.add.at(expected, n, gn / 3)
        np.add.at(expected, u[:gu.size], gu / 3)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    assert draws[2][2].size == 0 and draws[0][2].size == 6
    for (p, n, u), (pos, neg) in zip(draws, splits):
        assert np.isin(p, pos).all() and np.isin(n, neg).all() and np.isin(u, unlabeled).all()



@pytest.mark.parametrize("max_memory", [float("nan"), float("inf"), 0, -2**20, "1 MiB", None])
def test_memory_plan_refuses_a_budget_that_is_not_a_finite_positive_number(max_memory):
    with pytest.raises(ValueError, match="max_memory must be a finite positive number of bytes"):
        memory_plan(10, 4, 3, "auto", max_memory)


def test_n_jobs_is_capped_at_the_cores_and_the_rows():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert resolve_n_jobs(10**6) == resolve_n_jobs(-1) == cores
    assert resolve_n_jobs(10**6, n_rows=1) == 1
    assert resolve_n_jobs(None) == resolve_n_jobs(1) == 1


@pytest.mark.parametrize("n_jobs", [0, -2, -5, 1.5, True])
def test_n_jobs_below_one_other_than_minus_one_is_refused(n_jobs):
    with pytest.raises(ValueError, match=r"n_jobs must be None, -1 \(every core\) or an integer >= 1"):
        resolve_n_jobs(n_jobs)


def test_a_huge_n_jobs_fits_as_the_cores_do():
    with mock.patch.object(threading.Thread, "start", autospec=True, side_effect=threading.Thread.start) as start:
        huge, huge_scores = fit_problem(n=120, n_iter=20, n_jobs=3000)[2]
    assert start.call_count < resolve_n_jobs(-1)
    capped, capped_scores = fit_problem(n=120, n_iter=20, n_jobs=resolve_n_jobs(-1))[2]
    np.testing.assert_array_equal(huge.coef, capped.coef)
    np.testing.assert_array_equal(huge_scores, capped_scores)
