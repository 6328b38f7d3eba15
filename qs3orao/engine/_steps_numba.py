"""The compiled steps of :func:`qs3orao.engine.train` and :func:`qs3orao.engine.train_path`.

Imported only when ``step_backend="numba"``.

:func:`group_steps` takes one group's steps as the engine's numpy loop
(``qs3orao.engine.steps._group_steps``) takes them, in one compiled loop instead of
a dozen numpy calls per step.  A step reads its rows' scores through the
group's earlier steps, and the caller adds the group's steps to every row
after the group (as the path engine does), so the sums run in another order
than the numpy loop's and the two agree to rounding.  :func:`path_group_steps`
does the same for a chunk of the path's settings, the settings innermost.

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


@numba.njit(**_OPTIONS)
def _read_scores(cos_s, sin_s, local, rows, base, group, done, f):
    """``f[r, j] = base[j, rows[r]]`` plus the group's first ``done`` columns of setting ``j`` at row ``local[r]``.

    Four rows at a time, the settings innermost (contiguous in ``group``), so
    that each loaded coefficient serves four rows.
    """
    n_rows, n_settings = f.shape
    for r in range(n_rows):
        for j in range(n_settings):
            f[r, j] = base[j, rows[r]]
    quad = n_rows - n_rows % 4
    for r in range(0, quad, 4):
        a0, a1, a2, a3 = f[r], f[r + 1], f[r + 2], f[r + 3]
        w0, w1, w2, w3 = local[r], local[r + 1], local[r + 2], local[r + 3]
        for k in range(done):
            c0, c1, c2, c3 = cos_s[w0, k], cos_s[w1, k], cos_s[w2, k], cos_s[w3, k]
            s0, s1, s2, s3 = sin_s[w0, k], sin_s[w1, k], sin_s[w2, k], sin_s[w3, k]
            gc, gs = group[0, k], group[1, k]
            for j in range(n_settings):
                x, y = gc[j], gs[j]
                a0[j] += c0 * x + s0 * y
                a1[j] += c1 * x + s1 * y
                a2[j] += c2 * x + s2 * y
                a3[j] += c3 * x + s3 * y
    for r in range(quad, n_rows):
        a, w = f[r], local[r]
        for k in range(done):
            c, s = cos_s[w, k], sin_s[w, k]
            gc, gs = group[0, k], group[1, k]
            for j in range(n_settings):
                a[j] += c * gc[j] + s * gs[j]


@numba.njit(**_OPTIONS)
def path_group_steps(cos_s, sin_s, local_rows, step_rows, semi, base, coef, group, scale, alive, unread, tradeoffs,
                     thetas, lams, step_offsets, start, first, score_limit, f):
    """Take the steps ``start + first + 1 ..`` of one group for a chunk of the path's settings.

    The compiled :func:`qs3orao.engine.steps._path_group_steps` for one chunk:
    ``step_rows[q]`` and ``local_rows[q]`` are step ``q``'s rows among all rows
    (``base``'s columns) and among ``cos_s``'s.  ``base`` (``S x n``),
    ``coef`` (``S x n_iter x 2m``), ``scale`` and ``alive`` are the chunk's
    settings' own (views written in place); ``group`` (``2 x G m x S``) receives
    the group's coefficients over ``sqrt(m)`` in the features' dtype (cosine
    part, sine part).  A diverged setting (not ``alive``) is skipped: its
    stored values are zero and stay so.  ``unread`` (``rows x S``) marks the
    rows a setting's own fit does not read (:func:`qs3orao.engine.path._unread_rows`):
    they do not count in its guard and are set to zero where they leave the
    limit (their weight is zero).

    Returns
    -------
    failed : int
        The first step ``q`` at which an alive setting's sampled scores, left
        in ``f`` (``rows x S``, divided by the scale), leave ``score_limit``
        (nothing of that step taken, for any setting), or -1.
    """
    m = coef.shape[2] // 2
    root = math.sqrt(m)
    n_rows, n_settings = f.shape
    scaled = np.empty(n_rows)
    weights = np.empty(n_rows)
    all_weights = np.zeros((n_rows, n_settings))
    alpha = np.empty((2 * m, n_settings))
    for q in range(first, local_rows.shape[0]):
        i = start + q + 1
        done = q * m
        local = local_rows[q]
        _read_scores(cos_s, sin_s, local, step_rows[q], base, group, done, f)
        for r in range(n_rows):
            for j in range(n_settings):
                # The guard's max(|f|) |scale| <= limit, element by element (nan fails too).
                if alive[j] and not abs(f[r, j]) * abs(scale[j]) <= score_limit:
                    if not unread[r, j]:
                        return q
                    f[r, j] = 0.0
        for j in range(n_settings):
            if alive[j]:
                for r in range(n_rows):
                    scaled[r] = scale[j] * f[r, j]
                weights_into(scaled, semi, tradeoffs[j], weights)
                for r in range(n_rows):
                    all_weights[r, j] = weights[r]
        alpha[:] = 0.0
        for r in range(n_rows):
            w = all_weights[r]
            for k in range(m):
                c, s = cos_s[local[r], done + k], sin_s[local[r], done + k]
                a, b = alpha[k], alpha[m + k]
                for j in range(n_settings):
                    a[j] += c * w[j]
                    b[j] += s * w[j]
        for j in range(n_settings):
            if not alive[j]:
                continue
            eta = thetas[j] / (i + step_offsets[j])
            scale[j] *= 1.0 - eta * lams[j]
            if abs(scale[j]) < 1e-200:
                coef[j] *= scale[j]
                base[j] *= scale[j]
                group[:, :done, j] *= scale[j]
                scale[j] = 1.0
            for k in range(2 * m):
                coef[j, i - 1, k] = (-eta / root) * alpha[k, j] / scale[j]
            for k in range(m):
                group[0, done + k, j] = coef[j, i - 1, k] / root
                group[1, done + k, j] = coef[j, i - 1, m + k] / root
    return -1
