"""One fit: :func:`train`."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..divergence import check_scores, warn_if_far
from ..kernels import sampling_rng
from ..objective import split_members
from ..stochastic import draw_steps
from ..trig import resolve_trig_backend
from .groups import group_bounds, group_inputs, with_features
from .model import RandomFeatureModel, accumulate
from .plan import buffer_sets, memory_plan, step_plan, working_dtype
from .progress import Progress
from .steps import resolve_step_backend
from .threads import RowThreads, resolve_n_jobs

__all__ = ["train"]


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
        or regenerate them; see :func:`~qs3orao.engine.memory_plan`.
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
        How each group's steps are taken (:func:`~qs3orao.engine.resolve_step_backend`).
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
    dtype = working_dtype(dtype)
    checkpoints = _check_checkpoints(checkpoints, stop, n_iter)
    n_jobs = resolve_n_jobs(n_jobs, n_rows=n)
    work_bytes, keep = memory_plan(n_iter, m, d, block_storage, max_memory, buffer_sets=buffer_sets(n_jobs))
    trig = resolve_trig_backend(trig_backend, dtype)
    group_steps = resolve_step_backend(step_backend)
    splits, unlabeled = split_members(codes, tradeoff.size)
    rows_per_step = batch_size * int(np.sum(np.where(tradeoff < 1.0, 3, 2)))
    dense, group = step_plan(step_backend, n, d, rows_per_step, m, dtype.itemsize, work_bytes)
    rng = sampling_rng(seed)
    Xw = X.astype(dtype, copy=False)
    # base: sum_i coef[i] @ phi_i(x) over the blocks already applied to all rows; f = scale * base.
    base = np.zeros(n)
    local_of = np.arange(n) if dense else np.empty(n, dtype=np.int64)
    coef = np.zeros((n_iter, 2 * m))
    blocks = np.empty((n_iter, m, d)) if keep else None
    scale = 1.0
    progress = Progress(n_iter, verbose)
    schedule = dict(n_iter=n_iter, lam=lam, theta=theta, step_offset=step_offset)
    guard = partial(check_scores, tradeoff=tradeoff, **schedule)
    done = n_iter
    groups = group_inputs(group_bounds(n_iter, group, checkpoints),
                          partial(draw_steps, rng, splits, unlabeled, tradeoff, batch_size), dense, seed=seed,
                          n_components=m, n_features=d, gamma=gamma, blocks=blocks, dtype=dtype)

    with RowThreads(n_jobs, trig) as row_threads:
        for members, omega, draws, start, end, cos_s, sin_s in with_features(Xw, groups, row_threads, local_of):
            scores = base if members is None else base[members]
            scale = group_steps(cos_s, sin_s, draws, scores, local_of, coef, base, start, scale,
                                tradeoff=tradeoff, theta=theta, lam=lam, step_offset=step_offset, guard=guard)
            if not dense:
                accumulate(base, Xw, omega, coef[start:end], row_threads, work_bytes)
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
