"""One quadruply stochastic step: sample rows per split, weigh them by the gradient.

Both training engines (the plain reference and the fast one) call these two
functions, so they draw the same rows and apply the same gradient.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_rows", "draw_steps", "gradient_rows", "gradient_weights", "weights_at_rows"]


def draw_rows(rng, splits, unlabeled, tradeoff, batch_size):
    """Sample ``batch_size`` positives, negatives and unlabeled rows for every split.

    Unlabeled rows are drawn only for splits whose ``tradeoff < 1`` (they have
    zero weight otherwise).  All indices of a step come from one
    ``rng.random`` call, so the stream is the same whether steps are drawn one
    at a time or many ahead (:func:`draw_steps`, as the fast engine does).

    Returns
    -------
    list of tuple of ndarray
        ``(positives, negatives, unlabeled)`` row indices per split.
    """
    return draw_steps(rng, splits, unlabeled, tradeoff, batch_size, 1)[0]


def draw_steps(rng, splits, unlabeled, tradeoff, batch_size, n_steps):
    """The draws of :func:`draw_rows` for ``n_steps`` consecutive steps, from one ``rng.random`` call.

    ``rng.random`` fills its array in order, so the rows are those of
    ``n_steps`` calls of :func:`draw_rows`, without their per-call overhead.

    Returns
    -------
    list of list of tuple of ndarray
        Per step, what :func:`draw_rows` returns.
    """
    pools = [pool for (pos, neg), weight in zip(splits, tradeoff)
             for pool in ((pos, neg, unlabeled) if weight < 1.0 else (pos, neg))]
    sizes = np.array([pool.size for pool in pools])
    # floor(u * size) is uniform on 0..size-1 up to 2^-53; the clip guards the rounding at u -> 1.
    picks = np.minimum((rng.random((n_steps, sizes.size, batch_size)) * sizes[:, None]).astype(np.int64),
                       sizes[:, None] - 1)
    chosen = [pool[picks[:, j]] for j, pool in enumerate(pools)]
    steps = []
    for q in range(n_steps):
        rows = iter(pool_rows[q] for pool_rows in chosen)
        steps.append([(next(rows), next(rows), next(rows) if weight < 1.0 else unlabeled[:0]) for weight in tradeoff])
    return steps


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
    batch = f.shape[-1] // (2 * splits + semi.size)
    lead = f.shape[:-1]
    fp = f[..., :splits * batch].reshape(lead + (splits, batch))
    fn = f[..., splits * batch:2 * splits * batch].reshape(lead + (splits, batch))
    fu = f[..., 2 * splits * batch:].reshape(lead + (semi.size, batch))
    # sum / batch is what ndarray.mean computes, without its per-call overhead (this runs once per step).
    mean_p, mean_n = fp.sum(axis=-1, keepdims=True) / batch, fn.sum(axis=-1, keepdims=True) / batch
    labeled_weight = tradeoff[..., None]
    grad_p = -2.0 * labeled_weight * (1.0 - fp + mean_n) / batch
    grad_n = 2.0 * labeled_weight * (1.0 - mean_p + fn) / batch
    grad_u = fu[..., :0, :]
    if semi.size:
        unlabeled_weight = 1.0 - tradeoff[..., semi, None]
        mean_u = fu.sum(axis=-1, keepdims=True) / batch
        grad_p[..., semi, :] -= 2.0 * unlabeled_weight * (1.0 - fp[..., semi, :] + mean_u) / batch
        grad_n[..., semi, :] += 2.0 * unlabeled_weight * (1.0 - mean_u + fn[..., semi, :]) / batch
        grad_u = 2.0 * unlabeled_weight * ((1.0 - mean_p[..., semi, :] + fu) - (1.0 - fu + mean_n[..., semi, :])) / batch
    weights = np.concatenate([grad_p.reshape(lead + (-1,)), grad_n.reshape(lead + (-1,)),
                              grad_u.reshape(lead + (-1,))], axis=-1)
    return weights / splits
