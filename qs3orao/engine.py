"""The fast training engine behind :class:`qs3orao.QS3ORAO`.

It computes what :mod:`qs3orao._reference` computes (same rows, same blocks,
same coefficients, to rounding) without its O(t^2) cost:

* the scores of every training row are kept up to date, one block at a time
  (``F <- (1 - eta lam) F + phi_t(X) alpha_t``), so a step reads the sampled
  rows' scores instead of re-evaluating every earlier block, and the fit also
  yields the scores of the unlabeled rows;
* the shrinkage of all earlier coefficients is one global factor;
* the frequency blocks are kept in memory when they fit within ``max_memory``
  and regenerated from their seeds otherwise (the paper's memory argument).

Peak memory grows with ``n x d`` and the number of coefficients, never with
``n x D``: feature maps are built in row chunks.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from .kernels import fourier_features, frequency_block, sampling_rng
from .objective import split_members
from .stochastic import draw_rows, gradient_weights

__all__ = ["RandomFeatureModel", "train"]

_CHUNK_BYTES = 32 * 2**20


@dataclass
class RandomFeatureModel:
    """``f(x) = sum_i coef[i] @ phi_{omega_i}(x)`` with ``omega_i = frequency_block(seed, i + 1, ...)``."""

    seed: int
    gamma: float
    n_features: int
    coef: np.ndarray
    blocks: np.ndarray | None = None

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
        """Evaluate ``f`` on the rows of ``X``, in chunks of rows and blocks."""
        m = self.n_components
        n_blocks = self.coef.shape[0]
        group = max(1, 2048 // m)
        rows = max(1, _CHUNK_BYTES // (8 * group * m))
        f = np.zeros(X.shape[0])
        for start in range(0, n_blocks, group):
            stop = min(start + group, n_blocks)
            omega = self.block_range(start, stop).reshape(-1, X.shape[1])
            coef = self.coef[start:stop]
            cos_coef, sin_coef = coef[:, :m].ravel(), coef[:, m:].ravel()
            for r in range(0, X.shape[0], rows):
                projection = X[r:r + rows] @ omega.T
                f[r:r + rows] += (np.cos(projection) @ cos_coef + np.sin(projection) @ sin_coef) / np.sqrt(m)
        return f


def _add_block(F, X, omega, alpha):
    rows = max(1, _CHUNK_BYTES // (8 * 2 * omega.shape[0]))
    for r in range(0, X.shape[0], rows):
        F[r:r + rows] += fourier_features(X[r:r + rows], omega) @ alpha


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


def train(X, codes, tradeoff, *, n_iter, batch_size, n_components, gamma, lam, theta, seed,
          keep_blocks=True, verbose=False):
    """Run the quadruply stochastic iteration.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``, ``-1`` for unlabeled rows.
    tradeoff : ndarray of shape (k - 1,)
    n_iter, batch_size, n_components : int
    gamma, lam, theta : float
        Kernel parameter, regularisation, step ``eta_t = theta / t``.
    seed : int
    keep_blocks : bool
        Keep the frequency blocks (``n_iter x m x d`` floats) for fast prediction.
    verbose : bool

    Returns
    -------
    model : RandomFeatureModel
    train_scores : ndarray of shape (n,)
        ``f_{t+1}`` at every row of ``X``.
    """
    n, d = X.shape
    splits, unlabeled = split_members(codes, tradeoff.size)
    rng = sampling_rng(seed)
    F = np.zeros(n)
    scaled = np.zeros((n_iter, 2 * n_components))
    blocks = np.empty((n_iter, n_components, d)) if keep_blocks else None
    scale = 1.0
    progress = _Progress(n_iter, verbose)
    for i in range(1, n_iter + 1):
        draws = draw_rows(rng, splits, unlabeled, tradeoff, batch_size)
        rows, weights = gradient_weights(draws, F.__getitem__, tradeoff)
        omega = frequency_block(seed, i, n_components, d, gamma)
        eta = theta / i
        alpha = -eta * (weights @ fourier_features(X[rows], omega))
        shrink = 1.0 - eta * lam
        F *= shrink
        _add_block(F, X, omega, alpha)
        scale *= shrink
        if scale == 0.0 or abs(scale) < 1e-200:
            scaled[: i - 1] *= scale
            scale = 1.0
        scaled[i - 1] = alpha / scale
        if keep_blocks:
            blocks[i - 1] = omega
        progress.update(i)
    model = RandomFeatureModel(seed=seed, gamma=gamma, n_features=d, coef=scaled * scale, blocks=blocks)
    return model, F
