r"""Claims 5 and 6: ``f_t`` (random features) and ``h_t`` (exact kernel) against ``f*``.

One run draws the rows of every iteration once and advances, on those same
rows:

* ``f_t``, the quadruply stochastic iterate with random features (the
  computation of :func:`qs3orao.engine.train`, instrumented to record its
  error along the way; the tests check that both give the same scores);
* ``h_t``, the paper's auxiliary sequence (appendix, ``g_t``): the same
  update with the exact kernel ``k(x_i, .)`` in place of ``phi(x_i) . phi(.)``
  and *the same weights* (computed from ``f_t``), so that
  ``f_{t+1} - h_{t+1} = sum_i a_t^i (zeta_i - xi_i)`` as in Lemma 1;
* ``g_t``, plain kernel SGD on the same rows, with weights computed from its
  own scores (the "exact-gradient" iteration of the issue).

``h`` and ``g`` are kept as coefficients over the training rows (they live in
the span of ``k(x_i, .)``), so ``||h - f*||_H^2 = (c - c*)^T K (c - c*)`` is
exact.

The verdict criteria are fixed here, before any data are seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..datasets.generated import make_latent_regression
from ..exact import exact_solution
from ..kernels import fourier_features, frequency_block, sampling_rng
from ..objective import split_members
from ..stochastic import draw_rows, gradient_weights

__all__ = [
    "SLOPE_TARGET", "SLOPE_TOLERANCE", "FIT_FROM_FRACTION", "DIVERGENCE_FACTOR", "CONFIDENCE",
    "ERRORS", "ConvergenceProblem", "make_problem", "checkpoints", "run_trajectory",
    "fit_slope", "rate_verdict", "is_diverged", "summarise", "run_study",
]

# --- Verdict criteria (declared before any run) -----------------------------
#: The rate the theorem claims: error ~ t^-1.
SLOPE_TARGET = -1.0
#: "Consistent with O(1/t)": the upper end of the slope's confidence interval
#: is at most SLOPE_TARGET + SLOPE_TOLERANCE (O(1/t) is an upper bound, so a
#: steeper slope is consistent too).
SLOPE_TOLERANCE = 0.15
#: Slopes are fitted on the checkpoints t >= FIT_FROM_FRACTION * n_iter.
FIT_FROM_FRACTION = 0.02
#: "Diverged": a non-finite error, or a final error above DIVERGENCE_FACTOR
#: times the error at the first checkpoint.
DIVERGENCE_FACTOR = 1e3
#: Level of the confidence interval of a slope (Student t over seeds).
CONFIDENCE = 0.95

#: Error columns recorded at every checkpoint.
ERRORS = ("f_error", "fh_error", "h_error", "g_error")


@dataclass(frozen=True)
class ConvergenceProblem:
    """A small semi-supervised ordinal problem and its exact minimiser ``f*``."""

    X: np.ndarray
    codes: np.ndarray
    tradeoff: np.ndarray
    gamma: float
    lam: float
    coef: np.ndarray
    kernel: np.ndarray

    @property
    def fstar_scores(self):
        return self.kernel @ self.coef

    @property
    def fstar_norm(self):
        """``||f*||_H``."""
        return float(np.sqrt(self.coef @ self.kernel @ self.coef))


def make_problem(*, n_labeled, n_unlabeled, n_classes, n_features, gamma, lam, tradeoff, seed):
    """Latent-regression data cut into equal-frequency classes, and its ``f*``.

    Returns
    -------
    ConvergenceProblem
    """
    X, target = make_latent_regression(n_labeled + n_unlabeled, n_features, random_state=seed)
    edges = np.quantile(target[:n_labeled], np.linspace(0.0, 1.0, n_classes + 1)[1:-1])
    y = np.digitize(target, edges)
    y[n_labeled:] = -1
    sol = exact_solution(X, y, gamma=gamma, lam=lam, tradeoff=tradeoff)
    return ConvergenceProblem(X=sol.X, codes=sol.codes, tradeoff=sol.tradeoff, gamma=gamma, lam=lam,
                              coef=sol.coef, kernel=sol.kernel)


def checkpoints(n_iter, n_points):
    """About ``n_points`` log-spaced iteration counts from 1 to ``n_iter`` (distinct integers)."""
    return np.unique(np.geomspace(1, n_iter, n_points).round().astype(int))


class _KernelIterate:
    """``sum_i coef_i k(x_i, .)`` with its scores at every training row kept up to date."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.coef = np.zeros(kernel.shape[0])
        self.scores = np.zeros(kernel.shape[0])

    def step(self, shrink, eta, rows, weights):
        self.coef *= shrink
        np.add.at(self.coef, rows, -eta * weights)
        self.scores = shrink * self.scores - eta * (self.kernel[:, rows] @ weights)

    def sq_distance(self, coef):
        diff = self.coef - coef
        return float(diff @ self.kernel @ diff)


