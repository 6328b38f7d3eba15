r"""Divergence of the training iteration: an error while it runs, a warning when it ends far off.

While training runs, scores beyond ``SCORE_LIMIT`` (or not finite) stop it with
:class:`DivergenceError`: past ``1e150`` the squared pairwise loss overflows
float64, so neither the objective nor the thresholds can be computed from them.

When it ends, the objective gap is bounded from below without ``f*``.  Training
starts at ``f_1 = 0`` with ``L(f_1) = R(0)``; ``f*`` minimises
``L(f) = lam/2 ||f||^2 + R(f)``, so ``L(f*) <= R(0)``, and each split's risk is at
least ``-(1 - gamma^j) / 2`` (its pair terms are non-negative), so
``L(f*) >= R_low = -mean_j (1 - gamma^j) / 2``.  With ``L(f_T) >= R(f_T)`` (any
norm is non-negative):

.. math::

    \frac{L(f_T) - L(f^*)}{L(f_1) - L(f^*)} \ge \frac{R(f_T) - R(0)}{R(0) - R_\mathrm{low}},

computed in O(n) from the final training scores.  When it exceeds
``GAP_GROWTH_LIMIT = 1`` the fit provably ended farther from ``f*`` (in
objective) than the zero function it started from, and it warns.  The bound is
loose, so the limit is the smallest growth it can state: ending worse than
having done nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .objective import ordinal_risk_value
from .schedule import auto_step_offset, curvature_bound
from .validation import UNLABELED

__all__ = ["DivergenceError", "SCORE_LIMIT", "GAP_GROWTH_LIMIT", "check_scores", "gap_growth_bound", "warn_if_far"]

SCORE_LIMIT = 1e150
GAP_GROWTH_LIMIT = 1.0


def _remedy(theta, lam, step_offset, tradeoff):
    """The stability of the first step and what to change."""
    first = theta / (1.0 + step_offset) * (lam + curvature_bound(tradeoff))
    return (f"the first step has eta_1 (lam + h) up to {first:.3g} (a step expands the error when it exceeds 2); "
            f"use step_offset='auto' (here {auto_step_offset(theta, lam, tradeoff)}) or a larger lam")


class DivergenceError(FloatingPointError):
    """Training scores became non-finite or exceeded :data:`SCORE_LIMIT`.

    Attributes
    ----------
    iteration : int
        The (1-based) iteration at which it was detected.
    lam, theta, step_offset : float
        The schedule that diverged.
    max_score : float
        The largest absolute score seen (``nan`` or ``inf`` when not finite).
    """

    def __init__(self, *, iteration, n_iter, lam, theta, step_offset, max_score, tradeoff):
        self.iteration, self.lam, self.theta, self.step_offset = iteration, lam, theta, step_offset
        self.max_score = max_score
        super().__init__(
            f"QS3ORAO diverged at iteration {iteration} of {n_iter}: training scores reached {max_score:.3g} "
            f"with lam={lam:g}, theta={theta:g}, step_offset={step_offset:g} (eta_t = theta / (t + step_offset)); "
            + _remedy(theta, lam, step_offset, tradeoff))


def check_scores(scores, *, iteration, n_iter, lam, theta, step_offset, tradeoff):
    """Raise :class:`DivergenceError` when ``scores`` hold a non-finite value or one beyond :data:`SCORE_LIMIT`."""
    largest = np.max(np.abs(scores), initial=0.0)
    if not largest <= SCORE_LIMIT:  # also catches nan
        if np.isnan(scores).any():
            largest = np.nan
        raise DivergenceError(iteration=iteration, n_iter=n_iter, lam=lam, theta=theta, step_offset=step_offset,
                              max_score=largest, tradeoff=tradeoff)


def gap_growth_bound(scores, codes, tradeoff):
    """Lower bound on ``(L(f_T) - L(f*)) / (L(f_1) - L(f*))`` from the final training scores.

    Parameters
    ----------
    scores : ndarray of shape (n,) or (n, S)
        ``f_T`` at every training row; with ``S`` columns, ``S`` fits at once.
    codes : ndarray of int
        Class codes, ``-1`` for unlabeled rows.
    tradeoff : ndarray of shape (k - 1,) or (k - 1, S)
        The split weights, per column when ``scores`` has columns.

    Returns
    -------
    float or ndarray of shape (S,)
        ``(R(f_T) - R(0)) / (R(0) - R_low)``; negative when no growth is implied.
    """
    final = ordinal_risk_value(scores, codes, tradeoff)
    # At f = 0 every pair loss (1 - 0 + 0)^2 is 1: R^j(0) = gamma^j + (1 - gamma^j) (1 + 1 - 1/2) with unlabeled rows.
    start = np.mean(tradeoff + 1.5 * (1.0 - tradeoff) * np.any(codes == UNLABELED), axis=0)
    return (final - start) / (start + np.mean(1.0 - tradeoff, axis=0) / 2.0)


def warn_if_far(scores, codes, tradeoff, *, lam, theta, step_offset, n_iter):
    """Warn (:class:`sklearn.exceptions.ConvergenceWarning`) when the final objective gap provably exceeds
    ``GAP_GROWTH_LIMIT`` times the initial one (see :func:`gap_growth_bound`).

    With ``S`` score columns (``tradeoff`` of shape ``(k - 1, S)``, ``lam``,
    ``theta`` and ``step_offset`` of shape ``(S,)``) each fit warns on its own.
    """
    growth = np.atleast_1d(gap_growth_bound(scores, codes, tradeoff))
    columns, weights = scores.reshape(scores.shape[0], -1), tradeoff.reshape(tradeoff.shape[0], -1)
    for g in np.flatnonzero(growth > GAP_GROWTH_LIMIT):
        lam_g, theta_g, offset_g = (float(np.atleast_1d(value)[g]) for value in (lam, theta, step_offset))
        warnings.warn(
            f"QS3ORAO ended after {n_iter} iterations with training scores up to {np.max(np.abs(columns[:, g])):.3g} "
            f"and an objective gap to f* at least {growth[g]:.3g} times the gap it started from "
            f"(lam={lam_g:g}, theta={theta_g:g}, step_offset={offset_g:g}); "
            + _remedy(theta_g, lam_g, offset_g, weights[:, g]) + ", or more iterations",
            ConvergenceWarning, stacklevel=4)
