r"""Claim 3: the all-threshold minimiser ``b*`` is unique and strictly ordered.

The all-threshold loss separates into one convex problem per threshold,
``e_j(b) = sum_{c_i <= j} delta(b - f_i) + sum_{c_i > j} delta(f_i - b)``
(:mod:`qs3orao.thresholds`), so ``b*`` is unique exactly when every ``e_j`` has
a single minimiser.  The appendix proves uniqueness and order for the plain
squared loss ``(b - f)^2``, which is strictly convex; the main text minimises
the hinge linear program, whose minimiser sets can be intervals.

For the piecewise-linear hinge and the squared hinge a non-degenerate
minimiser interval has breakpoints ``f_i +- 1`` as its ends, which is used to
snap the bisection output of :func:`qs3orao.thresholds.fit_thresholds` to its
exact value, so the checks below compare exact numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from qs3orao.thresholds import fit_thresholds

__all__ = ["ThresholdVerdict", "threshold_verdict", "all_classes_present", "appendix_threshold_minimisers"]

# Ends of a bisected minimiser interval are within a few ulps of the true ends;
# this relative tolerance (far above rounding, far below any score gap that
# hypothesis or the tests use) decides "single point" and snaps to breakpoints.
_RELATIVE_TOLERANCE = 1e-9
_BREAKPOINT_LOSSES = ("hinge", "squared_hinge")
# Second derivatives of the strictly convex surrogates.  Near a very flat
# minimum, bisection on the derivative cannot resolve the minimiser below
# rounding / curvature, so a reported interval of a strictly convex e_j is an
# artefact; positive curvature at its midpoint certifies a single minimiser.
_CURVATURE = {"logistic": lambda z: expit(z) * expit(-z)}


@dataclass(frozen=True)
class ThresholdVerdict:
    """What the lemma says about one instance, checked.

    Attributes
    ----------
    intervals : ndarray of shape (k - 1, 2)
        The minimiser set ``[lo_j, hi_j]`` of each threshold.
    unique : bool
        Every minimiser set is a single point.
    ordered_any_selection : bool
        ``hi_j < lo_{j+1}``: every selection of minimisers is strictly ordered.
    ordered_midpoints : bool
        The midpoints (what :func:`fit_thresholds` returns) are strictly ordered.
    """

    intervals: np.ndarray
    unique: bool
    ordered_any_selection: bool
    ordered_midpoints: bool


def all_classes_present(codes, n_classes):
    """Whether every class code ``0..k-1`` has a labeled row (the lemma's implicit setting)."""
    return np.unique(codes).size == n_classes


def _snap(values, breakpoints, tolerance):
    nearest = breakpoints[np.abs(breakpoints[None, :] - values[:, None]).argmin(axis=1)]
    return np.where(np.abs(nearest - values) <= tolerance, nearest, values)


def _curvature(loss, b, scores):
    """``e_j''(b)``: every row contributes ``delta''(+-(b - f_i))`` (even in the sign)."""
    return float(_CURVATURE[loss](b - scores).sum())


def threshold_verdict(scores, codes, n_classes, loss):
    """Check uniqueness and strict order of the all-threshold minimiser.

    Parameters
    ----------
    scores : ndarray of shape (n,)
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``; every class should be present.
    n_classes : int
    loss : {"hinge", "squared_hinge", "logistic"}

    Returns
    -------
    ThresholdVerdict
    """
    scores = np.asarray(scores, dtype=np.float64)
    codes = np.asarray(codes)
    _, intervals = fit_thresholds(scores, codes, n_classes, loss, return_intervals=True)
    tolerance = _RELATIVE_TOLERANCE * (1.0 + np.abs(scores).max())
    degenerate = intervals[:, 1] - intervals[:, 0] <= tolerance
    if loss in _CURVATURE:
        degenerate |= np.array([_curvature(loss, b, scores) > 0.0 for b in intervals.mean(axis=1)])
    if loss in _BREAKPOINT_LOSSES:
        snapped = _snap(intervals.ravel(), np.concatenate([scores - 1.0, scores + 1.0]), tolerance)
        intervals = snapped.reshape(intervals.shape)
    intervals[degenerate] = intervals[degenerate].mean(axis=1, keepdims=True)
    midpoints = intervals.mean(axis=1)
    return ThresholdVerdict(
        intervals=intervals,
        unique=bool(degenerate.all()),
        ordered_any_selection=bool(np.all(intervals[1:, 0] - intervals[:-1, 1] > tolerance)),
        ordered_midpoints=bool(np.all(np.diff(midpoints) > tolerance)),
    )


def appendix_threshold_minimisers(scores, codes, n_classes):
    """Minimisers of the appendix's ``e_j(b)`` for ``j = 1..k-1``, in exact rational arithmetic.

    The appendix proof of the threshold lemma writes
    ``e_j(b) = sum_{i: y_i <= j} (b - f_i)^2 + sum_{i: y_i > j} (f_i - b)^2``:
    both sums are ``(b - f_i)^2``, so ``e_j(b) = sum_i (b - f_i)^2`` over every
    labeled row whatever ``j``, and its unique minimiser is the mean of the
    scores for every ``j``. This function minimises ``e_j`` as written, from
    the two sums (``d e_j / d b = 0``), without using that simplification.

    Parameters
    ----------
    scores : sequence of Fraction, int or str
        Exact scores of the labeled rows.
    codes : sequence of int
        Class codes ``0..k-1``.
    n_classes : int

    Returns
    -------
    list of Fraction
        ``b_j*`` for ``j = 1..k-1``.
    """
    from fractions import Fraction

    scores = [Fraction(s) for s in scores]
    out = []
    for j in range(n_classes - 1):
        low = [f for f, c in zip(scores, codes) if c <= j]
        high = [f for f, c in zip(scores, codes) if c > j]
        # d/db [sum_low (b - f)^2 + sum_high (f - b)^2] = 2 sum_low (b - f) - 2 sum_high (f - b) = 0
        out.append((sum(low, Fraction(0)) + sum(high, Fraction(0))) / (len(low) + len(high)))
    return out