def run_trajectory(problem, theta, marks, *, batch_size, n_components, seed):
    """Run ``f_t``, ``h_t`` and ``g_t`` side by side and record their errors.

    Parameters
    ----------
    problem : ConvergenceProblem
    theta : float
        Step ``eta_t = theta / t``.
    marks : ndarray of int
        Iteration counts ``t`` at which to record (increasing); errors are of
        the iterates after ``t`` steps (``f_{t+1}`` in the paper's indexing).
    batch_size, n_components, seed : int

    Returns
    -------
    errors : dict of str to ndarray of shape (len(marks),)
        ``f_error``: mean over training rows of ``|f_{t+1}(x) - f*(x)|^2``;
        ``fh_error``: mean of ``|f_{t+1}(x) - h_{t+1}(x)|^2``;
        ``h_error``: ``||h_{t+1} - f*||_H^2``; ``g_error``: ``||g_{t+1} - f*||_H^2``.
        NaN after the run stops being finite.
    weight_bound : float
        ``max_t sum_i |w_{t,i}|`` over the gradients of ``f``, ``h`` and ``g``
        (the plug-in ``M`` of :mod:`qs3orao.theory.bounds`).
    """
    X, K, lam = problem.X, problem.kernel, problem.lam
    splits, unlabeled = split_members(problem.codes, problem.tradeoff.size)
    fstar = problem.fstar_scores
    rng = sampling_rng(seed)
    F = np.zeros(X.shape[0])
    h, g = _KernelIterate(K), _KernelIterate(K)
    errors = {name: np.full(len(marks), np.nan) for name in ERRORS}
    weight_bound, next_mark = 0.0, 0
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(1, int(marks[-1]) + 1):
            draws = draw_rows(rng, splits, unlabeled, problem.tradeoff, batch_size)
            rows, w_f = gradient_weights(draws, F.__getitem__, problem.tradeoff)
            _, w_g = gradient_weights(draws, g.scores.__getitem__, problem.tradeoff)
            _, w_h = gradient_weights(draws, h.scores.__getitem__, problem.tradeoff)
            weight_bound = max(weight_bound, *(np.abs(w).sum() for w in (w_f, w_g, w_h)))
            omega = frequency_block(seed, i, n_components, X.shape[1], problem.gamma)
            eta = theta / i
            shrink = 1.0 - eta * lam
            alpha = -eta * (w_f @ fourier_features(X[rows], omega))
            F = shrink * F + fourier_features(X, omega) @ alpha
            h.step(shrink, eta, rows, w_f)
            g.step(shrink, eta, rows, w_g)
            if not np.isfinite(F).all() or not np.isfinite(g.scores).all():
                break
            if i == marks[next_mark]:
                errors["f_error"][next_mark] = np.mean((F - fstar) ** 2)
                errors["fh_error"][next_mark] = np.mean((F - h.scores) ** 2)
                errors["h_error"][next_mark] = h.sq_distance(problem.coef)
                errors["g_error"][next_mark] = g.sq_distance(problem.coef)
                next_mark += 1
    return errors, float(weight_bound)


def is_diverged(curve):
    """Apply the divergence criterion to a mean error curve over checkpoints."""
    curve = np.asarray(curve, dtype=np.float64)
    return bool(not np.isfinite(curve).all() or curve[-1] > DIVERGENCE_FACTOR * curve[0])


def fit_slope(marks, per_seed):
    """Log-log slope of the error against ``t``, with a confidence interval over seeds.

    Each seed's curve is fitted on ``t >= FIT_FROM_FRACTION * t_max``; the
    slope is the mean of the per-seed slopes and the interval a Student t
    interval of that mean (seeds are independent runs).

    Parameters
    ----------
    marks : ndarray of shape (n_marks,)
    per_seed : ndarray of shape (n_seeds, n_marks)

    Returns
    -------
    slope, low, high : float
        NaN when some curve is not finite and positive on the fitted range.
    """
    marks = np.asarray(marks)
    keep = marks >= FIT_FROM_FRACTION * marks[-1]
    data = np.asarray(per_seed)[:, keep]
    if not (np.isfinite(data).all() and (data > 0).all()):
        return float("nan"), float("nan"), float("nan")
    slopes = np.polyfit(np.log(marks[keep]), np.log(data).T, 1)[0]
    half = stats.t.ppf(0.5 + CONFIDENCE / 2.0, slopes.size - 1) * stats.sem(slopes)
    mean = float(slopes.mean())
    return mean, mean - float(half), mean + float(half)


