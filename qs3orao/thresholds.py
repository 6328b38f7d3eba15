r"""Thresholds from the all-threshold loss (paper, section "Calculate the Thresholds").

.. math::

    \mathcal{L}_{AT}(b) = \sum_i \Big( \sum_{j < c_i} \delta(f_i - b_j)
                                     + \sum_{j \ge c_i} \delta(b_j - f_i) \Big)

with class codes ``c_i`` in ``0..k-1`` and thresholds ``b_0..b_{k-2}``.  The
loss separates into one convex problem per threshold,
``e_j(b) = sum_{c_i <= j} delta(b - f_i) + sum_{c_i > j} delta(f_i - b)``,
which is minimised exactly (to rounding) by bisection on its one-sided
derivatives.

Surrogates ``delta``:

``"hinge"``
    ``max(0, 1 - z)``: the paper's linear program.  Its minimiser can be a
    whole interval (for instance when the scores are separable with margin);
    the midpoint of that interval is returned.
``"squared_hinge"``
    ``max(0, 1 - z)^2``: the one-sided squared loss of the paper's appendix
    proof; convex but not strictly, so the midpoint rule applies here too.
``"logistic"``
    ``log(1 + exp(-z))``: strictly convex, so the minimiser is unique.

Ties among scores need no special handling: ``e_j`` depends on the multiset of
scores only.  Whatever the surrogate, ``e_{j+1} - e_j`` has derivative
``sum_{c_i = j+1} (delta'(b - f_i) + delta'(f_i - b)) < 0`` whenever class
``j + 1`` has a labeled row, so the minimisers are ordered; whether the order is
strict, and whether the minimiser is unique, is checked by the claims ledger.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["SURROGATES", "threshold_loss", "fit_thresholds", "assign_classes"]


def _hinge(z):
    return np.maximum(0.0, 1.0 - z)


def _squared_hinge(z):
    return np.maximum(0.0, 1.0 - z) ** 2


def _logistic(z):
    return np.logaddexp(0.0, -z)


def _hinge_slope(z, side):
    """Left (``side=-1``) or right (``side=+1``) derivative of the hinge."""
    return -((z < 1.0) if side > 0 else (z <= 1.0)).astype(np.float64)


def _squared_hinge_slope(z, side):
    return -2.0 * np.maximum(0.0, 1.0 - z)


def _logistic_slope(z, side):
    return -expit(-z)


SURROGATES = {
    "hinge": (_hinge, _hinge_slope),
    "squared_hinge": (_squared_hinge, _squared_hinge_slope),
    "logistic": (_logistic, _logistic_slope),
}


#: Surrogates whose per-threshold loss has a unique minimiser.
STRICTLY_CONVEX = frozenset({"logistic"})


def _surrogate(loss):
    try:
        return SURROGATES[loss]
    except KeyError:
        raise ValueError(f"threshold_loss must be one of {sorted(SURROGATES)}, got {loss!r}") from None


def threshold_loss(b, scores, codes, loss="hinge"):
    """All-threshold loss ``L_AT(b)`` of thresholds ``b`` (length ``k - 1``)."""
    value, _ = _surrogate(loss)
    b = np.asarray(b, dtype=np.float64)
    j = np.arange(b.size)
    below = j[None, :] < codes[:, None]
    margins = np.where(below, scores[:, None] - b[None, :], b[None, :] - scores[:, None])
    return float(value(margins).sum())


def _slope(b, lower, upper, slope, side):
    """One-sided derivative of ``e(b) = sum delta(b - lower) + sum delta(upper - b)``.

    The right derivative of ``delta(upper - b)`` is minus the left derivative
    of ``delta`` at ``upper - b``, hence the flipped ``side``.
    """
    return slope(b - lower, side).sum() - slope(upper - b, -side).sum()


def _argmin_interval(lower, upper, slope):
    """Ends of ``argmin e`` found by bisection on the monotone one-sided derivatives."""
    span = np.concatenate([lower, upper])
    lo, hi = span.min() - 2.0, span.max() + 2.0
    # The logistic minimiser sits near log(class-count ratio) from the scores, possibly
    # far outside them: widen the bracket until the slopes have opposite signs.
    width = hi - lo
    while _slope(lo, lower, upper, slope, +1) >= 0.0:
        lo, width = lo - width, 2.0 * width
    while _slope(hi, lower, upper, slope, -1) <= 0.0:
        hi, width = hi + width, 2.0 * width
    ends = []
    for side, target in ((+1, lambda g: g >= 0.0), (-1, lambda g: g > 0.0)):
        a, c = lo, hi
        while True:
            mid = 0.5 * (a + c)
            if mid <= a or mid >= c:
                break
            if target(_slope(mid, lower, upper, slope, side)):
                c = mid
            else:
                a = mid
        ends.append(c if side > 0 else a)
    return ends[0], max(ends)


def fit_thresholds(scores, codes, n_classes, loss="hinge", *, return_intervals=False):
    """Minimise the all-threshold loss over the labeled rows.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        Ranking scores ``f(x_i)`` of labeled rows.
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``.
    n_classes : int
        ``k``.
    loss : {"hinge", "squared_hinge", "logistic"}
    return_intervals : bool
        Also return the ``(k - 1, 2)`` array of minimiser intervals.

    Returns
    -------
    thresholds : ndarray of shape (k - 1,)
        The midpoint of each threshold's set of minimisers.
    intervals : ndarray of shape (k - 1, 2), if ``return_intervals``
    """
    _, slope = _surrogate(loss)
    scores = np.asarray(scores, dtype=np.float64)
    counts = np.bincount(codes, minlength=n_classes)
    if counts[0] == 0 or counts[-1] == 0:
        raise ValueError(f"fit_thresholds needs labeled rows in the lowest and highest class, got counts {counts.tolist()}")
    intervals = np.array([
        _argmin_interval(scores[codes <= j], scores[codes > j], slope) for j in range(n_classes - 1)
    ])
    thresholds = intervals.mean(axis=1)
    if loss in STRICTLY_CONVEX:
        # The minimiser is a point; a width left by rounding in a flat derivative is not an interval.
        intervals[:] = thresholds[:, None]
    return (thresholds, intervals) if return_intervals else thresholds


def assign_classes(scores, thresholds):
    """Class codes from thresholds: ``c = #{j : f > b_j}`` (ties go to the lower class)."""
    return np.searchsorted(thresholds, scores, side="left")
