r"""Claim 1: the AUC risk identity ``R_PN = R_PU + R_NU - 1/2`` and its surrogate.

For a split with positives ``P``, negatives ``N`` and unlabeled rows ``U`` drawn
from the mixture ``pi p_+ + (1 - pi) p_-``, the paper (after Xie and Li, 2018)
uses ``R_PN = R_PU + R_NU - 1/2``.  In finite form the identity is exact when
``U`` is a mixture of the empirical ``P`` and ``N`` (here: ``P`` repeated
``m_p`` times pooled with ``N`` repeated ``m_n`` times) and the zero-one loss
``l01(u, v) = (1 - sign(u - v)) / 2`` counts ties as one half, because
``l01(u, v) + l01(v, u) = 1`` makes every within-set risk (self-pairs included)
equal to ``1/2``.

The algorithm minimises the squared surrogate ``l_s(u, v) = (1 - u + v)^2``,
for which ``l_s(u, v) + l_s(v, u) = 2 + 2 (u - v)^2`` and ``l_s(u, u) = 1``.
With the same mixture one gets

.. math::

    R_{PU} + R_{UN} - \tfrac12 = R_{PN} + \tfrac12 + 2\pi\,\mathrm{Var}_P(f)
                                 + 2(1 - \pi)\,\mathrm{Var}_N(f),

a bias that depends on ``f``: the semi-supervised objective is not unbiased
for the surrogate, and it penalises the within-class variance of the scores.
Every risk here is computed exactly, in rational arithmetic, from the scores
(each float score is an exact rational).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from qs3orao.exact import exact_solution, objective_value
from qs3orao.objective import split_members

__all__ = [
    "PAIR_LOSSES", "pairwise_risk", "empirical_mixture", "identity_gap",
    "squared_identity_bias", "variance_penalty_effect",
]

HALF = Fraction(1, 2)


def _zero_one(u, v):
    return Fraction(int(u < v)) + HALF * int(u == v)


def _squared(u, v):
    return (1 - u + v) ** 2


PAIR_LOSSES = {"zero_one": _zero_one, "squared": _squared}


def pairwise_risk(FA, FB, loss):
    """Exact ``mean_{a in A, b in B} loss(f(a), f(b))`` (A ranked above B).

    Parameters
    ----------
    FA, FB : sequence of float
        Scores; each is converted to an exact :class:`fractions.Fraction`.
    loss : {"zero_one", "squared"}

    Returns
    -------
    Fraction
    """
    pair = PAIR_LOSSES[loss]
    A, B = [Fraction(a) for a in FA], [Fraction(b) for b in FB]
    return sum(pair(a, b) for a in A for b in B) / (len(A) * len(B))


def empirical_mixture(FP, FN, mult_p, mult_n):
    """Scores of ``U``: ``P`` repeated ``mult_p`` times pooled with ``N`` repeated ``mult_n`` times."""
    return list(FP) * mult_p + list(FN) * mult_n


def identity_gap(FP, FN, FU, loss):
    """``R_PU + R_UN - 1/2 - R_PN``, exactly; zero when the identity holds."""
    return (pairwise_risk(FP, FU, loss) + pairwise_risk(FU, FN, loss) - HALF
            - pairwise_risk(FP, FN, loss))


def _variance(values):
    values = [Fraction(v) for v in values]
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def squared_identity_bias(FP, FN, mult_p, mult_n):
    """The closed form ``1/2 + 2 pi Var_P + 2 (1 - pi) Var_N`` of the squared-loss gap.

    ``pi = mult_p |P| / (mult_p |P| + mult_n |N|)`` is the share of positives in ``U``.
    """
    pi = Fraction(mult_p * len(FP), mult_p * len(FP) + mult_n * len(FN))
    return HALF + 2 * pi * _variance(FP) + 2 * (1 - pi) * _variance(FN)


def _within_class_variance(scores, codes, n_splits):
    splits, _ = split_members(codes, n_splits)
    return float(np.mean([scores[pos].var() + scores[neg].var() for pos, neg in splits]))


def variance_penalty_effect(X, y, *, gamma, lam):
    """Does the surrogate bias move the minimiser?  Compare ``f*`` with and without ``U``.

    The unlabeled set is a copy of the labeled rows (the exact empirical
    mixture), so for the zero-one loss both objectives below would be equal up
    to a constant.  ``f*_PN`` minimises the objective with ``gamma^j = 1``
    (labeled pairs only), ``f*_U`` the one with ``gamma^j = 0`` (the
    ``R_PU + R_UN - 1/2`` estimate only).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Labeled rows.
    y : ndarray of shape (n,)
        Their ordinal labels.
    gamma, lam : float

    Returns
    -------
    dict
        ``objective_gap_pn``, ``objective_gap_u``: the difference of the two
        objectives at ``f*_PN`` and at ``f*_U`` minus the closed-form bias
        (zero to rounding when the closed form is right);
        ``relative_shift``: ``||F*_U - F*_PN|| / ||F*_PN||`` on the labeled rows;
        ``variance_pn``, ``variance_u``: mean within-class score variance.
    """
    n = X.shape[0]
    XX, yy = np.vstack([X, X]), np.concatenate([y, np.full(n, -1)])
    sol_pn = exact_solution(XX, yy, gamma=gamma, lam=lam, tradeoff=1.0)
    sol_u = exact_solution(XX, yy, gamma=gamma, lam=lam, tradeoff=0.0)
    codes, K = sol_pn.codes, sol_pn.kernel
    n_splits = sol_pn.tradeoff.size
    splits, _ = split_members(codes, n_splits)

    def gap_minus_bias(coef):
        scores = K @ coef
        gap = (objective_value(coef, K, codes, sol_u.tradeoff, lam)
               - objective_value(coef, K, codes, sol_pn.tradeoff, lam))
        bias = np.mean([float(squared_identity_bias(scores[pos], scores[neg], 1, 1)) for pos, neg in splits])
        return gap - bias

    F_pn, F_u = sol_pn.train_scores[:n], sol_u.train_scores[:n]
    return {
        "objective_gap_pn": gap_minus_bias(sol_pn.coef),
        "objective_gap_u": gap_minus_bias(sol_u.coef),
        "relative_shift": float(np.linalg.norm(F_u - F_pn) / np.linalg.norm(F_pn)),
        "variance_pn": _within_class_variance(F_pn, codes[:n], n_splits),
        "variance_u": _within_class_variance(F_u, codes[:n], n_splits),
    }
