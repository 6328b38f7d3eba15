"""How a fit spends its memory budget and groups its steps.

:func:`memory_plan` splits ``max_memory`` between the coefficients, the
feature buffers and the kept frequency blocks; :func:`group_plan` chooses how
many steps share one pass over the features, and whether a group's rows are
all rows ("dense") or only its sampled rows ("sparse"); the compiled steps
shorten that group (:func:`compiled_group_length`).
"""

from __future__ import annotations

import numpy as np

from ..validation import check_memory_budget, plain

__all__ = ["BLOCK_STORAGE", "WORK_BYTES", "buffer_sets", "compiled_group_length", "group_plan", "memory_plan",
           "step_plan", "working_dtype"]

BLOCK_STORAGE = ("auto", "memory", "regenerate")
#: Largest budget of one set of feature buffers.
WORK_BYTES = 32 * 2**20
_MIN_WORK_BYTES = 2**20
_MAX_GROUP = 64
# The dense plan needs at least this many blocks per group to amortise the per-group overhead.
_MIN_DENSE_GROUP = 8
# In the sparse plan the group's sampled rows are featurised twice; keep them below n / 8.
_SPARSE_SHARE = 8
# compiled_group_length's constants.  With one thread, 176 rows per step and m = 4, the compiled steps' time is
# flat around its best G: 14-32 on 2,500 x 14 data, 4-8 on 20,000 x 14, 3-10 on 50,000 x 14 (4-8 with m = 16,
# 4 with m = 32), and 64 on 1,000 features, where the data exceed the cache.  On one train_path pass over 77
# settings (2,400 x 14, 320 rows per step) the best G is 8-12 and the rule gives 10; G = 64 is 1.6 times slower.
_COMPILED_GROUP_WORK = 2**17
_COMPILED_CACHE_BYTES = 8 * 2**20
_MIN_COMPILED_GROUP = 4


def working_dtype(dtype):
    """``dtype`` as a numpy dtype, float64 or float32: the precision of the projections and features.

    Raises
    ------
    ValueError
        If ``dtype`` is another type.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    return dtype


def memory_plan(n_iter, n_components, n_features, block_storage="auto", max_memory=256 * 2**20, n_settings=1,
                buffer_sets=1):
    """Check that the coefficients fit, and split the rest of the budget between buffers and blocks.

    Parameters
    ----------
    n_iter, n_components, n_features : int
    block_storage : {"auto", "memory", "regenerate"}
    max_memory : int or float
        A finite number > 0: bytes the engine may use beyond the data and the length-``n`` score
        vectors: the ``n_iter x 2 n_components`` float64 coefficients, the
        feature buffers and the kept frequency blocks.
    n_settings : int, default=1
        Coefficient vectors per iteration (one per setting of :func:`~qs3orao.engine.train_path`).
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
        If ``max_memory`` is not a finite number > 0, or the coefficients
        alone exceed it (checked before anything is allocated).
    """
    if block_storage not in BLOCK_STORAGE:
        raise ValueError(f"block_storage must be one of {BLOCK_STORAGE}, got {plain(block_storage)}")
    check_memory_budget(max_memory, "max_memory")
    coef_bytes = n_settings * n_iter * 2 * n_components * 8
    if coef_bytes > max_memory:
        settings = "" if n_settings == 1 else f" for {n_settings} settings"
        raise ValueError(
            f"n_iter={n_iter} with n_components={n_components}{settings} needs {coef_bytes / 2**20:,.1f} MiB for the "
            f"coefficients alone (n_iter x 2 n_components float64), more than max_memory="
            f"{max_memory / 2**20:,.1f} MiB; lower n_iter or n_components, or raise max_memory")
    rest = max_memory - coef_bytes
    work = int(min(WORK_BYTES, max(_MIN_WORK_BYTES, rest // 2)))
    if block_storage != "auto":
        return work, block_storage == "memory"
    return work, n_iter * n_components * n_features * 8 <= rest - buffer_sets * work


def buffer_sets(n_jobs):
    """Sets of feature buffers a run with ``n_jobs`` threads holds (:func:`~qs3orao.engine.groups.with_features`)."""
    return 2 if n_jobs > 1 else 1


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


def step_plan(step_backend, n_rows, n_features, rows_per_step, n_components, itemsize, work_bytes):
    """:func:`group_plan`'s ``(dense, group)``, the group shortened by :func:`compiled_group_length` for compiled steps.

    ``rows_per_step`` counts the rows every step reads: in one pass over
    several settings (:func:`~qs3orao.engine.train_path`), the unlabeled rows of every split
    that some setting weighs.
    """
    dense, group = group_plan(n_rows, rows_per_step, n_components, itemsize, work_bytes)
    if step_backend == "numba":
        group = compiled_group_length(group, n_rows=n_rows, n_features=n_features, rows_per_step=rows_per_step,
                                      n_components=n_components, itemsize=itemsize)
    return dense, group
