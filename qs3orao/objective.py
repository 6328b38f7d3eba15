r"""The paper's semi-supervised ordinal AUC risk with the squared pairwise loss.

For split ``j`` (negatives: class ``<= j``, positives: class ``> j``, U: unlabeled)

.. math::

    R^j = \gamma^j L(P_j, N_j) + (1 - \gamma^j)\,(L(P_j, U) + L(U, N_j) - 1/2),
    \qquad L(A, B) = \operatorname{mean}_{a \in A,\, b \in B} (1 - f(a) + f(b))^2,

and the risk is ``R = mean_j R^j`` (paper, Equations (4)-(9) with
``l_s(u, v) = (1 - u + v)^2``).  ``L`` has the closed form
``(1 - mu_A + mu_B)^2 + var_A + var_B`` (population variances), so the risk
and its gradient with respect to the function values cost O(n), with no
pairwise loop.  The same formulas, applied to sampled batches, give the
stochastic functional gradient of the training loop: within a batch every
sampled positive is paired with every sampled negative (and unlabeled row),
which reduces to the paper's single-sample gradient when ``batch_size = 1``.
"""

from __future__ import annotations

import numpy as np

from .validation import UNLABELED

__all__ = ["pair_risk", "split_risk", "ordinal_risk", "ordinal_risk_value", "ordinal_risk_hessian",
           "risk_hessian_of_sets", "split_members"]


def pair_risk(FA, FB):
    """Mean of ``(1 - FA[a] + FB[b])^2`` over all pairs, and its gradients.

    Parameters
    ----------
    FA, FB : ndarray of shape (n_a,), (n_b,), or (n_a, S), (n_b, S)
        Scores of the set ranked higher (A) and lower (B); with ``S`` columns,
        each column is a function of its own (one value per column).

    Returns
    -------
    value : float or ndarray of shape (S,)
    grad_a : ndarray of shape (n_a,) or (n_a, S)
        Partial derivatives with respect to ``FA``.
    grad_b : ndarray of shape (n_b,) or (n_b, S)
        Partial derivatives with respect to ``FB``.
    """
    a, b = _moments(FA), _moments(FB)
    return (_pair_value(a, b), *_pair_gradients(FA, FB, a, b))


def _moments(F):
    """Mean and population variance of a set's scores (per column)."""
    return F.mean(axis=0), F.var(axis=0)


def _pair_value(a, b):
    """:func:`pair_risk`'s value from the two sets' :func:`_moments`: ``(1 - mu_A + mu_B)^2 + var_A + var_B``."""
    return (1.0 - a[0] + b[0]) ** 2 + a[1] + b[1]


def _pair_gradients(FA, FB, a, b):
    """:func:`pair_risk`'s gradients, given the two sets' :func:`_moments`."""
    return -2.0 * (1.0 - FA + b[0]) / FA.shape[0], 2.0 * (1.0 - a[0] + FB) / FB.shape[0]


def _split_value(p, n, u, tradeoff):
    """:func:`split_risk`'s value from the sets' :func:`_moments` (``u`` None when the unlabeled terms are absent)."""
    value = tradeoff * _pair_value(p, n)
    if u is not None:
        value += (1.0 - tradeoff) * (_pair_value(p, u) + _pair_value(u, n) - 0.5)
    return value


def split_risk(Fp, Fn, Fu, tradeoff):
    """Risk ``R^j`` of one split and its gradients.

    Parameters
    ----------
    Fp, Fn : ndarray
        Scores of the split's positive and negative rows, one column per
        function when 2-D (see :func:`pair_risk`).
    Fu : ndarray or None
        Scores of unlabeled rows; may be None (or empty) when ``tradeoff == 1``.
    tradeoff : float or ndarray of shape (S,)
        ``gamma^j`` in [0, 1], per column when the scores have columns.

    Returns
    -------
    value : float or ndarray of shape (S,)
    grad_p, grad_n, grad_u : ndarray
        ``grad_u`` is an empty array when the unlabeled terms are absent.
    """
    p, n = _moments(Fp), _moments(Fn)
    grad_p, grad_n = (tradeoff * grad for grad in _pair_gradients(Fp, Fn, p, n))
    if not _draws_unlabeled(Fu, tradeoff):
        return _split_value(p, n, None, tradeoff), grad_p, grad_n, np.zeros(0)
    u = _moments(Fu)
    grad_p_pu, grad_u_pu = _pair_gradients(Fp, Fu, p, u)
    grad_u_un, grad_n_un = _pair_gradients(Fu, Fn, u, n)
    weight = 1.0 - tradeoff
    return (_split_value(p, n, u, tradeoff), grad_p + weight * grad_p_pu, grad_n + weight * grad_n_un,
            weight * (grad_u_pu + grad_u_un))


