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

__all__ = ["pair_risk", "split_risk", "ordinal_risk", "ordinal_risk_hessian", "risk_hessian_of_sets", "split_members"]


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
    mean_a, mean_b = FA.mean(axis=0), FB.mean(axis=0)
    value = (1.0 - mean_a + mean_b) ** 2 + FA.var(axis=0) + FB.var(axis=0)
    grad_a = -2.0 * (1.0 - FA + mean_b) / FA.shape[0]
    grad_b = 2.0 * (1.0 - mean_a + FB) / FB.shape[0]
    return value, grad_a, grad_b


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
    value, grad_p, grad_n = pair_risk(Fp, Fn)
    value, grad_p, grad_n = tradeoff * value, tradeoff * grad_p, tradeoff * grad_n
    if np.all(tradeoff == 1.0) or Fu is None or Fu.size == 0:
        return value, grad_p, grad_n, np.zeros(0)
    pu, grad_p_pu, grad_u_pu = pair_risk(Fp, Fu)
    un, grad_u_un, grad_n_un = pair_risk(Fu, Fn)
    weight = 1.0 - tradeoff
    value += weight * (pu + un - 0.5)
    return (value, grad_p + weight * grad_p_pu, grad_n + weight * grad_n_un,
            weight * (grad_u_pu + grad_u_un))


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
