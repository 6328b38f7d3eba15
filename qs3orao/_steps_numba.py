"""The compiled steps of :func:`qs3orao.engine.train` (imported only when ``step_backend="numba"``).

:func:`group_steps` takes one group's steps as the engine's numpy loop
(``qs3orao.engine._group_steps``) takes them, in one compiled loop instead of
a dozen numpy calls per step.  A step reads its rows' scores through the
group's earlier steps, and the caller adds the group's steps to every row
after the group (as the path engine does), so the sums run in another order
than the numpy loop's and the two agree to rounding.

Compiled at first use, cached on disk beside this file.
"""

import math

import numba
import numpy as np

_OPTIONS = dict(nogil=True, cache=True, error_model="numpy")


@numba.njit(**_OPTIONS)
def weights_into(f, semi, tradeoff, out):
    """:func:`qs3orao.stochastic.weights_at_rows` of one setting, written into ``out``."""
    splits = tradeoff.size
    parts = 2 * splits + semi.size
    batch = f.size // parts
    means = np.empty(parts)
    for p in range(parts):
        total = 0.0
        for b in range(p * batch, (p + 1) * batch):
            total += f[b]
        means[p] = total / batch
    for j in range(splits):
        pos, neg = j * batch, (splits + j) * batch
        for b in range(batch):
            out[pos + b] = (1.0 - f[pos + b] + means[splits + j]) * (-2.0 * tradeoff[j]) / batch
            out[neg + b] = (1.0 - means[j] + f[neg + b]) * (2.0 * tradeoff[j]) / batch
    for s in range(semi.size):
        j = semi[s]
        pos, neg, unl = j * batch, (splits + j) * batch, (2 * splits + s) * batch
        mean_u = means[2 * splits + s]
        twice = 2.0 * (1.0 - tradeoff[j])
        for b in range(batch):
            out[pos + b] -= twice * (1.0 - f[pos + b] + mean_u) / batch
            out[neg + b] += twice * (1.0 - mean_u + f[neg + b]) / batch
            out[unl + b] = ((1.0 - means[j] + f[unl + b]) - (1.0 - f[unl + b] + means[splits + j])) * twice / batch
    for b in range(out.size):
        out[b] /= splits


@numba.njit(**_OPTIONS)
def group_steps(cos_s, sin_s, local_rows, semi, scores, base, dense, coef, start, scale, tradeoff, theta, lam,
                step_offset, score_limit, group, f):
    """Take the steps ``start + 1 ..`` of one group (``local_rows[q]``: step ``q``'s rows among ``cos_s``'s).

    A step reads its rows' scores as ``scores`` (the group's start) plus the
    group's earlier steps at those rows; ``group`` (``2 x G m``, zero on entry)
    receives the group's coefficients over ``sqrt(m)`` (cosine part, sine part),
    for the caller to add to every row after the group.  ``coef``, ``base``,
    ``scores`` and ``group`` are divided by the returned scale; when it would
    vanish it is folded into them (``scores`` only when not ``dense``, where it is ``base``).

    Returns
    -------
    scale : float
        The global scale after the group, or at the failing step.
    failed : int
        The first step ``q`` whose sampled scores, left in ``f``, are
        non-finite or beyond ``score_limit`` (nothing of it taken), or -1.
    """
    m = coef.shape[1] // 2
    root = math.sqrt(m)
    n_rows = local_rows.shape[1]
    weights = np.empty(n_rows)
    alpha = np.empty(2 * m)
    for q in range(local_rows.shape[0]):
        i = start + q + 1
        rows = local_rows[q]
        done = q * m
        failed = False
        for r in range(n_rows):
            total = scores[rows[r]]
            for k in range(done):
                total += cos_s[rows[r], k] * group[0, k] + sin_s[rows[r], k] * group[1, k]
            f[r] = scale * total
            failed |= not abs(f[r]) <= score_limit  # nan too
        if failed:
            return scale, q
        weights_into(f, semi, tradeoff, weights)
        eta = theta / (i + step_offset)
        for j in range(m):
            c = 0.0
            s = 0.0
            for r in range(n_rows):
                c += weights[r] * cos_s[rows[r], done + j]
                s += weights[r] * sin_s[rows[r], done + j]
            alpha[j] = (-eta / root) * c
            alpha[m + j] = (-eta / root) * s
        scale *= 1.0 - eta * lam
        if abs(scale) < 1e-200:
            coef[:i - 1] *= scale
            base *= scale
            if not dense:
                scores *= scale
            group[:, :done] *= scale
            scale = 1.0
        for j in range(m):
            coef[i - 1, j] = alpha[j] / scale
            coef[i - 1, m + j] = alpha[m + j] / scale
            group[0, done + j] = coef[i - 1, j] / root
            group[1, done + j] = coef[i - 1, m + j] / root
    return scale, -1
