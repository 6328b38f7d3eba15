"""The fast training engine behind :class:`qs3orao.QS3ORAO`.

It computes what :mod:`qs3orao._reference` computes (same rows, same blocks,
same coefficients, to rounding) without its O(t^2) cost.  Steps are taken in
groups of ``G`` consecutive iterations:

* the rows of the whole group are drawn ahead (row sampling does not depend on
  the scores) and the group's ``G`` frequency blocks are generated;
* the random features of the group's sampled rows for all ``G`` blocks are
  computed with one matrix product and one ``cos``/``sin`` pass;
* inside the group the sampled rows' scores are kept up to date block by block
  from those features (``|S| x 2m`` per step), so a step reads its rows'
  scores instead of re-evaluating every earlier block;
* after the group, the scores of every training row take the group's ``G``
  blocks in one pass (one ``n x d`` by ``d x Gm`` product and ``n x Gm``
  trigonometric values, the same work as a prediction), split by rows over
  threads.  When the features of all ``n`` rows for a group fit in the working
  budget ("dense" plan) the group's rows are simply all rows and this pass is
  not needed.

The shrinkage ``1 - eta_t lam`` of every earlier coefficient is one global
factor.  The frequency blocks are kept for prediction when they fit within
``max_memory`` and regenerated from their seeds otherwise (the paper's memory
argument).  Peak memory is the data, a few length-``n`` vectors, the
coefficients, the kept blocks if any, and feature buffers bounded by the
working budget: it never grows with ``n x D`` or ``n^2``.  With threads, the
next group's features are computed (in a second set of buffers) while the
main thread takes the current group's steps.

Optionally the projections and trigonometric values are computed in float32
(scores and coefficients stay float64): about 3 times faster on the
trigonometric part, at an absolute error of order ``1e-6`` per feature.
The trigonometric part runs on the backend ``trig_backend`` names
(:mod:`qs3orao.trig`: numpy, or a fused compiled loop with numba), and a
group's steps on the one ``step_backend`` names (numpy calls per step, or
the whole group in one loop compiled with numba, :mod:`qs3orao._steps_numba`).
"""

from __future__ import annotations

import collections
import itertools
import os
import sys
import threading
import time
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

from ..divergence import SCORE_LIMIT, DivergenceError, check_scores, warn_if_far
from ..kernels import frequency_block, sampling_rng
from ..objective import split_members
from ..schedule import step_size
from ..stochastic import draw_steps, weights_at_rows
from ..trig import accumulate as _trig_accumulate
from ..trig import features as _trig_features
from ..trig import resolve_trig_backend

__all__ = ["BLOCK_STORAGE", "STEP_BACKENDS", "RandomFeatureModel", "memory_plan", "resolve_n_jobs",
           "resolve_step_backend", "train", "train_path"]

BLOCK_STORAGE = ("auto", "memory", "regenerate")
STEP_BACKENDS = ("numpy", "numba")
_WORK_BYTES = 32 * 2**20
_MIN_WORK_BYTES = 2**20
_MAX_GROUP = 64
# The dense plan needs at least this many blocks per group to amortise the per-group overhead.
_MIN_DENSE_GROUP = 8
# In the sparse plan the group's sampled rows are featurised twice; keep them below n / 8.
_SPARSE_SHARE = 8
_PREDICT_COLUMNS = 2048
# Chunks per thread of the path's all-row update.
_UPDATE_CHUNKS = 4
# compiled_group_length's constants, from the steps' time at fixed G (1 thread, 176 rows per step, m = 4 unless
# said; rows x features: best G): 2,500 x 14: 14-32 (flat); 2,500 x 14, m = 16: 4-8; 5,000 x 14, m = 32: 4;
# 20,000 x 14: 4-8 (12 and more slower, 24 by 50 %); 50,000 x 14: 3-10 (flat); 1,500 x 1,000 and 7,400 x 1,000: 64.
# One pass over 7 x 11 settings (train_path; 2,400 x 14, m = 4, then 320 rows per step over two draw patterns): 8-12
# (flat), 16-24 1.1 times slower, the plan's 64 1.6 times; the rule gives 10.
_COMPILED_GROUP_WORK = 2**17
_COMPILED_CACHE_BYTES = 8 * 2**20
_MIN_COMPILED_GROUP = 4


