"""How one group's steps are taken, for one setting (:func:`~qs3orao.engine.train`) or many (``train_path``).

Each runs as numpy calls per step, or as one loop compiled with numba
(:mod:`qs3orao.engine._steps_numba`); :func:`resolve_step_backend` chooses.
"""

from __future__ import annotations

import threading
from functools import partial

import numpy as np

from ..divergence import SCORE_LIMIT
from ..schedule import step_size
from ..stochastic import weights_at_rows
from ..validation import plain

__all__ = ["STEP_BACKENDS", "resolve_step_backend"]

STEP_BACKENDS = ("numpy", "numba")
# Chunks per thread of the path's all-row update.
_UPDATE_CHUNKS = 4


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
        The steps of :func:`~qs3orao.engine.train_path` (every setting of a pass) instead of
        :func:`~qs3orao.engine.train`'s.

    Raises
    ------
    ValueError
        If ``step_backend`` is not one of :data:`STEP_BACKENDS`.
    ImportError
        If ``step_backend="numba"`` and numba cannot be imported.
    """
    if not isinstance(step_backend, str) or step_backend not in STEP_BACKENDS:
        raise ValueError(f"step_backend must be one of {STEP_BACKENDS}, got {plain(step_backend)}")
    if step_backend == "numpy":
        return _path_group_steps if path else _group_steps
    try:
        from ._steps_numba import group_steps, path_group_steps
    except ImportError as error:
        raise ImportError(f"step_backend='numba' needs numba, which cannot be imported ({error}); install it "
                          f"with pip install 'qs3orao[fast]', or choose step_backend='numpy'") from error
    if path:
        return partial(_compiled_path_group_steps, kernel=path_group_steps)
    return partial(_compiled_group_steps, kernel=group_steps)


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
