"""Per-cell summaries of the convergence study: rate, bounds with M fixed in advance, transient.

A cell is one ``(instance, lam, theta_lam, batch_size, schedule)``. Everything
here is recomputed from the committed tidy data (``figures/theory/convergence.csv``
and ``figures/theory/problems.csv``) and the design's criteria.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from qs3study.theory.bounds import lemma1_bound, lemma3_bound, q1_constant, theorem1_bound
from qs3study.theory.coefficients import in_lemma2_domain, lemma2_ratios
from qs3study.theory.convergence import mean_error_slope, predicted_amplification

from .verdicts import bound_class, rate_class

__all__ = ["CELL", "bootstrap_mean_interval", "summarise"]

#: The columns that identify a cell.
CELL = ["instance", "lam", "theta_lam", "batch_size", "schedule"]


def bootstrap_mean_interval(per_seed, *, n_boot, confidence, seed):
    """Percentile bootstrap interval of the mean over seeds, per column.

    A column with a non-finite entry (a run that left the floats) gets ``(inf, inf)``.

    Returns
    -------
    low, high : ndarray of shape (n_columns,)
    """
    data = np.asarray(per_seed, dtype=np.float64)
    picks = np.random.default_rng(seed).integers(data.shape[0], size=(n_boot, data.shape[0]))
    with np.errstate(invalid="ignore", over="ignore"):
        means = data[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    finite = np.isfinite(data).all(axis=0)
    low = np.where(finite, np.quantile(np.where(finite, means, 0.0), tail, axis=0), np.inf)
    high = np.where(finite, np.quantile(np.where(finite, means, 0.0), 1.0 - tail, axis=0), np.inf)
    return low, high


def _cell_bounds(marks, pivots, problem, theta, lam, criteria, *, M, suffix=""):
    """Classes of Lemma 1, Lemma 3 and Theorem 1 at every checkpoint, and where each is first exceeded.

    ``M`` is the paper's combination of ``M_1 = M_2``; the keys are ``<bound><suffix>_class`` etc.
    """
    L = problem["L"]
    q1 = q1_constant(problem["fstar_norm"], theta, lam, M, L)
    boot = dict(n_boot=criteria["bootstrap"], confidence=criteria["confidence"], seed=criteria["bootstrap_seed"])
    mean_low, _ = bootstrap_mean_interval(pivots["error_mean"], **boot)
    _, max_high = bootstrap_mean_interval(pivots["error_max"], **boot)
    fh_low, _ = bootstrap_mean_interval(pivots["fh_error"], **boot)
    _, fh_high = bootstrap_mean_interval(pivots["fh_max"], **boot)
    h_low, h_high = bootstrap_mean_interval(pivots["h_error"], **boot)
    out = {}
    # The error of the zero predictor in each bound's own measure: pointwise against f* (Theorem 1,
    # and Lemma 1, whose f_t and h_t both start at 0), and ||f*||_H^2 (Lemma 3).
    checks = {
        "theorem1": (mean_low, max_high, [theorem1_bound(t, theta, M, q1) for t in marks], problem["initial_error"]),
        "lemma1": (fh_low, fh_high, [lemma1_bound(t, theta, lam, M) for t in marks], problem["initial_error"]),
        "lemma3": (h_low, h_high, [lemma3_bound(t, q1) for t in marks], problem["fstar_norm"] ** 2),
    }
    for name, (low, high, bound, zero_error) in checks.items():
        classes = [bound_class(lo, hi, b) for lo, hi, b in zip(low, high, bound)]
        exceeded = [k for k, c in enumerate(classes) if c == "exceeded"]
        if "undefined" in classes:
            cell_class = "undefined"
        elif exceeded:
            cell_class = "exceeded"
        elif all(c == "respected" for c in classes):
            cell_class = "respected"
        else:
            cell_class = "inconclusive"
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.asarray(low, dtype=float) / np.asarray(bound, dtype=float)
        first = exceeded[0] if exceeded else None
        key = f"{name}{suffix}"
        out.update({
            f"{key}_class": cell_class,
            f"{key}_max_ratio": float(np.nanmax(ratio)) if not np.isnan(ratio).all() else float("nan"),
            f"{key}_first_t": int(marks[first]) if first is not None else -1,
            f"{key}_lemma2_ratio_there": (max(lemma2_ratios(theta, lam, int(marks[first])))
                                          if first is not None else float("nan")),
            # The power statement (design only, no measured error): a bound above the zero predictor's
            # error at the last checkpoint cannot be exceeded short of divergence.
            f"{key}_power": (float(bound[-1]) / float(zero_error) if bound[-1] is not None else float("nan")),
        })
    out[f"Q1{suffix}"] = q1
    return out


def summarise(records, problems, criteria):
    """One row per cell.

    Parameters
    ----------
    records : pandas.DataFrame
        ``figures/theory/convergence.csv``.
    problems : pandas.DataFrame
        ``figures/theory/problems.csv``: per ``(instance, lam)``, ``fstar_norm``,
        ``curvature``, ``M``, ``L``, ``initial_error``.
    criteria : dict
        The design's ``convergence.criteria``.

    Returns
    -------
    pandas.DataFrame
        Per cell: ``in_domain``, ``step_offset``, the slope of the mean error
        and of the mean max error with bootstrap intervals and the rate class,
        the bound classes and ratios of Lemmas 1, 3 and Theorem 1 with M fixed
        at f*, their power (``<bound>_power``: the bound at the last checkpoint over the
        error of ``f = 0``), ``assumption3_exceeded`` (a sampled ``|l'|`` above the fixed
        ``M_1``), the same bound columns suffixed ``_sampled_M`` with ``M_1`` the
        largest ``|l'|`` the run sampled (read after the run), and the predicted and measured peak amplification.
    """
    problems = problems.set_index(["instance", "lam"])
    rows = []
    for key, group in records.groupby(CELL, sort=True):
        cell = dict(zip(CELL, key))
        problem = problems.loc[(cell["instance"], cell["lam"])]
        lam, theta = float(cell["lam"]), float(cell["theta_lam"]) / float(cell["lam"])
        marks = np.sort(group["t"].unique())
        pivots = {name: group.pivot(index="seed", columns="t", values=name)[marks].to_numpy()
                  for name in ("error_mean", "error_max", "fh_error", "fh_max", "h_error", "peak_error",
                               "derivative_max")}
        row = {**cell, "theta": theta, "step_offset": float(group["step_offset"].iloc[0]),
               "in_domain": in_lemma2_domain(float(cell["theta_lam"])), "seeds": pivots["error_mean"].shape[0]}
        slope_options = dict(fit_from=criteria["fit_from"], n_boot=criteria["bootstrap"],
                             confidence=criteria["confidence"], seed=criteria["bootstrap_seed"])
        for name in ("error_mean", "error_max"):
            slope, low, high = mean_error_slope(marks, pivots[name], **slope_options)
            row.update({f"{name}_slope": slope, f"{name}_low": low, f"{name}_high": high,
                        f"{name}_rate": rate_class(low, high, target=criteria["rate_target"],
                                                   tolerance=criteria["rate_tolerance"])})
        row["final_error_mean"] = float(np.mean(pivots["error_mean"][:, -1]))
        row.update(_cell_bounds(marks, pivots, problem, theta, lam, criteria, M=float(problem["M"])))
        derivative = pivots["derivative_max"][:, -1]
        row["derivative_max"] = float(np.max(derivative)) if np.isfinite(derivative).all() else float("inf")
        row["M1_fixed"] = float(problem["M1"])
        row["assumption3_exceeded"] = bool(row["derivative_max"] > problem["M1"])
        # Read after the run, not a test of the theorem: M from the largest |l'| the run sampled (M is linear in M_1)
        row.update(_cell_bounds(marks, pivots, problem, theta, lam, criteria, suffix="_sampled_M",
                                M=float(problem["M"]) * max(row["derivative_max"], float(problem["M1"]))
                                / float(problem["M1"])))
        peak, t_peak = predicted_amplification(theta, lam, float(problem["curvature"]), int(marks[-1]),
                                               row["step_offset"])
        peaks = pivots["peak_error"][:, -1]
        row["curvature"] = float(problem["curvature"])
        # 4 kappa mean_j (2 - gamma_j) bounds the curvature of every sampled risk; with L_1 = L_2 = 2 it equals L
        row["predicted_peak_sampled"] = predicted_amplification(theta, lam, float(problem["L"]), int(marks[-1]),
                                                                row["step_offset"])[0]
        row["predicted_peak"], row["predicted_t_peak"] = peak, t_peak
        row["measured_peak"] = (float(np.mean(peaks)) / float(problem["initial_error"])
                                if np.isfinite(peaks).all() else float("inf"))
        rows.append(row)
    return pd.DataFrame(rows)
