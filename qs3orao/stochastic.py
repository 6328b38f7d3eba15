"""One quadruply stochastic step: sample rows per split, weigh them by the gradient.

Both training engines draw their rows with :func:`draw_steps` (the plain
reference one step at a time, through :func:`draw_rows`) and weigh them with
:func:`weights_at_rows` (the reference through :func:`gradient_weights`), so
they draw the same rows and apply the same gradient.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_rows", "draw_steps", "gradient_rows", "gradient_weights", "weights_at_rows"]


def draw_rows(rng, splits, unlabeled, tradeoff, batch_size):
    """Sample ``batch_size`` positives, negatives and unlabeled rows for every split.

    Every split draws its unlabeled rows, as Algorithm 1 does, but only those
    of splits whose ``tradeoff < 1`` are returned (the others have zero
    weight).  All indices of a step come from one ``rng.random`` call, so the
    stream is the same whether steps are drawn one at a time or many ahead
    (:func:`draw_steps`, as the fast engine does).

    Returns
    -------
    list of tuple of ndarray
        ``(positives, negatives, unlabeled)`` row indices per split; ``unlabeled``
        is empty for a split whose ``tradeoff`` is 1.
    """
    rows, semi = draw_steps(rng, splits, unlabeled, tradeoff, batch_size, 1)
    k1 = len(splits)
    parts = [rows[0, j * batch_size:(j + 1) * batch_size] for j in range(2 * k1 + semi.size)]
    drawn = dict(zip(semi.tolist(), parts[2 * k1:]))
    return [(parts[j], parts[k1 + j], drawn.get(j, unlabeled[:0])) for j in range(k1)]


def draw_steps(rng, splits, unlabeled, tradeoff, batch_size, n_steps):
    """The rows of ``n_steps`` consecutive steps in the order they are weighed, from one ``rng.random`` call.

    ``rng.random`` fills its array in order, so step ``q``'s rows are those of
    the ``q``-th of ``n_steps`` calls of :func:`draw_rows`, without their
    per-call overhead, already in the order :func:`gradient_rows` gives them.
    Every split draws positives, negatives and, when there are unlabeled rows,
    unlabeled rows (Algorithm 1, whatever the split's weight), so the stream
    depends on the seed and the data only: fits that differ in ``tradeoff``
    draw the same rows, and one pass over several settings shares one stream.

    Returns
    -------
    rows : ndarray of int, shape (n_steps, (2 (k - 1) + semi.size) batch_size)
        Per step, every split's positives, then every split's negatives, then
        the unlabeled rows of the splits ``semi``.
    semi : ndarray of int
        The splits whose unlabeled rows are weighed (``tradeoff < 1``).

    Raises
    ------
    ValueError
        If a split weighs unlabeled rows (``tradeoff < 1``) but there are none.
    """
    semi = np.flatnonzero(np.asarray(tradeoff) < 1.0)
    if semi.size and not unlabeled.size:
        raise ValueError(f"the splits {semi.tolist()} weigh unlabeled rows (tradeoff < 1), but there are none")
    sources = 3 if unlabeled.size else 2
    pools = [pool for pos, neg in splits for pool in (pos, neg, unlabeled)[:sources]]
    sizes = np.array([pool.size for pool in pools])
    # floor(u * size) is uniform on 0..size-1 up to 2^-53; the clip guards the rounding at u -> 1.
    picks = np.minimum((rng.random((n_steps, sizes.size, batch_size)) * sizes[:, None]).astype(np.int64),
                       sizes[:, None] - 1)
    # Each split's pools are its positives, its negatives and (when there are any) its unlabeled rows.
    positives = sources * np.arange(len(splits))
    order = [*positives, *(positives + 1), *(positives[semi] + 2)]
    return np.concatenate([pools[j][picks[:, j]] for j in order], axis=1), semi


def gradient_weights(draws, scores, tradeoff):
    """Rows and weights ``w`` of the stochastic functional gradient ``xi = sum_i w_i k(x_i, .)``.

    This is the paper's Equation (11), with the ``l_5``/``l_6`` terms attached
    to ``x_u`` and ``x_n`` as the derivative demands (Algorithm 1 swaps them):
    the gradient of :func:`qs3orao.objective.split_risk` on the sampled scores,
    averaged over splits, evaluated for all splits at once.  Several settings
    that sampled the same rows (the one-pass path of :func:`qs3orao.engine.train_path`)
    are evaluated at once along leading axes of ``scores`` and ``tradeoff``.

    Parameters
    ----------
    draws : list of tuple of ndarray
        Output of :func:`draw_rows`: every split's positives and negatives,
        and its unlabeled rows (or none), have one common batch size.
    scores : callable
        Maps row indices to the current scores ``f(x)`` of those rows, shape
        ``(..., rows)``; called once.
    tradeoff : ndarray of shape (..., k - 1)
        One weight vector per setting; all settings draw unlabeled rows for the same splits.

    Returns
    -------
    rows : ndarray of int
    weights : ndarray of float, shape (..., rows)
    """
    rows, semi = gradient_rows(draws, tradeoff)
    return rows, weights_at_rows(scores(rows), semi, tradeoff)


def gradient_rows(draws, tradeoff):
    """The rows :func:`gradient_weights` reads, in the order of its weights, without reading any score.

    Parameters
    ----------
    draws : list of tuple of ndarray
        Output of :func:`draw_rows`.
    tradeoff : ndarray of shape (..., k - 1)

    Returns
    -------
    rows : ndarray of int
        Every split's positives, then every split's negatives, then the
        unlabeled rows of the splits ``semi``.
    semi : ndarray of int
        The splits whose unlabeled rows are weighed (drawn, and ``tradeoff < 1`` for every setting).
    """
    drawn = np.array([u.size > 0 for _, _, u in draws])
    semi = np.flatnonzero(drawn & (np.reshape(tradeoff, (-1, drawn.size)) < 1.0).all(axis=0))
    return np.concatenate([*(p for p, _, _ in draws), *(n for _, n, _ in draws), *(draws[j][2] for j in semi)]), semi


def weights_at_rows(f, semi, tradeoff):
    """The weights of :func:`gradient_weights` from the scores ``f`` of the rows :func:`gradient_rows` gave.

    Parameters
    ----------
    f : ndarray of shape (..., rows)
    semi : ndarray of int
        As returned by :func:`gradient_rows`.
    tradeoff : ndarray of shape (..., k - 1)

    Returns
    -------
    ndarray of shape (..., rows)
    """
    splits = tradeoff.shape[-1]
    parts = 2 * splits + semi.size
    batch = f.shape[-1] // parts
    f_parts = f.reshape(-1, parts, batch)
    # sum / batch is what ndarray.mean computes, without its per-call overhead (this runs once per step); summed
    # along the contiguous batch axis, as every setting's own mean is.
    means = (f_parts.sum(axis=-1) / batch).T[:, None, :]
    # Every part (a split's positives, negatives or unlabeled rows) is one row of f_parts and of weights, the
    # settings innermost: each operation below then runs over long contiguous spans instead of one span of
    # ``batch`` per setting (70 settings x 192 rows: 130 us against 210 us per call), element by element the same.
    f_parts = np.ascontiguousarray(f_parts.transpose(1, 2, 0))
    if tradeoff.shape[:-1] != f.shape[:-1]:
        tradeoff = np.broadcast_to(tradeoff, f.shape[:-1] + (splits,))
    labeled_weight = np.ascontiguousarray(tradeoff.reshape(-1, splits).T)[:, None, :]
    fp, fn, fu = f_parts[:splits], f_parts[splits:2 * splits], f_parts[2 * splits:]
    weights = np.empty(f_parts.shape)
    wp, wn, wu = weights[:splits], weights[splits:2 * splits], weights[2 * splits:]
    mean_p, mean_n, mean_u = means[:splits], means[splits:2 * splits], means[2 * splits:]
    # In place, operation by operation as -2 w (1 - fp + mean_n) / batch and 2 w (1 - mean_p + fn) / batch read.
    np.subtract(1.0, fp, out=wp)
    wp += mean_n
    wp *= -2.0 * labeled_weight
    wp /= batch
    np.subtract(1.0, mean_p, out=wn)
    wn += fn
    wn *= 2.0 * labeled_weight
    wn /= batch
    if semi.size:
        # A slice when every split weighs its unlabeled rows: views instead of fancy-indexed copies.
        weighed = slice(None) if semi.size == splits else semi
        twice_unlabeled_weight = 2.0 * (1.0 - labeled_weight[semi])
        wp[weighed] -= twice_unlabeled_weight * (1.0 - fp[weighed] + mean_u) / batch
        wn[weighed] += twice_unlabeled_weight * (1.0 - mean_u + fn[weighed]) / batch
        np.subtract(1.0, mean_p[weighed], out=wu)
        wu += fu
        wu -= 1.0 - fu + mean_n[weighed]
        wu *= twice_unlabeled_weight
        wu /= batch
    weights /= splits
    return np.ascontiguousarray(weights.transpose(2, 0, 1)).reshape(f.shape)