def resolve_n_jobs(n_jobs):
    """Number of threads: ``None`` is 1, negative values count back from the available cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))


def resolve_step_backend(step_backend, *, path=False):
    """The function that takes a group's steps for ``step_backend``.

    Parameters
    ----------
    step_backend : {"numpy", "numba"}
        "numpy" takes each step with numpy calls; "numba" takes a whole group in
        one compiled loop (:mod:`qs3orao._steps_numba`), up to about 2.5 times
        faster when the steps, not the features, are the cost (few components, a few
        thousand rows), and equal to rounding.  There is no "auto": a
        fit's bits should not depend on whether numba happens to be installed.
    path : bool, default=False
        The steps of :func:`train_path` (every setting of a pass) instead of :func:`train`'s.

    Raises
    ------
    ValueError
        If ``step_backend`` is not one of :data:`STEP_BACKENDS`.
    ImportError
        If ``step_backend="numba"`` and numba cannot be imported.
    """
    if not isinstance(step_backend, str) or step_backend not in STEP_BACKENDS:
        raise ValueError(f"step_backend must be one of {STEP_BACKENDS}, got {step_backend!r}")
    if step_backend == "numpy":
        return _path_group_steps if path else _group_steps
    try:
        from .._steps_numba import group_steps, path_group_steps
    except ImportError as error:
        raise ImportError(f"step_backend='numba' needs numba, which cannot be imported ({error}); install it "
                          f"with pip install 'qs3orao[fast]', or choose step_backend='numpy'") from error
    if path:
        return partial(_compiled_path_group_steps, kernel=path_group_steps)
    return partial(_compiled_group_steps, kernel=group_steps)


def memory_plan(n_iter, n_components, n_features, block_storage="auto", max_memory=256 * 2**20, n_settings=1,
                buffer_sets=1):
    """Check that the coefficients fit, and split the rest of the budget between buffers and blocks.

    Parameters
    ----------
    n_iter, n_components, n_features : int
    block_storage : {"auto", "memory", "regenerate"}
    max_memory : int
        Bytes the engine may use beyond the data and the length-``n`` score
        vectors: the ``n_iter x 2 n_components`` float64 coefficients, the
        feature buffers and the kept frequency blocks.
    n_settings : int, default=1
        Coefficient vectors per iteration (one per setting of :func:`train_path`).
    buffer_sets : {1, 2}, default=1
        Sets of feature buffers held at once: 2 when the next group's features
        are computed during the current group's steps (with threads).

    Returns
    -------
    work_bytes : int
        Budget of one set of feature buffers: half of what the coefficients
        leave of ``max_memory``, between 1 and 32 MiB.
    keep_blocks : bool
        Whether the ``n_iter x n_components x n_features`` float64 frequencies are
        kept; under "auto", when they fit in what the coefficients and the
        ``buffer_sets`` sets of buffers leave of ``max_memory``.

    Raises
    ------
    ValueError
        If the coefficients alone exceed ``max_memory`` (checked before
        anything is allocated).
    """
    if block_storage not in BLOCK_STORAGE:
        raise ValueError(f"block_storage must be one of {BLOCK_STORAGE}, got {block_storage!r}")
    coef_bytes = n_settings * n_iter * 2 * n_components * 8
    if coef_bytes > max_memory:
        settings = "" if n_settings == 1 else f" for {n_settings} settings"
        raise ValueError(
            f"n_iter={n_iter} with n_components={n_components}{settings} needs {coef_bytes / 2**20:,.1f} MiB for the "
            f"coefficients alone (n_iter x 2 n_components float64), more than max_memory="
            f"{max_memory / 2**20:,.1f} MiB; lower n_iter or n_components, or raise max_memory")
    rest = max_memory - coef_bytes
    work = int(min(_WORK_BYTES, max(_MIN_WORK_BYTES, rest // 2)))
    if block_storage != "auto":
        return work, block_storage == "memory"
    return work, n_iter * n_components * n_features * 8 <= rest - buffer_sets * work


def _buffer_sets(n_jobs):
    """Sets of feature buffers a run with ``n_jobs`` threads holds (see :func:`_with_features`)."""
    return 2 if n_jobs > 1 else 1


class _Rows:
    """Runs functions over fixed row chunks on ``n_jobs`` threads: the caller's and ``n_jobs - 1`` workers.

    Chunks write disjoint rows, so the result does not depend on the scheduling.
    A caller waiting for its chunks takes queued ones itself instead of idling,
    so ``n_jobs`` threads share ``n_jobs`` cores.  (With a pool of ``n_jobs``
    workers beside a busy caller, the work started ahead, the next group's
    features, and the caller's steps ran as three threads on two cores: a fit
    of the perf rule's ``grid_pass`` workload took 1.3 times as long on the
    compiled steps, 1.05-1.1 times on the numpy steps.)  Work started as
    ``background`` is taken only when no other work is queued.  BLAS is
    limited to one thread meanwhile, as the threads already use the cores.
    ``trig`` is the resolved trigonometric backend of the passes it runs, and
    :meth:`feature_buffers` lends them the same feature buffers group after group.
    """

    def __init__(self, n_jobs, trig="numpy"):
        self.n_jobs = n_jobs
        self.trig = trig
        self._stack = ExitStack()
        self._buffers = {}
        self._queues = (collections.deque(), collections.deque())  # urgent, background
        self._changed = threading.Condition()
        self._workers = []
        self._closed = False

    def __enter__(self):
        if self.n_jobs > 1:
            self._stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
            self._workers = [threading.Thread(target=self._work, name=f"qs3orao-rows-{i}", daemon=True)
                             for i in range(self.n_jobs - 1)]
            for worker in self._workers:
                worker.start()
        return self

    def __exit__(self, *exc):
        with self._changed:
            self._closed = True
            for queue in self._queues:  # left only when the caller stopped waiting (an exception)
                for future, _ in queue:
                    future.cancel()
                queue.clear()
            self._changed.notify_all()
        for worker in self._workers:
            worker.join()
        self._workers = []
        return self._stack.__exit__(*exc)

    @property
    def parallel(self):
        """Whether :meth:`start` runs the chunks on worker threads (else at once, in the caller's thread)."""
        return bool(self._workers)

    def feature_buffers(self, n_rows, n_columns, dtype, slot=0):
        """Two C-contiguous ``(n_rows, n_columns)`` arrays, valid until the next call with this ``slot``.

        Every call with a slot returns views of the same memory (grown when too
        small): fresh buffers for every group of steps would be fresh pages, and
        the page faults of their first writes cost as much as the trigonometry
        (2,500 rows x 256 columns: 3.8 ms against 1.6 ms per group).  Two slots
        let the next group's features be computed while the current group's are read.
        """
        size = n_rows * n_columns
        buffers = self._buffers.get(slot, ())
        if not buffers or buffers[0].size < size or buffers[0].dtype != dtype:
            buffers = self._buffers[slot] = (np.empty(size, dtype), np.empty(size, dtype))
        return tuple(buffer[:size].reshape(n_rows, n_columns) for buffer in buffers)

    def start(self, func, n_rows, chunk_rows, *, background=False):
        """Start ``func(start, stop)`` on consecutive chunks of ``chunk_rows`` rows; return a callable that waits.

        Without workers (or with one chunk) the chunks run at once, in the
        caller's thread.  The returned callable returns once every chunk has
        run, running queued chunks itself meanwhile, and raises the first
        chunk's exception, if any.
        """
        spans = range(0, n_rows, chunk_rows)
        return self._start_all([partial(func, start, min(start + chunk_rows, n_rows)) for start in spans], background)

    def run(self, func, n_rows, chunk_rows):
        """Call ``func(start, stop)`` for consecutive chunks of ``chunk_rows`` rows, and wait for them."""
        self.start(func, n_rows, chunk_rows)()

    def call_all(self, funcs):
        """Call every function of ``funcs`` and wait for them; the caller takes them in order with the workers.

        The caller's share starts at once, while the workers may still be busy
        with work started before (the next group's features).
        """
        self._start_all(funcs, background=False)()

    def _start_all(self, funcs, background):
        """Queue ``funcs`` (run them at once without workers, or when there is one); return a callable that waits."""
        if not self._workers or len(funcs) == 1:
            for func in funcs:
                func()
            return lambda: None
        futures = [Future() for _ in funcs]
        with self._changed:
            self._queues[1 if background else 0].extend(zip(futures, funcs))
            self._changed.notify_all()
        return partial(self._wait, futures)

    def _next(self):
        """The first queued ``(future, func)``, urgent work first, or None; call holding ``_changed``."""
        for queue in self._queues:
            if queue:
                return queue.popleft()
        return None

    def _run(self, future, func):
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(func())
            except BaseException as error:  # the waiter raises it
                future.set_exception(error)
        with self._changed:
            self._changed.notify_all()

    def _work(self):
        while True:
            with self._changed:
                while (task := self._next()) is None:
                    if self._closed:
                        return
                    self._changed.wait()
            self._run(*task)

    def _wait(self, futures):
        while True:
            with self._changed:
                task = None
                while not all(future.done() for future in futures):
                    if (task := self._next()) is not None:
                        break
                    self._changed.wait()
            if task is None:
                for future in futures:
                    future.result()
                return
            self._run(*task)


def _accumulate(F, X, omega, coef, rows, work_bytes):
    """``F += sum_i coef[i] @ phi_{omega_i}(X)`` for a group of blocks, chunk by chunk of rows.

    ``omega`` holds the group's frequencies stacked, shape ``(G * m, d)``, in the
    working dtype; ``coef`` has shape ``(G, 2 m)``, or ``(G, 2 m, S)`` for ``S``
    settings at once (then ``F`` has shape ``(n, S)``).
    """
    m = coef.shape[1] // 2
    columns = omega.shape[0]
    cos_coef = (coef[:, :m].reshape(-1, *coef.shape[2:]) / np.sqrt(m)).astype(X.dtype)
    sin_coef = (coef[:, m:].reshape(-1, *coef.shape[2:]) / np.sqrt(m)).astype(X.dtype)

    def chunk(start, stop):
        _trig_accumulate(F[start:stop], X[start:stop], omega, cos_coef, sin_coef, rows.trig)

    chunk_rows = max(1, work_bytes // (2 * columns * X.itemsize * rows.n_jobs))
    rows.run(chunk, X.shape[0], chunk_rows)


@dataclass
class RandomFeatureModel:
    """``f(x) = sum_i coef[i] @ phi_{omega_i}(x)`` with ``omega_i = frequency_block(seed, i + 1, ...)``.

    ``blocks`` holds the frequencies when they were kept; otherwise they are
    regenerated from the seed.  ``dtype`` is the precision of the projections
    and trigonometric values, ``n_jobs`` the number of row threads (resolved
    as in :func:`resolve_n_jobs` on construction),
    ``work_bytes`` the budget of the feature buffers and ``trig_backend`` the
    trigonometric backend (:mod:`qs3orao.trig`; "auto" is resolved on
    construction, so the attribute tells which one runs).

    :meth:`decision_function` is one evaluation pass over all rows (the same
    work as the all-row pass after each group of training steps): time it to
    time the engine's pass.
    """

    seed: int
    gamma: float
    n_features: int
    coef: np.ndarray
    blocks: np.ndarray | None = None
    dtype: np.dtype = np.dtype(np.float64)
    n_jobs: int = 1
    work_bytes: int = _WORK_BYTES
    trig_backend: str = "auto"

    def __post_init__(self):
        self.n_jobs = resolve_n_jobs(self.n_jobs)
        self.trig_backend = resolve_trig_backend(self.trig_backend, self.dtype)

    @property
    def n_components(self):
        return self.coef.shape[1] // 2

    def block_range(self, start, stop):
        """Frequencies of blocks ``start..stop-1`` (0-based), shape ``(stop - start, m, d)``."""
        if self.blocks is not None:
            return self.blocks[start:stop]
        return np.stack([frequency_block(self.seed, i + 1, self.n_components, self.n_features, self.gamma)
                         for i in range(start, stop)])

    def decision_function(self, X):
        """Evaluate ``f`` on the rows of ``X``, by groups of blocks and chunks of rows."""
        group = max(1, _PREDICT_COLUMNS // self.n_components)
        X = np.asarray(X).astype(self.dtype, copy=False)
        f = np.zeros(X.shape[0])
        with _Rows(self.n_jobs, self.trig_backend) as rows:
            for start in range(0, self.coef.shape[0], group):
                stop = min(start + group, self.coef.shape[0])
                omega = self.block_range(start, stop).reshape(-1, X.shape[1]).astype(self.dtype)
                _accumulate(f, X, omega, self.coef[start:stop], rows, self.work_bytes)
        return f


class _Progress:
    """Iterations per second and time left, printed to stderr every few seconds."""

    def __init__(self, total, enabled, every=2.0):
        self.total, self.enabled, self.every = total, enabled, every
        self.start = self.last = time.perf_counter()

    def update(self, done):
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-12)
        print(f"QS3ORAO: iteration {done}/{self.total}, {rate:.1f} it/s, "
              f"{(self.total - done) / rate:.1f} s left", file=sys.stderr, flush=True)


def group_plan(n_rows, rows_per_step, n_components, itemsize, work_bytes):
    """Choose the group size ``G`` and whether the group's rows are all rows ("dense").

    Returns
    -------
    dense : bool
    group : int
    """
    per_block = 2 * n_components * itemsize
    dense_group = work_bytes // (n_rows * per_block)
    if dense_group >= _MIN_DENSE_GROUP:
        return True, int(min(dense_group, _MAX_GROUP))
    by_memory = int(np.sqrt(work_bytes / (rows_per_step * per_block)))
    return False, max(1, min(_MAX_GROUP, n_rows // (_SPARSE_SHARE * rows_per_step), by_memory))


def compiled_group_length(group, *, n_rows, n_features, rows_per_step, n_components, itemsize):
    """The group length, at most ``group`` (:func:`group_plan`'s), at which the compiled steps cost least.

    A compiled step reads its rows' scores through the group's earlier steps,
    ``rows_per_step x G/2 x 2m`` multiply-adds on average, against a per-group
    cost (drawing, dispatch, the group's product) of about
    :data:`_COMPILED_GROUP_WORK` of them, least at ``G = sqrt(_COMPILED_GROUP_WORK
    / (rows_per_step m))``; and the group's features are written and read again
    at every step's pace, which is fastest while both buffers stay within
    :data:`_COMPILED_CACHE_BYTES`.  Where the data themselves exceed that, each
    group streams them from memory once, and the longest group amortises it best.
    """
    if n_rows * n_features * itemsize > _COMPILED_CACHE_BYTES:
        return group
    by_reads = round(float(np.sqrt(_COMPILED_GROUP_WORK / (rows_per_step * n_components))))
    by_cache = _COMPILED_CACHE_BYTES // (2 * n_rows * n_components * itemsize)
    return max(1, min(group, by_reads, max(_MIN_COMPILED_GROUP, by_cache)))


def _step_plan(step_backend, n_rows, n_features, rows_per_step, n_components, itemsize, work_bytes):
    """:func:`group_plan`'s ``(dense, group)``, the group shortened by :func:`compiled_group_length` for compiled steps.

    ``rows_per_step`` counts the rows every step reads: in one pass over
    several settings (:func:`train_path`), the unlabeled rows of every split
    that some setting weighs.
    """
    dense, group = group_plan(n_rows, rows_per_step, n_components, itemsize, work_bytes)
    if step_backend == "numba":
        group = compiled_group_length(group, n_rows=n_rows, n_features=n_features, rows_per_step=rows_per_step,
                                      n_components=n_components, itemsize=itemsize)
    return dense, group


def train(X, codes, tradeoff, *, n_iter, batch_size, n_components, gamma, lam, theta, seed, step_offset=0.0,
          block_storage="auto", max_memory=256 * 2**20, dtype=np.float64, n_jobs=1, trig_backend="auto",
          step_backend="numpy", verbose=False, checkpoints=(), stop=None):
    """Run the quadruply stochastic iteration.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``, ``-1`` for unlabeled rows.
    tradeoff : ndarray of shape (k - 1,)
    n_iter, batch_size, n_components : int
    gamma, lam, theta : float
        Kernel parameter, regularisation, step scale.
    seed : int
    step_offset : float, default=0.0
        ``t0 >= 0`` of the step ``eta_t = theta / (t + t0)``; 0 is the paper's
        schedule (see :mod:`qs3orao.schedule`).
    block_storage : {"auto", "memory", "regenerate"}
        Keep the frequency blocks (``n_iter x m x d`` floats) for prediction,
        or regenerate them; see :func:`memory_plan`.
    max_memory : int
        Memory budget in bytes of the kept blocks and the feature buffers.
    dtype : {numpy.float64, numpy.float32}
        Precision of the projections and trigonometric values.
    n_jobs : int
        Threads over which the all-row passes are split by rows.
    trig_backend : {"auto", "numba", "numpy"}
        Backend of the trigonometric passes (:func:`qs3orao.trig.resolve_trig_backend`);
        the model's ``trig_backend`` records the one used.
    step_backend : {"numpy", "numba"}, default="numpy"
        How each group's steps are taken (:func:`resolve_step_backend`).
    verbose : bool
    checkpoints : sequence of int, default=()
        Iterations in ``1..n_iter`` after which ``stop`` reads the scores of
        every row; a group of steps ends at each of them.
    stop : callable, optional
        ``stop(iteration, scores) -> bool`` at each checkpoint, ``scores`` being
        ``f`` at every row after that many iterations; True ends the training
        there (the model then has that many blocks). Required with checkpoints.

    Returns
    -------
    model : RandomFeatureModel
    train_scores : ndarray of shape (n,)
        ``f_{t+1}`` at every row of ``X``.

    Raises
    ------
    qs3orao.divergence.DivergenceError
        As soon as the scores of a step's sampled rows, or of all rows after a
        group of steps, are non-finite or beyond ``SCORE_LIMIT``.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When the final scores prove the error to ``f*`` far above its start
        (:func:`qs3orao.divergence.warn_if_far`).
    """
    n, d = X.shape
    m = n_components
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    checkpoints = _check_checkpoints(checkpoints, stop, n_iter)
    n_jobs = resolve_n_jobs(n_jobs)
    work_bytes, keep = memory_plan(n_iter, m, d, block_storage, max_memory, buffer_sets=_buffer_sets(n_jobs))
    trig = resolve_trig_backend(trig_backend, dtype)
    group_steps = resolve_step_backend(step_backend)
    splits, unlabeled = split_members(codes, tradeoff.size)
    rows_per_step = batch_size * int(np.sum(np.where(tradeoff < 1.0, 3, 2)))
    dense, group = _step_plan(step_backend, n, d, rows_per_step, m, dtype.itemsize, work_bytes)
    rng = sampling_rng(seed)
    Xw = X.astype(dtype, copy=False)
    # base: sum_i coef[i] @ phi_i(x) over the blocks already applied to all rows; f = scale * base.
    base = np.zeros(n)
    local_of = np.arange(n) if dense else np.empty(n, dtype=np.int64)
    coef = np.zeros((n_iter, 2 * m))
    blocks = np.empty((n_iter, m, d)) if keep else None
    scale = 1.0
    progress = _Progress(n_iter, verbose)
    schedule = dict(n_iter=n_iter, lam=lam, theta=theta, step_offset=step_offset)
    guard = partial(check_scores, tradeoff=tradeoff, **schedule)
    done = n_iter
    def groups():
        for start, end in _group_bounds(n_iter, group, checkpoints):
            draws = draw_steps(rng, splits, unlabeled, tradeoff, batch_size, end - start)
            omega = _group_blocks(seed, start, end, m, d, gamma, blocks, dtype)
            yield _group_members(dense, draws), omega, draws, start, end

    with _Rows(n_jobs, trig) as row_threads:
        for members, omega, draws, start, end, cos_s, sin_s in _with_features(Xw, groups(), row_threads, local_of):
            scores = base if members is None else base[members]
            scale = group_steps(cos_s, sin_s, draws, scores, local_of, coef, base, start, scale,
                                tradeoff=tradeoff, theta=theta, lam=lam, step_offset=step_offset, guard=guard)
            if not dense:
                _accumulate(base, Xw, omega, coef[start:end], row_threads, work_bytes)
            guard(scale * base, iteration=end)
            progress.update(end)
            if end in checkpoints and stop(end, scale * base):
                done = end
                break
    model = RandomFeatureModel(seed=seed, gamma=gamma, n_features=d, coef=coef[:done] * scale,
                               blocks=None if blocks is None else blocks[:done], dtype=dtype, n_jobs=n_jobs,
                               work_bytes=work_bytes, trig_backend=trig)
    warn_if_far(base * scale, codes, tradeoff, **{**schedule, "n_iter": done})
    return model, base * scale


def _check_checkpoints(checkpoints, stop, n_iter):
    """The checkpoints as a sorted tuple of distinct iterations in ``1..n_iter``; ``stop`` must come with them."""
    ends = tuple(sorted({int(i) for i in checkpoints}))
    if ends and (ends[0] < 1 or ends[-1] > n_iter):
        raise ValueError(f"checkpoints must lie in 1..n_iter={n_iter}, got {list(ends)}")
    if ends and stop is None:
        raise ValueError("checkpoints need a stop(iteration, scores) callable")
    return ends


def _group_bounds(n_iter, group, checkpoints):
    """``(start, end)`` of each group of at most ``group`` steps, a group ending at every checkpoint."""
    start = 0
    for end in [*checkpoints, n_iter]:
        while start < end:
            yield start, min(start + group, end)
            start = min(start + group, end)


def _group_blocks(seed, start, stop, m, d, gamma, blocks, dtype):
    """The stacked frequencies of blocks ``start + 1 .. stop`` in ``dtype``, kept in ``blocks`` unless it is None."""
    omega = np.concatenate([frequency_block(seed, i + 1, m, d, gamma) for i in range(start, stop)])
    if blocks is not None:
        blocks[start:stop] = omega.reshape(stop - start, m, d)
    return omega.astype(dtype, copy=False)


def _group_members(dense, draws):
    """The group's rows, sorted (None: all rows); ``draws`` is :func:`draw_steps`' output."""
    if dense:
        return None
    return np.unique(draws[0])


def _start_member_features(X, members, omega, rows, slot):
    """Start the ``cos`` and ``sin`` features of the group's rows (all rows when ``members`` is None).

    They are computed in ``rows``'s feature buffers ``slot``, split over its
    threads; the returned callable waits for them and returns ``(cos_s, sin_s)``,
    valid until features are next started in that slot.
    """
    Xs = X if members is None else X[members]
    cos_s, sin_s = rows.feature_buffers(Xs.shape[0], omega.shape[0], X.dtype, slot)
    wait = rows.start(lambda a, b: _trig_features(Xs[a:b], omega, cos_s[a:b], sin_s[a:b], rows.trig),
                      Xs.shape[0], max(1, -(-Xs.shape[0] // rows.n_jobs)), background=True)

    def features():
        wait()
        return cos_s, sin_s

    return features


def _with_features(X, groups, rows, local_of):
    """Yield each ``(members, omega, ...)`` of ``groups`` followed by its members' ``cos`` and ``sin`` features.

    With worker threads the next group's features are started in the
    background (in the other set of feature buffers) before a group is yielded,
    so the workers compute them while the caller takes the group's steps.  In the sparse plan ``local_of``
    maps each of the yielded group's rows to its position among them.
    """
    ahead = 1 if rows.parallel else 0
    pending = collections.deque()
    for slot, group in zip(itertools.cycle(range(ahead + 1)), groups):
        pending.append((group, _start_member_features(X, group[0], group[1], rows, slot)))
        if len(pending) > ahead:
            yield _ready(*pending.popleft(), local_of)
    while pending:
        yield _ready(*pending.popleft(), local_of)


def _ready(group, features, local_of):
    """``(*group, cos_s, sin_s)`` once the group's features are computed, its rows mapped in ``local_of``."""
    members = group[0]
    if members is not None:
        local_of[members] = np.arange(members.size)
    return (*group, *features())


def _group_steps(cos_s, sin_s, draws, scores, local_of, coef, base, start, scale, *,
                 tradeoff, theta, lam, step_offset, guard):
    """Take the steps ``start + 1 ..`` of one group; return the new scale.

    ``cos_s`` and ``sin_s`` are the features of the group's rows for its
    blocks; ``draws`` are the steps' rows and weighed splits (:func:`draw_steps`);
    ``scores`` holds ``base`` (plus the group's blocks so far) at those
    rows (all rows in the dense plan, then ``scores is base``);
    ``coef`` receives the new coefficients divided by the global scale;
    ``guard(scores, iteration=i)`` checks the scores each step reads.
    """
    m = coef.shape[1] // 2
    step_rows, semi = draws
    for q, sampled in enumerate(step_rows):
        i = start + q + 1
        local = local_of[sampled]
        f = scale * scores[local]
        guard(f, iteration=i)
        weights = weights_at_rows(f, semi, tradeoff)
        block = slice(q * m, (q + 1) * m)
        eta = step_size(i, theta=theta, step_offset=step_offset)
        alpha = (-eta / np.sqrt(m)) * np.concatenate([weights @ cos_s[local, block], weights @ sin_s[local, block]])
        scale *= 1.0 - eta * lam
        if abs(scale) < 1e-200:
            # Fold the vanishing factor into everything stored before it underflows (or is exactly 0).
            coef[:i - 1] *= scale
            base *= scale
            if scores is not base:
                scores *= scale
            scale = 1.0
        coef[i - 1] = alpha / scale
        step = (coef[i - 1] / np.sqrt(m)).astype(cos_s.dtype)
        scores += cos_s[:, block] @ step[:m] + sin_s[:, block] @ step[m:]
    return scale


def _compiled_group_steps(cos_s, sin_s, draws, scores, local_of, coef, base, start, scale, *,
                          tradeoff, theta, lam, step_offset, guard, kernel):
    """:func:`_group_steps` in one compiled loop, ``kernel`` (:func:`qs3orao._steps_numba.group_steps`).

    A step reads its rows' scores as the group's start plus the group's earlier
    steps at those rows (as :func:`_path_group_steps` does), and in the dense
    plan every row takes the group's steps after it in one product, instead of
    after each step.  The loop stops at the first step whose sampled scores
    leave the limit; ``guard`` then raises with them, as in :func:`_group_steps`.
    """
    step_rows, semi = draws
    group = np.zeros((2, cos_s.shape[1]))
    f = np.empty(step_rows.shape[1])
    scale, failed = kernel(cos_s, sin_s, local_of[step_rows], semi, scores, base, scores is base, coef, start,
                           scale, tradeoff, theta, lam, step_offset, SCORE_LIMIT, group, f)
    if failed >= 0:
        guard(f, iteration=start + failed + 1)
        raise RuntimeError(f"the compiled steps stopped at step {start + failed + 1} but its scores pass the guard")
    if scores is base:
        steps = group.astype(cos_s.dtype)
        base += cos_s @ steps[0] + sin_s @ steps[1]
    return scale


def train_path(X, codes, tradeoffs, *, lams, thetas, step_offsets, n_iter, batch_size, n_components, gamma, seed,
               block_storage="auto", max_memory=256 * 2**20, dtype=np.float64, n_jobs=1, trig_backend="auto",
               step_backend="numpy", verbose=False):
    """Run the iteration of :func:`train` for ``S`` settings of the weights and the schedule in one pass.

    Every setting gets what ``train`` gives it (same rows, same blocks, same
    coefficients, to rounding): the frequency blocks and the features of the
    sampled rows are computed once per group of steps and each setting keeps
    its own coefficients and scores.  Inside a group a step reads its sampled
    rows' scores as their scores at the group's start plus the group's earlier
    steps at those rows; after the group every row's scores take the group's
    steps in one product with a ``(G 2m) x S`` coefficient matrix.  The rows
    drawn depend on the seed and the data only (:func:`draw_steps`), so all
    settings share one sampling stream and every setting draws exactly the
    rows its own fit draws; a step weighs the unlabeled rows of every split
    that some setting weighs (``tradeoff < 1``), at weight zero for the others.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    codes : ndarray of int, shape (n,)
    tradeoffs : ndarray of shape (S, k - 1)
    lams, thetas, step_offsets : ndarray of shape (S,)
        Each setting's regularisation, step scale and offset ``t0``.
    n_iter, batch_size, n_components, gamma, seed, block_storage, max_memory, dtype, n_jobs, trig_backend, verbose
        Shared by all settings, as in :func:`train`; ``max_memory`` must hold
        the ``S x n_iter x 2 n_components`` coefficients.
    step_backend : {"numpy", "numba"}, default="numpy"
        How each group's steps are taken for every setting
        (:func:`resolve_step_backend`): products over all settings at once, or
        the settings in compiled loops, one chunk of them per thread of
        ``n_jobs`` (the same values as one loop).  The compiled steps shorten
        the plan's groups as :func:`train`'s do (:func:`compiled_group_length`),
        counting the rows the pass reads per step, so their groups may differ
        from a setting's own compiled fit: a diverging setting is then caught
        at the iteration these groups catch it (a step checks its sampled rows,
        a group's end every row), which its own fit may name differently.

    Returns
    -------
    models : list
        Per setting, its :class:`RandomFeatureModel` (the settings share the
        kept blocks), or the :class:`qs3orao.divergence.DivergenceError` that
        setting raised: a diverging setting is frozen at zero from then on and
        leaves the others unchanged.
    train_scores : ndarray of shape (n, S)
        ``f_{t+1}`` of every setting at every row; NaN for a diverged setting.

    Raises
    ------
    ValueError
        If ``step_backend`` is not one of :data:`STEP_BACKENDS`.
    ImportError
        If ``step_backend="numba"`` and numba cannot be imported.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        Per setting, as :func:`train` does.
    """
    n, d = X.shape
    m = n_components
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    tradeoffs = np.atleast_2d(np.asarray(tradeoffs, dtype=np.float64))
    lams, thetas, step_offsets = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (lams, thetas, step_offsets))
    path_steps = resolve_step_backend(step_backend, path=True)
    n_settings = tradeoffs.shape[0]
    if not lams.size == thetas.size == step_offsets.size == n_settings:
        raise ValueError(f"tradeoffs, lams, thetas and step_offsets must have one entry per setting, got "
                         f"{n_settings}, {lams.size}, {thetas.size} and {step_offsets.size}")
    n_jobs = resolve_n_jobs(n_jobs)
    work_bytes, keep = memory_plan(n_iter, m, d, block_storage, max_memory, n_settings=n_settings,
                                   buffer_sets=_buffer_sets(n_jobs))
    splits, unlabeled = split_members(codes, tradeoffs.shape[1])
    # The pass reads the unlabeled rows of every split that some setting weighs.
    weighed = tradeoffs.min(axis=0)
    rng = sampling_rng(seed)
    unread = _unread_rows(tradeoffs, batch_size)  # one column per row a step reads
    dense, group = _step_plan(step_backend, n, d, unread.shape[1], m, dtype.itemsize, work_bytes)
    Xw = X.astype(dtype, copy=False)
    # Setting first: base[g] and coef[g] are setting g's scores (divided by its scale) and coefficients.
    base = np.zeros((n_settings, n))
    local_of = np.arange(n) if dense else np.empty(n, dtype=np.int64)
    coef = np.zeros((n_settings, n_iter, 2 * m))
    blocks = np.empty((n_iter, m, d)) if keep else None
    state = _PathState(lams, thetas, step_offsets, tradeoffs, n_iter, unread=unread)
    progress = _Progress(n_iter, verbose)
    trig = resolve_trig_backend(trig_backend, dtype)
    def groups():
        for start in range(0, n_iter, group):
            stop = min(start + group, n_iter)
            draws = draw_steps(rng, splits, unlabeled, weighed, batch_size, stop - start)
            omega = _group_blocks(seed, start, stop, m, d, gamma, blocks, dtype)
            yield _group_members(dense, draws), omega, draws, start, stop

    with _Rows(n_jobs, trig) as row_threads:
        for members, omega, draws, start, stop, cos_s, sin_s in _with_features(Xw, groups(), row_threads, local_of):
            path_steps(cos_s, sin_s, draws, local_of, coef, base, start, state, dense=members is None,
                       rows=row_threads)
            if not dense:
                _accumulate(base.T, Xw, omega, coef[:, start:stop].transpose(1, 2, 0), row_threads, work_bytes)
            state.guard(base, iteration=stop, settings=slice(None), stored=(coef, base))
            progress.update(stop)
    models, train_scores = [], np.full((n, n_settings), np.nan)
    for g in range(n_settings):
        if state.errors[g] is not None:
            models.append(state.errors[g])
            continue
        train_scores[:, g] = base[g] * state.scale[g]
        models.append(RandomFeatureModel(seed=seed, gamma=gamma, n_features=d, coef=coef[g] * state.scale[g],
                                         blocks=blocks, dtype=dtype, n_jobs=n_jobs, work_bytes=work_bytes,
                                         trig_backend=trig))
    fitted = np.flatnonzero([isinstance(model, RandomFeatureModel) for model in models])
    warn_if_far(train_scores[:, fitted], codes, tradeoffs[fitted].T, lam=lams[fitted], theta=thetas[fitted],
                step_offset=step_offsets[fitted], n_iter=n_iter)
    return models, train_scores


def _unread_rows(tradeoffs, batch_size):
    """Per setting, the rows of a step of :func:`train_path` that its own fit does not read, shape (S, rows per step).

    The pass draws the unlabeled rows of every split some setting weighs
    (:func:`draw_steps` at the settings' smallest weights); a setting's own fit
    reads only those of the splits it weighs (``tradeoff < 1``).
    """
    n_settings, splits = tradeoffs.shape
    semi = np.flatnonzero(tradeoffs.min(axis=0) < 1.0)
    unweighed = np.repeat(tradeoffs[:, semi] >= 1.0, batch_size, axis=1)
    return np.concatenate([np.zeros((n_settings, 2 * splits * batch_size), dtype=bool), unweighed], axis=1)


class _PathState:
    """Per-setting schedule, global scale factor and divergence record of :func:`train_path`.

    ``unread`` is :func:`_unread_rows`: the rows of a step that a setting's own
    fit does not read, at weight zero for that setting in the pass.
    """

    def __init__(self, lams, thetas, step_offsets, tradeoffs, n_iter, unread):
        self.lams, self.thetas, self.step_offsets, self.tradeoffs = lams, thetas, step_offsets, tradeoffs
        self.n_iter, self.unread = n_iter, unread
        self.scale = np.ones(lams.size)
        self.errors = [None] * lams.size
        self.alive = np.ones(lams.size, dtype=bool)

    def schedule(self, g):
        return dict(n_iter=self.n_iter, lam=float(self.lams[g]), theta=float(self.thetas[g]),
                    step_offset=float(self.step_offsets[g]))

    def eta(self, i, settings):
        """Step sizes of ``settings`` at iteration ``i``; 0 for a diverged setting (it stays at zero)."""
        return np.where(self.alive[settings], self.thetas[settings] / (i + self.step_offsets[settings]), 0.0)

    def guard(self, values, *, iteration, settings, stored, step=False):
        """Record a :class:`DivergenceError` for every setting whose ``scale * values`` leaves the limit.

        ``values`` holds the scores (divided by the scale) of the settings
        ``settings``, a slice, one row each: at every row, or at a step's
        sampled rows (``step``), where only the rows a setting's own fit reads
        count for it (the others, where they leave the limit, are set to zero
        in ``values``: their weight is zero).  A diverged setting's entries of
        ``stored`` (arrays indexed by setting along their first axis) are
        zeroed, so it no longer affects any product.
        """
        scale = self.scale[settings]
        # max |values| per row without an |values| temporary (a fresh S x n array per group); nan propagates.
        largest = np.maximum(values.max(axis=1, initial=0.0), -values.min(axis=1, initial=0.0)) * np.abs(scale)
        for j in np.flatnonzero(self.alive[settings] & ~(largest <= SCORE_LIMIT)):
            g = range(self.scale.size)[settings][j]
            unread = self.unread[g] if step else np.zeros(values.shape[1], dtype=bool)
            try:
                check_scores(scale[j] * values[j, ~unread], iteration=iteration, tradeoff=self.tradeoffs[g],
                             **self.schedule(g))
            except DivergenceError as error:
                self.errors[g], self.alive[g], self.scale[g] = error, False, 1.0
                for array in stored:
                    array[g] = 0.0
            else:
                values[j, unread] = 0.0

    def fold_small_scales(self, stored):
        """Fold every vanishing scale factor into ``stored`` before it underflows (as :func:`train`)."""
        for g in np.flatnonzero(np.abs(self.scale) < 1e-200):
            for array in stored:
                array[g] *= self.scale[g]
            self.scale[g] = 1.0


def _path_group_steps(cos_s, sin_s, draws, local_of, coef, base, start, state, *, dense, rows):
    """Take the steps ``start + 1 ..`` of one group for every setting (see :func:`_group_steps`).

    ``cos_s`` and ``sin_s`` are the features of the group's rows (all rows when
    ``dense``) for its blocks; ``draws`` are the steps' rows and weighed splits
    (:func:`draw_steps`); ``coef[:, i - 1]`` receives every setting's
    coefficients divided by its scale.  ``base`` holds every row's scores at
    the group's start; a step adds the group's earlier steps to it at its
    sampled rows only.  In the dense plan every row then takes the group's
    steps, in one product.
    """
    m = coef.shape[2] // 2
    step_rows, semi = draws
    # The group's coefficients over sqrt(m) in the features' dtype (what _group_steps adds per step), by part.
    group = np.zeros((base.shape[0], 2, cos_s.shape[1]), cos_s.dtype)
    stored = (coef, base, group)
    for q in range(step_rows.shape[0]):
        i = start + q + 1
        done, block = slice(0, q * m), slice(q * m, (q + 1) * m)
        sampled = step_rows[q]
        local = local_of[sampled]
        cos_r, sin_r = cos_s[local, :block.stop], sin_s[local, :block.stop]
        f = base[:, sampled] + group[:, 0, done] @ cos_r[:, done].T + group[:, 1, done] @ sin_r[:, done].T
        state.guard(f, iteration=i, settings=slice(None), stored=stored, step=True)
        weights = weights_at_rows(state.scale[:, None] * f, semi, state.tradeoffs)
        weights[~state.alive] = 0.0
        eta = state.eta(i, slice(None))
        alpha = (-eta / np.sqrt(m))[:, None] * np.concatenate(
            [weights @ cos_r[:, block], weights @ sin_r[:, block]], axis=1)
        state.scale *= 1.0 - eta * state.lams
        state.fold_small_scales(stored)
        coef[:, i - 1] = alpha / state.scale[:, None]
        group[:, :, block] = (coef[:, i - 1] / np.sqrt(m)).reshape(-1, 2, m)
    if dense:
        _add_group_to_all_rows(base, group, cos_s, sin_s, rows)


def _compiled_path_group_steps(cos_s, sin_s, draws, local_of, coef, base, start, state, *, dense, rows, kernel):
    """:func:`_path_group_steps` with the steps in compiled loops, ``kernel``.

    ``kernel`` is :func:`qs3orao._steps_numba.path_group_steps`.  The settings
    are split into one chunk per thread of ``rows``, each chunk's steps one
    task: a setting's arithmetic does not depend on the others', so the chunks
    give the settings' values of one loop over all.  A task stops at the first
    step where a setting's sampled scores leave the limit; ``state.guard`` then
    records that setting's error and zeroes it, and the task goes on from that
    step.
    """
    step_rows, semi = draws
    group = np.zeros((base.shape[0], 2, cos_s.shape[1]), cos_s.dtype)
    guarding = threading.Lock()
    unread = np.ascontiguousarray(state.unread.T)

    def steps(settings):
        chunk = np.zeros((2, cos_s.shape[1], settings.stop - settings.start), cos_s.dtype)
        f = np.empty((step_rows.shape[1], chunk.shape[2]))
        first = 0
        while (first := kernel(cos_s, sin_s, local_of[step_rows], step_rows, semi, base[settings], coef[settings],
                               chunk, state.scale[settings], state.alive[settings], unread[:, settings],
                               state.tradeoffs[settings], state.thetas[settings], state.lams[settings],
                               state.step_offsets[settings], start, first, SCORE_LIMIT, f)) >= 0:
            alive = state.alive[settings].copy()
            with guarding:
                state.guard(f.T, iteration=start + first + 1, settings=settings, stored=(coef, base), step=True)
            if np.array_equal(alive, state.alive[settings]):
                raise RuntimeError(f"the compiled steps stopped at step {start + first + 1} but its scores pass "
                                   f"the guard")
            chunk[..., ~state.alive[settings]] = 0.0
        group[settings] = chunk.transpose(2, 0, 1)

    n_settings = base.shape[0]
    size = -(-n_settings // rows.n_jobs)  # one chunk per thread
    rows.call_all([partial(steps, slice(a, min(a + size, n_settings))) for a in range(0, n_settings, size)])
    if dense:
        _add_group_to_all_rows(base, group, cos_s, sin_s, rows)


def _add_group_to_all_rows(base, group, cos_s, sin_s, rows):
    """Every setting's scores at every row take the group's steps (the dense plan), split by rows over threads."""
    def update(a, b):
        base[:, a:b] += group[:, 0] @ cos_s[a:b].T + group[:, 1] @ sin_s[a:b].T

    # A few chunks per thread, so that a thread slowed by another process on its core does not hold up the rest.
    rows.run(update, base.shape[1], max(1, -(-base.shape[1] // (_UPDATE_CHUNKS * rows.n_jobs))))