def rate_verdict(high):
    """Whether a slope whose interval ends at ``high`` is consistent with ``O(1/t)``."""
    return bool(np.isfinite(high) and high <= SLOPE_TARGET + SLOPE_TOLERANCE)


def summarise(records, *, fstar_norm, lam, tradeoff):
    """Slopes, divergence and bound ratios per ``c = theta * lambda``.

    Parameters
    ----------
    records : pandas.DataFrame
        Columns ``product, theta, seed, t, weight_bound`` and :data:`ERRORS`.
    fstar_norm, lam : float
    tradeoff : ndarray of shape (k - 1,)

    Returns
    -------
    pandas.DataFrame
        One row per product: for each error ``<e>_slope``, ``<e>_low``,
        ``<e>_high``, ``<e>_rate_ok``; ``diverged``; ``M`` (the plug-in, largest
        over seeds); ``Q1``; ``lemma1_ratio``, ``lemma3_ratio``,
        ``theorem1_ratio``: the largest over checkpoints of mean measured error
        divided by the bound (NaN where the bound is undefined); ``in_domain``.
    """
    import pandas as pd

    from .bounds import LIPSCHITZ, lemma1_bound, lemma3_bound, loss_constant, q1_constant, theorem1_bound
    from .coefficients import in_lemma2_domain

    L = loss_constant(tradeoff, LIPSCHITZ)
    rows = []
    for product, group in records.groupby("product"):
        theta = float(group["theta"].iloc[0])
        marks = np.sort(group["t"].unique())
        row = {"product": product, "theta": theta, "in_domain": in_lemma2_domain(product)}
        means = {}
        for name in ERRORS:
            per_seed = group.pivot(index="seed", columns="t", values=name)[marks].to_numpy()
            slope, low, high = fit_slope(marks, per_seed)
            means[name] = per_seed.mean(axis=0)
            row.update({f"{name}_slope": slope, f"{name}_low": low, f"{name}_high": high,
                        f"{name}_rate_ok": rate_verdict(high)})
        row["diverged"] = any(is_diverged(means[name]) for name in ("f_error", "h_error"))
        M = float(group["weight_bound"].max())
        q1 = q1_constant(fstar_norm, theta, lam, M, L)
        row.update({"M": M, "Q1": q1})
        with np.errstate(invalid="ignore"):
            row["lemma1_ratio"] = float(np.max(means["fh_error"] / [lemma1_bound(t, theta, lam, M) for t in marks]))
            row["lemma3_ratio"] = float(np.max(means["h_error"] / lemma3_bound(marks, q1)))
            row["theorem1_ratio"] = float(np.max(means["f_error"] / theorem1_bound(marks, theta, M, q1)))
        rows.append(row)
    return pd.DataFrame(rows)


def _run_one(job):
    problem, product, seed, marks, batch_size, n_components = job
    theta = product / problem.lam
    errors, weight_bound = run_trajectory(problem, theta, marks, batch_size=batch_size,
                                          n_components=n_components, seed=seed)
    return [{"product": product, "theta": theta, "seed": seed, "t": int(t), "weight_bound": weight_bound,
             **{name: float(errors[name][k]) for name in ERRORS}} for k, t in enumerate(marks)]


def run_study(problem, *, products, seeds, n_iter, n_checkpoints, batch_size, n_components, n_jobs=1):
    """Every ``(theta * lambda, seed)`` run of the convergence study, as tidy records.

    Parameters
    ----------
    problem : ConvergenceProblem
    products : sequence of float
        The values of ``c = theta * lambda`` (``theta = c / lam``).
    seeds : int
        Runs per product, with seeds ``0..seeds-1``.
    n_iter, n_checkpoints, batch_size, n_components : int
    n_jobs : int
        Worker processes.

    Returns
    -------
    pandas.DataFrame
        Columns ``product, theta, seed, t, weight_bound`` and :data:`ERRORS`.
    """
    from concurrent.futures import ProcessPoolExecutor

    import pandas as pd

    marks = checkpoints(n_iter, n_checkpoints)
    jobs = [(problem, float(c), s, marks, batch_size, n_components) for c in products for s in range(seeds)]
    if n_jobs > 1:
        with ProcessPoolExecutor(n_jobs) as pool:
            results = list(pool.map(_run_one, jobs))
    else:
        results = [_run_one(job) for job in jobs]
    return pd.DataFrame([record for result in results for record in result])
