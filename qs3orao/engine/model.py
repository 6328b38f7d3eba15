"""The fitted model, ``f(x) = sum_i coef[i] @ phi_{omega_i}(x)``, and the pass that adds blocks to scores."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import frequency_block
from ..trig import accumulate as _trig_accumulate
from ..trig import resolve_trig_backend
from .plan import WORK_BYTES
from .threads import RowThreads, resolve_n_jobs

__all__ = ["RandomFeatureModel", "accumulate"]

# Frequencies (columns) per group of blocks of an evaluation.
_PREDICT_COLUMNS = 2048


def accumulate(F, X, omega, coef, rows, work_bytes):
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
    as in :func:`~qs3orao.engine.resolve_n_jobs` on construction),
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
    work_bytes: int = WORK_BYTES
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
        with RowThreads(self.n_jobs, self.trig_backend) as rows:
            for start in range(0, self.coef.shape[0], group):
                stop = min(start + group, self.coef.shape[0])
                omega = self.block_range(start, stop).reshape(-1, X.shape[1]).astype(self.dtype)
                accumulate(f, X, omega, self.coef[start:stop], rows, self.work_bytes)
        return f
