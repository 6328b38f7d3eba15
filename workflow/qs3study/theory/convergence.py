r"""Claims 5 and 6: ``f_t`` (random features) and ``h_t`` (exact kernel) against ``f*``.

One run draws the rows of every iteration once and advances, on those same
rows:

* ``f_t``, the quadruply stochastic iterate with random features (the
  computation of :func:`qs3orao.engine.train`, instrumented to record its
  error along the way; the tests check that both give the same scores);
* ``h_t``, the paper's auxiliary sequence (appendix): the same update with the
  exact kernel ``k(x_i, .)`` in place of ``phi(x_i) . phi(.)`` and *the same
  weights* (computed from ``f_t``), so that
  ``f_{t+1} - h_{t+1} = sum_i a_t^i (zeta_i - xi_i)`` as in Lemma 1.

``h`` is kept as coefficients over the training rows (it lives in the span of
``k(x_i, .)``), so ``||h - f*||_H^2 = (c - c*)^T K (c - c*)`` is exact.

The step is ``eta_t = theta / (t + t0)``: ``t0 = 0`` is the paper's schedule.
This module computes quantities only; the settings and the verdict criteria
live in the study's design file (``workflow/config/theory.yaml``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from qs3orao.curvature import top_curvature
from qs3study.datasets.generated import make_latent_regression
from qs3orao.exact import exact_solution
from qs3orao.kernels import fourier_features, frequency_block, sampling_rng
from qs3orao.objective import ordinal_risk_hessian, split_members
from qs3orao.stochastic import draw_rows, gradient_weights
from .huber import huber_derivative, pairwise_weights, squared_derivative

__all__ = [
    "RECORD_COLUMNS", "ConvergenceProblem", "make_problem", "checkpoints", "step_sizes",
    "largest_curvature", "predicted_amplification", "derivative_bound", "run_trajectory",
    "bootstrap_slopes", "mean_error_slope", "run_cells",
]

#: Columns of the tidy records of :func:`run_cells`, after the cell's own keys.
RECORD_COLUMNS = ("seed", "t", "error_mean", "error_max", "fh_error", "fh_max", "h_error", "peak_error",
                  "derivative_max")


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


def checkpoints(n_iter, n_points, *, window_from=None, window_points=0):
    """About ``n_points`` log-spaced iteration counts from 1 to ``n_iter`` (distinct integers).

    With ``window_from``, ``window_points`` more, linearly spaced over
    ``[window_from * n_iter, n_iter]``, so that a fit on that window has enough points.
    """
    marks = np.geomspace(1, n_iter, n_points)
    if window_from is not None and window_points:
        marks = np.r_[marks, np.linspace(window_from * n_iter, n_iter, window_points)]
    return np.unique(marks.round().astype(int))


def step_sizes(theta, n_iter, step_offset=0.0):
    """``eta_t = theta / (t + step_offset)`` for ``t = 1..n_iter``."""
    return theta / (np.arange(1, n_iter + 1) + float(step_offset))


def largest_curvature(problem):
    """Largest eigenvalue ``h`` of the risk's Hessian as an operator on the RKHS.

    The risk is quadratic in the scores ``F`` with constant Hessian ``H``
    (:func:`qs3orao.objective.ordinal_risk_hessian`); on ``f = sum_i c_i k(x_i, .)``
    the functional gradient step maps ``F`` to ``F - eta K H F``, so the
    curvature is the largest eigenvalue of ``K H``, computed as that of the
    symmetric ``K^{1/2} H K^{1/2}``.
    """
    return top_curvature(problem.kernel, ordinal_risk_hessian(problem.codes, problem.tradeoff))


def predicted_amplification(theta, lam, curvature, n_iter, step_offset=0.0):
    """Peak over ``t`` of ``prod_{j <= t} (1 - eta_j (lam + h))^2``, the squared error's early amplification.

    Along the top eigendirection of the expected step the error is multiplied
    by ``1 - eta_j (lam + h)`` at step ``j``; while ``eta_j (lam + h) > 2`` that
    factor exceeds one in magnitude.

    Returns
    -------
    peak : float
        ``max_t`` of the running product (``>= 1``; 1 when no factor exceeds one; ``inf`` past the float range).
    t_peak : int
        The ``t`` where it is reached (0 for no amplification).
    """
    with np.errstate(divide="ignore"):
        # a factor of exactly 0 zeroes the product from there on (log -inf)
        log_factors = 2.0 * np.log(np.abs(1.0 - step_sizes(theta, n_iter, step_offset) * (lam + curvature)))
    running = np.concatenate([[0.0], np.cumsum(log_factors)])
    t_peak = int(np.argmax(running))
    with np.errstate(over="ignore"):  # a peak past the float range is inf, its true order of magnitude
        return float(np.exp(running[t_peak])), t_peak


def _pair_sets(codes, n_splits):
    splits, unlabeled = split_members(codes, n_splits)
    for pos, neg in splits:
        yield pos, neg
        if unlabeled.size:
            yield pos, unlabeled
            yield unlabeled, neg


def derivative_bound(scores, codes, tradeoff):
    """Largest ``|l'(f(a), f(b))| = 2 |1 - f(a) + f(b)|`` over every pair the sampler can draw.

    At the exact ``f*`` this fixes the ``M_1 = M_2`` of Assumption 3 in advance
    (the squared loss has no global bound: see :mod:`qs3study.theory.assumptions`).
    """
    return float(max(2.0 * np.abs(1.0 - scores[a][:, None] + scores[b][None, :]).max()
                     for a, b in _pair_sets(codes, tradeoff.size)))


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


def _sampled_derivative(draws, F, tradeoff, derivative):
    largest = 0.0
    for (p, n, u), weight in zip(draws, tradeoff):
        pairs = [(p, n)] + ([(p, u), (u, n)] if weight < 1.0 and u.size else [])
        for a, b in pairs:
            largest = max(largest, float(np.abs(derivative(1.0 - F[a][:, None] + F[b][None, :])).max()))
    return largest


def run_trajectory(problem, theta, marks, *, batch_size, n_components, seed, step_offset=0.0, huber_delta=None):
    """Run ``f_t`` and ``h_t`` side by side and record their errors.

    Parameters
    ----------
    problem : ConvergenceProblem
    theta : float
        Step ``eta_t = theta / (t + step_offset)``.
    marks : ndarray of int
        Iteration counts ``t`` at which to record (increasing); errors are of
        the iterates after ``t`` steps (``f_{t+1}`` in the paper's indexing).
    batch_size, n_components, seed : int
    step_offset : float
    huber_delta : float, optional
        Minimise the Huberised squared loss with this ``delta``
        (:mod:`qs3study.theory.huber`; ``problem`` must hold its ``f*``) instead of
        the paper's squared loss.

    Returns
    -------
    dict of str to ndarray of shape (len(marks),)
        ``error_mean`` and ``error_max``: mean and max over training rows of
        ``|f_{t+1}(x) - f*(x)|^2``; ``fh_error`` and ``fh_max``: mean and max of ``|f_{t+1}(x) - h_{t+1}(x)|^2``;
        ``h_error``: ``||h_{t+1} - f*||_H^2``; ``peak_error``: the largest
        ``error_mean`` over every step up to ``t``; ``derivative_max``: the
        largest ``|l'|`` on a sampled pair up to ``t``. NaN once the run stops
        being finite.
    """
    X, lam = problem.X, problem.lam
    splits, unlabeled = split_members(problem.codes, problem.tradeoff.size)
    fstar = problem.fstar_scores
    rng = sampling_rng(seed)
    F = np.zeros(X.shape[0])
    h = _KernelIterate(problem.kernel)
    out = {name: np.full(len(marks), np.nan) for name in RECORD_COLUMNS[2:]}
    peak = derivative = 0.0
    next_mark = 0
    etas = step_sizes(theta, int(marks[-1]), step_offset)
    loss_derivative = (squared_derivative if huber_delta is None
                       else functools.partial(huber_derivative, delta=huber_delta))
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(1, int(marks[-1]) + 1):
            draws = draw_rows(rng, splits, unlabeled, problem.tradeoff, batch_size)
            if huber_delta is None:
                rows, w_f = gradient_weights(draws, F.__getitem__, problem.tradeoff)
            else:
                rows, w_f = pairwise_weights(draws, F, problem.tradeoff, loss_derivative)
            derivative = max(derivative, _sampled_derivative(draws, F, problem.tradeoff, loss_derivative))
            omega = frequency_block(seed, i, n_components, X.shape[1], problem.gamma)
            eta = etas[i - 1]
            shrink = 1.0 - eta * lam
            alpha = -eta * (w_f @ fourier_features(X[rows], omega))
            F = shrink * F + fourier_features(X, omega) @ alpha
            h.step(shrink, eta, rows, w_f)
            squared = (F - fstar) ** 2
            error_mean = float(squared.mean())
            if not np.isfinite(error_mean) or not np.isfinite(h.scores).all():
                break
            peak = max(peak, error_mean)
            if i == marks[next_mark]:
                out["error_mean"][next_mark] = error_mean
                out["error_max"][next_mark] = float(squared.max())
                gap = (F - h.scores) ** 2
                out["fh_error"][next_mark] = float(gap.mean())
                out["fh_max"][next_mark] = float(gap.max())
                out["h_error"][next_mark] = h.sq_distance(problem.coef)
                out["peak_error"][next_mark] = peak
                out["derivative_max"][next_mark] = derivative
                next_mark += 1
    return out


def bootstrap_slopes(marks, per_seed, *, fit_from, n_boot, seed):
    """Log-log slope of the MEAN error over seeds against ``t``, and the same slope over seeds resampled.

    The theorem bounds the expected error, so the curve fitted is the mean over
    seeds (not the mean of per-seed slopes, which estimates ``E log error``).

    Parameters
    ----------
    marks : ndarray of shape (n_marks,)
    per_seed : ndarray of shape (n_seeds, n_marks)
    fit_from : float
        Fit on ``t >= fit_from * marks[-1]``.
    n_boot : int
    seed : int
        Seed of the resampling.

    Returns
    -------
    slope : float
        NaN when the mean is not finite and positive on the fitted range.
    boot : ndarray of shape (n_boot,)
        The slope of each resample (empty when ``slope`` is NaN).
    n_fitted : int
        Checkpoints in the fitted range.
    """
    marks = np.asarray(marks, dtype=np.float64)
    keep = marks >= fit_from * marks[-1]
    data = np.asarray(per_seed, dtype=np.float64)[:, keep]
    if not (np.isfinite(data).all() and (data > 0).all()) or keep.sum() < 2:
        return float("nan"), np.empty(0), int(keep.sum())
    logt = np.log(marks[keep])
    centred = logt - logt.mean()

    def slopes(curves):
        return np.log(curves) @ centred / (centred @ centred)

    picks = np.random.default_rng(seed).integers(data.shape[0], size=(n_boot, data.shape[0]))
    return float(slopes(data.mean(axis=0))), slopes(data[picks].mean(axis=1)), int(keep.sum())


def mean_error_slope(marks, per_seed, *, fit_from, n_boot, confidence, seed):
    """:func:`bootstrap_slopes`' slope with its percentile interval over the resamples.

    Returns
    -------
    slope, low, high : float
        NaN when the mean is not finite and positive on the fitted range.
    """
    slope, boot, _ = bootstrap_slopes(marks, per_seed, fit_from=fit_from, n_boot=n_boot, seed=seed)
    if not boot.size:
        return float("nan"), float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0
    return slope, float(np.quantile(boot, tail)), float(np.quantile(boot, 1.0 - tail))


def _run_one(job):
    problem, cell, seed, marks, columns = job
    theta = cell["theta_lam"] / cell["lam"]
    out = run_trajectory(problem, theta, marks, batch_size=cell["batch_size"], n_components=cell["n_components"],
                         seed=seed, step_offset=cell["step_offset"], huber_delta=cell.get("huber_delta"))
    return [{**cell, "seed": seed, "t": int(t), **{name: float(out[name][k]) for name in columns}}
            for k, t in enumerate(marks)]


def run_cells(cells, problems, *, seeds, n_iter, n_checkpoints, window=None, columns=RECORD_COLUMNS[2:], n_jobs=1,
              progress=None):
    """Every ``(cell, seed)`` run of the convergence study, as tidy records.

    Parameters
    ----------
    cells : list of dict
        Each with ``instance, lam, theta_lam, batch_size, n_components,
        schedule, step_offset`` (a number).
    problems : dict
        ``(instance, lam)`` to :class:`ConvergenceProblem`.
    seeds : int
        Runs per cell, with seeds ``0..seeds-1``.
    n_iter, n_checkpoints : int
    window : (float, int), optional
        ``(window_from, window_points)`` of :func:`checkpoints`.
    columns : sequence of str
        The recorded quantities kept (a subset of :data:`RECORD_COLUMNS`).
    n_jobs : int
        Worker processes.
    progress : callable, optional
        Called with ``(done, total)`` as runs finish.

    Returns
    -------
    pandas.DataFrame
        The cells' keys, ``theta`` and :data:`RECORD_COLUMNS`.
    """
    from concurrent.futures import ProcessPoolExecutor

    import pandas as pd

    window_from, window_points = window if window else (None, 0)
    marks = checkpoints(n_iter, n_checkpoints, window_from=window_from, window_points=window_points)
    jobs = [(problems[(c["instance"], c["lam"])], c, s, marks, tuple(columns)) for c in cells for s in range(seeds)]
    results = []
    if n_jobs > 1:
        with ProcessPoolExecutor(n_jobs) as pool:
            for result in pool.map(_run_one, jobs, chunksize=4):
                results.append(result)
                if progress:
                    progress(len(results), len(jobs))
    else:
        for job in jobs:
            results.append(_run_one(job))
            if progress:
                progress(len(results), len(jobs))
    frame = pd.DataFrame([record for result in results for record in result])
    frame.insert(frame.columns.get_loc("theta_lam") + 1, "theta", frame["theta_lam"] / frame["lam"])
    return frame
