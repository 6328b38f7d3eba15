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

These three are not invariant to the scale of ``f``: a margin of 1 is
meaningless when the scores span ``1e-3`` (every threshold then lands outside
the scores and one class is predicted for every row).  The default
``"ordinal_logistic"`` fits a scale ``s > 0`` and the cut-points jointly, the
all-threshold ordinal logistic model on the one-dimensional score
(Rennie and Srebro, 2005, mord's ``LogisticAT``):

.. math::

    \min_{s \ge 0, \theta} \sum_i \sum_j \log\big(1 + e^{-\sigma_{ij}(s z_i - \theta_j)}\big)
        + \tfrac{\alpha}{2} s^2, \qquad \sigma_{ij} = \pm 1 \ (c_i > j \text{ or not}),

on the standardised scores ``z = (f - mean) / std`` of the labeled rows, and
returns ``b_j = mean + std * theta_j / s``.  Standardising first makes the
thresholds move with any increasing affine change of ``f`` (so ``predict`` is
unchanged by it); the small ridge ``alpha`` on ``s`` keeps the minimiser
finite when the labeled scores are perfectly ordered.

Ties among scores need no special handling: ``e_j`` depends on the multiset of
scores only.  Whatever the surrogate, ``e_{j+1} - e_j`` has derivative
``sum_{c_i = j+1} (delta'(b - f_i) + delta'(f_i - b)) < 0`` whenever class
``j + 1`` has a labeled row, so the minimisers are ordered; whether the order is
strict, and whether the minimiser is unique, is checked by the claims ledger.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.special import expit

from .validation import plain

__all__ = ["SURROGATES", "THRESHOLD_LOSSES", "ORDINAL_LOGISTIC", "threshold_loss", "ordinal_logistic_loss",
           "fit_thresholds", "assign_classes"]


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

#: The scale-aware default: all-threshold ordinal logistic model with a fitted scale.
ORDINAL_LOGISTIC = "ordinal_logistic"

#: Every accepted ``threshold_loss``; the first is the default.
THRESHOLD_LOSSES = (ORDINAL_LOGISTIC, *sorted(SURROGATES))

#: Ridge ``alpha`` on the scale ``s`` of the standardised scores (keeps separable fits finite).
SCALE_RIDGE = 1e-4


def check_threshold_loss(loss):
    """Raise ``ValueError`` unless ``loss`` is one of :data:`THRESHOLD_LOSSES`."""
    if not isinstance(loss, str) or loss not in THRESHOLD_LOSSES:
        raise ValueError(f"threshold_loss must be one of {list(THRESHOLD_LOSSES)}, got {loss!r}")


def _surrogate(loss):
    check_threshold_loss(loss)
    return SURROGATES[loss]


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


def _margin_signs(codes, n_thresholds):
    """``sigma_ij = +1`` where ``c_i > j`` (the row lies above threshold ``j``), else ``-1``."""
    return np.where(codes[:, None] > np.arange(n_thresholds)[None, :], 1.0, -1.0)


def ordinal_logistic_loss(params, z, codes, n_classes, alpha=SCALE_RIDGE, *, hessian=False):
    """Objective, gradient (and Hessian) of the all-threshold ordinal logistic model on a 1-d score.

    Several problems on the same labels at once: leading axes of ``params``
    and ``z`` index them, each problem's values equal to its own call bit for bit.

    Parameters
    ----------
    params : ndarray of shape (..., k)
        The scale ``s`` followed by the cut-points ``theta_0..theta_{k-2}``.
    z : ndarray of shape (..., n)
        Scores (standardised by :func:`fit_thresholds`).
    codes : ndarray of int, shape (n,)
    n_classes : int
    alpha : float
        Ridge on ``s``.
    hessian : bool
        Also return the ``(..., k, k)`` Hessian.

    Returns
    -------
    value : float, or ndarray of shape (...)
    gradient : ndarray of shape (..., k)
    hessian : ndarray of shape (..., k, k), if ``hessian``
    """
    s, theta = params[..., 0], params[..., 1:]
    sigma = _margin_signs(codes, n_classes - 1)
    z = z[..., :, None]
    margins = sigma * (s[..., None, None] * z - theta[..., None, :])
    below = expit(-margins)
    weight = -sigma * below  # d loss / d (s z - theta)
    value = np.logaddexp(0.0, -margins).sum(axis=(-2, -1)) + 0.5 * alpha * s * s
    gradient = np.concatenate([((weight * z).sum(axis=(-2, -1)) + alpha * s)[..., None], -weight.sum(axis=-2)],
                              axis=-1)
    value = float(value) if value.ndim == 0 else value
    if not hessian:
        return value, gradient
    curvature = expit(margins) * below  # d^2 loss / d (s z - theta)^2
    k = gradient.shape[-1]
    H = np.zeros(gradient.shape + (k,))
    H[..., 0, 0] = (curvature * z ** 2).sum(axis=(-2, -1)) + alpha
    H[..., np.arange(1, k), np.arange(1, k)] = curvature.sum(axis=-2)
    H[..., 0, 1:] = H[..., 1:, 0] = -(curvature * z).sum(axis=-2)
    return value, gradient, H


def _newton_points(start, *, max_iter=200, tol=1e-12):
    """Damped Newton steps on a smooth strictly convex function, as a generator.

    It yields each point at which it needs ``(value, gradient, hessian)``, is
    sent them, and returns the minimiser, so that :func:`_newton_each` can
    evaluate many problems' functions at once.
    """
    x = start
    value, gradient, H = yield x
    for _ in range(max_iter):
        step = np.linalg.solve(H, -gradient)
        decrement = -gradient @ step
        if decrement <= tol * max(1.0, abs(value)):
            return x
        t = 1.0
        while t > 1e-12:
            trial = x + t * step
            trial_value, trial_gradient, trial_H = yield trial
            if trial_value <= value - 0.25 * t * decrement:
                break
            t *= 0.5
        else:
            return x  # no decrease left at rounding level: x is the minimiser to working precision
        x, value, gradient, H = trial, trial_value, trial_gradient, trial_H
    raise RuntimeError(f"the ordinal logistic threshold fit did not converge in {max_iter} Newton steps")


def _newton_each(fun, starts):
    """Minimise one smooth strictly convex function per start by damped Newton steps, evaluated together.

    Each problem takes the steps it would take alone (:func:`_newton_points`);
    ``fun(points, problems)`` returns ``(value, gradient, hessian)`` of the
    problems ``problems`` (indices into ``starts``) at ``points``, stacked
    along the first axis.
    """
    runs = [_newton_points(start) for start in starts]
    solutions = [None] * len(runs)
    pending = {i: next(run) for i, run in enumerate(runs)}
    while pending:
        problems = list(pending)
        values, gradients, hessians = fun(np.array([pending[i] for i in problems]), problems)
        for i, value, gradient, H in zip(problems, values, gradients, hessians):
            try:
                pending[i] = runs[i].send((float(value), gradient, H))
            except StopIteration as done:
                solutions[i] = done.value
                del pending[i]
    return solutions


def _fit_ordinal_logistic(scores, codes, n_classes, n_jobs):
    """Thresholds of the all-threshold ordinal logistic model with a fitted scale, one row per row of ``scores``.

    See the module notes.  The rows' Newton steps are evaluated together, split
    over ``n_jobs`` threads (numpy releases the GIL inside each evaluation).
    """
    thresholds = np.empty((scores.shape[0], n_classes - 1))
    counts = np.bincount(codes, minlength=n_classes)
    fitted, z, starts = [], [], []
    for g, row in enumerate(scores):
        centre, spread = row.mean(), row.std()
        if not spread > 0:
            warnings.warn(f"all {row.size} labeled scores equal {float(centre)!r}: the scores carry no ordinal "
                          "information, so every row is predicted as the lowest class", RuntimeWarning, stacklevel=3)
            thresholds[g] = centre
            continue
        fitted.append((g, centre, spread))
        z.append((row - centre) / spread)
        # Start from the scale 1 and the cut-points at the class-count quantiles of z.
        starts.append(np.concatenate([[1.0], np.quantile(z[-1], np.cumsum(counts)[:-1] / counts.sum())]))

    z = np.array(z)

    def solve(problems):
        chunk = z[problems]
        return _newton_each(lambda points, at: ordinal_logistic_loss(points, chunk[at], codes, n_classes, hessian=True),
                            [starts[i] for i in problems])

    chunks = [chunk for chunk in np.array_split(np.arange(len(starts)), n_jobs) if chunk.size]
    if len(chunks) > 1:
        with ThreadPoolExecutor(len(chunks)) as pool:
            parts = list(pool.map(solve, chunks))
    else:
        parts = list(map(solve, chunks))
    solutions = [solution for part in parts for solution in part]
    for (g, centre, spread), solution in zip(fitted, solutions):
        s, theta = solution[0], solution[1:]
        if not s > 0:
            warnings.warn(f"the labeled scores decrease with the class (fitted scale s = {s:.3g} < 0 in the "
                          "ordinal logistic threshold fit): every row is predicted as the class the cut-points "
                          "alone favour", RuntimeWarning, stacklevel=3)
            thresholds[g] = np.where(theta < 0, -np.inf, np.inf)
        else:
            thresholds[g] = np.maximum.accumulate(centre + spread * theta / s)
    return thresholds


def fit_thresholds(scores, codes, n_classes, loss=ORDINAL_LOGISTIC, *, return_intervals=False, n_jobs=1):
    """Fit the thresholds that cut the scores into classes, over the labeled rows.

    Parameters
    ----------
    scores : ndarray of shape (n,) or (S, n)
        Ranking scores ``f(x_i)`` of labeled rows; with two axes, one score
        vector per row, each fitted as alone (the ordinal logistic fits'
        Newton steps are evaluated together).
    codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``.
    n_classes : int
        ``k``.
    loss : {"ordinal_logistic", "hinge", "squared_hinge", "logistic"}
        "ordinal_logistic" (scale-aware, the default) or a surrogate of the
        all-threshold loss with margin 1 ("hinge" is the paper's linear program).
    return_intervals : bool
        Also return the minimiser intervals.
    n_jobs : int, default=1
        Threads over which the rows' ordinal logistic fits are split (the
        same values on any number).

    Returns
    -------
    thresholds : ndarray of shape (k - 1,) or (S, k - 1)
        The midpoint of each threshold's set of minimisers.
    intervals : ndarray of shape (k - 1, 2) or (S, k - 1, 2), if ``return_intervals``

    Raises
    ------
    ValueError
        If a score is NaN or infinite (for instance after a diverged training
        run), the lowest or highest class has no labeled row, or ``n_jobs < 1``.
    """
    check_threshold_loss(loss)
    if isinstance(n_jobs, bool) or not (isinstance(n_jobs, (int, np.integer)) and n_jobs >= 1):
        raise ValueError(f"n_jobs must be an integer >= 1, got {plain(n_jobs)}")
    scores = np.asarray(scores, dtype=np.float64)
    bad = ~np.isfinite(scores)
    if bad.any():
        raise ValueError(f"scores must be finite to fit thresholds; {int(bad.sum())} of {scores.size} are NaN or "
                         "infinite (did the training diverge? try a larger lam or a smaller theta)")
    counts = np.bincount(codes, minlength=n_classes)
    if counts[0] == 0 or counts[-1] == 0:
        raise ValueError(f"fit_thresholds needs labeled rows in the lowest and highest class, got counts {counts.tolist()}")
    rows = scores.reshape(-1, scores.shape[-1])
    if loss == ORDINAL_LOGISTIC:
        thresholds = _fit_ordinal_logistic(rows, codes, n_classes, n_jobs)
        intervals = np.repeat(thresholds[..., None], 2, axis=-1)
    else:
        _, slope = _surrogate(loss)
        intervals = np.array([[_argmin_interval(row[codes <= j], row[codes > j], slope) for j in range(n_classes - 1)]
                              for row in rows]).reshape(rows.shape[0], n_classes - 1, 2)
        thresholds = intervals.mean(axis=-1)
        if loss in STRICTLY_CONVEX:
            # The minimiser is a point; a width left by rounding in a flat derivative is not an interval.
            intervals[:] = thresholds[..., None]
    shape = scores.shape[:-1] + (n_classes - 1,)
    thresholds = thresholds.reshape(shape)
    return (thresholds, intervals.reshape(shape + (2,))) if return_intervals else thresholds


def assign_classes(scores, thresholds):
    """Class codes from thresholds: ``c = #{j : f > b_j}`` (ties go to the lower class)."""
    return np.searchsorted(thresholds, scores, side="left")