def _draws_unlabeled(Fu, tradeoff):
    """Whether a split's unlabeled terms are present: unlabeled scores and a trade-off below 1."""
    return not (np.all(tradeoff == 1.0) or Fu is None or Fu.size == 0)


def split_members(codes, n_splits):
    """Row indices of each split: ``[(positives, negatives), ...]`` and the unlabeled rows."""
    labeled = codes != UNLABELED
    splits = [(np.flatnonzero(codes > j), np.flatnonzero(labeled & (codes <= j))) for j in range(n_splits)]
    return splits, np.flatnonzero(~labeled)


def ordinal_risk(F, codes, tradeoff):
    """The paper's risk ``R_mu`` (Equation (9), squared loss) and its gradient in ``F``.

    Parameters
    ----------
    F : ndarray of shape (n,) or (n, S)
        Scores of every training row; with ``S`` columns, ``S`` functions at once.
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``; ``-1`` for unlabeled rows.
    tradeoff : ndarray of shape (k - 1,) or (k - 1, S)
        The split weights, per column when ``F`` has columns.

    Returns
    -------
    value : float or ndarray of shape (S,)
    grad : ndarray of shape (n,) or (n, S)
    """
    splits, unlabeled = split_members(codes, tradeoff.shape[0])
    value, grad, Fu = 0.0, np.zeros_like(F, dtype=np.float64), F[unlabeled]
    for (pos, neg), weight in zip(splits, tradeoff):
        r, gp, gn, gu = split_risk(F[pos], F[neg], Fu, weight)
        value += r
        grad[pos] += gp
        grad[neg] += gn
        if gu.size:
            grad[unlabeled] += gu
    return value / tradeoff.shape[0], grad / tradeoff.shape[0]


def ordinal_risk_value(F, codes, tradeoff):
    """:func:`ordinal_risk`'s value alone (equal to it bit for bit), each set's moments computed once.

    Parameters
    ----------
    F : ndarray of shape (n,) or (n, S)
    codes : ndarray of int, shape (n,)
    tradeoff : ndarray of shape (k - 1,) or (k - 1, S)

    Returns
    -------
    float or ndarray of shape (S,)
    """
    splits, unlabeled = split_members(codes, tradeoff.shape[0])
    Fu = F[unlabeled]
    u = _moments(Fu) if Fu.size else None
    value = 0.0
    for (pos, neg), weight in zip(splits, tradeoff):
        value += _split_value(_moments(F[pos]), _moments(F[neg]), u if _draws_unlabeled(Fu, weight) else None, weight)
    return value / tradeoff.shape[0]


def _add_pair_hessian(H, A, B, weight):
    H[A, A] += 2.0 * weight / A.size
    H[B, B] += 2.0 * weight / B.size
    cross = 2.0 * weight / (A.size * B.size)
    H[np.ix_(A, B)] -= cross
    H[np.ix_(B, A)] -= cross


def ordinal_risk_hessian(codes, tradeoff):
    """Constant Hessian of :func:`ordinal_risk` in ``F`` (the risk is quadratic).

    Returns
    -------
    ndarray of shape (n, n)
    """
    splits, unlabeled = split_members(codes, tradeoff.size)
    return risk_hessian_of_sets([(pos, neg, unlabeled) for pos, neg in splits], tradeoff, codes.size)


def risk_hessian_of_sets(sets, tradeoff, n):
    """Hessian in the scores of ``mean_j R^j`` with the rows of split ``j`` given as index sets.

    Parameters
    ----------
    sets : sequence of (positives, negatives, unlabeled) index arrays, one per split
        The whole classes (the risk) or one step's sampled rows (a sampled risk).
    tradeoff : ndarray of shape (k - 1,)
    n : int
        Number of scores.

    Returns
    -------
    ndarray of shape (n, n)
    """
    H = np.zeros((n, n))
    for (pos, neg, unlabeled), weight in zip(sets, tradeoff):
        _add_pair_hessian(H, pos, neg, weight)
        if weight < 1.0 and unlabeled.size:
            _add_pair_hessian(H, pos, unlabeled, 1.0 - weight)
            _add_pair_hessian(H, unlabeled, neg, 1.0 - weight)
    return H / tradeoff.size
