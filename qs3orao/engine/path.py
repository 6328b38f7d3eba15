"""Many settings of the weights and the schedule in one pass: :func:`train_path`."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..divergence import SCORE_LIMIT, DivergenceError, check_scores, warn_if_far
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

__all__ = ["train_path"]


def train_path(X, codes, tradeoffs, *, lams, thetas, step_offsets, n_iter, batch_size, n_components, gamma, seed,
               block_storage="auto", max_memory=256 * 2**20, dtype=np.float64, n_jobs=1, trig_backend="auto",
               step_backend="numpy", verbose=False):
    """Run the iteration of :func:`~qs3orao.engine.train` for ``S`` settings of the weights and schedule in one pass.

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
        Shared by all settings, as in :func:`~qs3orao.engine.train`; ``max_memory`` must hold
        the ``S x n_iter x 2 n_components`` coefficients.
    step_backend : {"numpy", "numba"}, default="numpy"
        How each group's steps are taken for every setting
        (:func:`~qs3orao.engine.resolve_step_backend`): products over all settings at once, or
        the settings in compiled loops, one chunk of them per thread of
        ``n_jobs`` (the same values as one loop).  The compiled steps shorten
        the plan's groups as :func:`~qs3orao.engine.train`'s do (:func:`~qs3orao.engine.compiled_group_length`),
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
        If ``step_backend`` is not one of :data:`~qs3orao.engine.STEP_BACKENDS`.
    ImportError
        If ``step_backend="numba"`` and numba cannot be imported.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        Per setting, as :func:`~qs3orao.engine.train` does.
    """
    n, d = X.shape
    m = n_components
    dtype = working_dtype(dtype)
    tradeoffs = np.atleast_2d(np.asarray(tradeoffs, dtype=np.float64))
    lams, thetas, step_offsets = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (lams, thetas, step_offsets))
    path_steps = resolve_step_backend(step_backend, path=True)
    n_settings = tradeoffs.shape[0]
    if not lams.size == thetas.size == step_offsets.size == n_settings:
        raise ValueError(f"tradeoffs, lams, thetas and step_offsets must have one entry per setting, got "
                         f"{n_settings}, {lams.size}, {thetas.size} and {step_offsets.size}")
    n_jobs = resolve_n_jobs(n_jobs, n_rows=n)
    work_bytes, keep = memory_plan(n_iter, m, d, block_storage, max_memory, n_settings=n_settings,
                                   buffer_sets=buffer_sets(n_jobs))
    splits, unlabeled = split_members(codes, tradeoffs.shape[1])
    # The pass reads the unlabeled rows of every split that some setting weighs.
    weighed = tradeoffs.min(axis=0)
    rng = sampling_rng(seed)
    unread = _unread_rows(tradeoffs, batch_size)  # one column per row a step reads
    dense, group = step_plan(step_backend, n, d, unread.shape[1], m, dtype.itemsize, work_bytes)
    Xw = X.astype(dtype, copy=False)
    # Setting first: base[g] and coef[g] are setting g's scores (divided by its scale) and coefficients.
    base = np.zeros((n_settings, n))
    local_of = np.arange(n) if dense else np.empty(n, dtype=np.int64)
    coef = np.zeros((n_settings, n_iter, 2 * m))
    blocks = np.empty((n_iter, m, d)) if keep else None
    state = _PathState(lams, thetas, step_offsets, tradeoffs, n_iter, unread=unread)
    progress = Progress(n_iter, verbose)
    trig = resolve_trig_backend(trig_backend, dtype)
    groups = group_inputs(group_bounds(n_iter, group), partial(draw_steps, rng, splits, unlabeled, weighed, batch_size),
                          dense, seed=seed, n_components=m, n_features=d, gamma=gamma, blocks=blocks, dtype=dtype)

    with RowThreads(n_jobs, trig) as row_threads:
        for members, omega, draws, start, stop, cos_s, sin_s in with_features(Xw, groups, row_threads, local_of):
            path_steps(cos_s, sin_s, draws, local_of, coef, base, start, state, dense=members is None,
                       rows=row_threads)
            if not dense:
                accumulate(base.T, Xw, omega, coef[:, start:stop].transpose(1, 2, 0), row_threads, work_bytes)
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
        """Fold every vanishing scale factor into ``stored`` before it underflows (as :func:`~qs3orao.engine.train`)."""
        for g in np.flatnonzero(np.abs(self.scale) < 1e-200):
            for array in stored:
                array[g] *= self.scale[g]
            self.scale[g] = 1.0
