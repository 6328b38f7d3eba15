"""The theory studies, driven by the design file: convergence cells and complexity sweeps.

The Snakemake scripts call :func:`run_convergence` and :func:`run_complexity`;
every setting comes from the design.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from qs3orao import schedule
from qs3orao.curvature import data_curvature_bound
from qs3study.claims.design import require
from qs3study.theory.bounds import LIPSCHITZ, loss_constant
from qs3study.theory.complexity import SWEEPS, make_data, run_sweep
from qs3study.theory.convergence import derivative_bound, largest_curvature, make_problem, run_cells
from qs3study.theory.huber import exact_minimiser

__all__ = ["PAPER_SCHEDULE", "RATE_COLUMNS", "BASELINE_SWEEPS", "build_huber_problems", "run_huber", "build_problems", "resolve_step_offset", "build_cells",
           "run_convergence", "offset_data_bounds", "offset_data_cells", "run_offset_data", "rate_cells", "run_rate", "run_complexity"]

#: Name of the paper's schedule ``theta / t`` in the design's ``schedules``.
PAPER_SCHEDULE = "paper"
#: What the rate study records per checkpoint.
RATE_COLUMNS = ("error_mean", "peak_error")


def build_problems(design):
    """Every ``(instance, lam)`` problem of the design and its constants.

    Returns
    -------
    problems : dict
        ``(instance, lam)`` to :class:`qs3study.theory.convergence.ConvergenceProblem`.
    table : pandas.DataFrame
        Per problem: ``fstar_norm``, ``curvature`` (largest eigenvalue of the
        risk's Hessian on the RKHS), ``M1`` (largest ``|l'|`` at ``f*`` over
        every pair the sampler can draw: Assumption 3's ``M_1 = M_2`` fixed in
        advance), ``M`` and ``L`` (the paper's combinations), ``initial_error``
        and ``initial_error_max`` (errors of ``f = 0``).
    """
    conv = design["convergence"]
    problems, rows = {}, []
    for name, spec in conv["instances"].items():
        for lam in conv["lambdas"]:
            problem = make_problem(**spec, lam=float(lam))
            problems[(name, float(lam))] = problem
            fstar = problem.fstar_scores
            m1 = derivative_bound(fstar, problem.codes, problem.tradeoff)
            rows.append({"instance": name, "lam": float(lam), "n": fstar.size, "fstar_norm": problem.fstar_norm,
                         "curvature": largest_curvature(problem), "M1": m1,
                         "M": loss_constant(problem.tradeoff, m1),
                         "L": loss_constant(problem.tradeoff, LIPSCHITZ),
                         "initial_error": float(np.mean(fstar ** 2)), "initial_error_max": float(np.max(fstar ** 2))})
    return problems, pd.DataFrame(rows)


def resolve_step_offset(value, problem, theta):
    """The numeric ``t0`` of a schedule ``theta / (t + t0)``: a number as given, ``"auto"`` as QS3ORAO resolves it."""
    return schedule.resolve_step_offset(value, theta=theta, lam=problem.lam, tradeoff=problem.tradeoff)


def build_cells(design, problems):
    """The study's cells: the primary grid under every schedule, the secondary grid under the paper's.

    Returns
    -------
    list of dict
    """
    conv = design["convergence"]
    cells = []
    grids = [(conv["primary"], conv["lambdas"], conv["theta_lams"], conv["schedules"]),
             (conv["secondary"], conv["secondary"]["lambdas"], conv["secondary"]["theta_lams"],
              {PAPER_SCHEDULE: conv["schedules"][PAPER_SCHEDULE]})]
    for sampling, lambdas, products, schedules in grids:
        for name, offset in schedules.items():
            for instance in conv["instances"]:
                for lam in lambdas:
                    for c in products:
                        problem = problems[(instance, float(lam))]
                        t0 = resolve_step_offset(offset, problem, float(c) / float(lam))
                        cells.append({"instance": instance, "lam": float(lam), "theta_lam": float(c),
                                      "batch_size": int(sampling["batch_size"]),
                                      "n_components": int(sampling["n_components"]),
                                      "schedule": name, "step_offset": t0})
    return cells


def run_convergence(design, *, n_jobs, progress=None):
    """Run the convergence study of the design.

    Returns
    -------
    records : pandas.DataFrame
        Tidy records, one per (cell, seed, checkpoint).
    problems : pandas.DataFrame
        :func:`build_problems`' table.
    """
    conv = design["convergence"]
    problems, table = build_problems(design)
    cells = build_cells(design, problems)
    records = run_cells(cells, problems, seeds=int(conv["seeds"]), n_iter=int(conv["n_iter"]),
                        n_checkpoints=int(conv["n_checkpoints"]), n_jobs=n_jobs, progress=progress)
    return records, table


def offset_data_bounds(design):
    """Per instance, the data-based curvature bound of the offset_data section.

    The bound depends on the rows, the trade-off and the kernel, not on ``lam``: it is
    drawn once per instance (from its first ``lam``'s problem) with the section's seed.

    Returns
    -------
    dict
        Instance name to :class:`qs3orao.curvature.CurvatureBound`.
    """
    spec, conv = design["offset_data"], design["convergence"]
    bounds = {}
    for instance, instance_spec in conv["instances"].items():
        problem = make_problem(**instance_spec, lam=float(conv["lambdas"][0]))
        bounds[instance] = data_curvature_bound(problem.X, problem.codes, problem.tradeoff, gamma=problem.gamma,
                                                n_draws=int(spec["n_draws"]), delta=float(spec["delta"]),
                                                random_state=int(spec["seed"]))
    return bounds


def offset_data_cells(design, problems):
    """The offset_data section's cells: the convergence section's primary grid under ``step_offset="auto-data"``."""
    spec, conv = design["offset_data"], design["convergence"]
    bounds = offset_data_bounds(design)
    return [{"instance": instance, "lam": float(lam), "theta_lam": float(c),
             "batch_size": int(conv["primary"]["batch_size"]), "n_components": int(conv["primary"]["n_components"]),
             "schedule": spec["schedule"],
             "step_offset": schedule.resolve_step_offset(
                 spec["step_offset"], theta=float(c) / float(lam), lam=float(lam),
                 tradeoff=problems[(instance, float(lam))].tradeoff,
                 data_curvature=lambda instance=instance: bounds[instance].bound)}
            for instance in conv["instances"] for lam in conv["lambdas"] for c in conv["theta_lams"]]


def run_offset_data(design, *, n_jobs, progress=None):
    """Row O-data's study: the primary grid under the data-based offset, the convergence section's seeds.

    Returns
    -------
    pandas.DataFrame
        Tidy records as :func:`run_convergence`'s.
    """
    conv = design["convergence"]
    problems, _ = build_problems(design)
    return run_cells(offset_data_cells(design, problems), problems, seeds=int(conv["seeds"]),
                     n_iter=int(conv["n_iter"]), n_checkpoints=int(conv["n_checkpoints"]), n_jobs=n_jobs,
                     progress=progress)


def rate_cells(design, section="rate"):
    """A rate study's cells: the convergence section's primary grid at the study's theta*lambda.

    Parameters
    ----------
    design : dict
    section : str
        Dotted path of the study's section (``"rate"``, ``"v2.rate"``); its
        ``lambdas`` when it names them, else the convergence section's.
    """
    conv, rate = design["convergence"], require(design, section)
    return [{"instance": instance, "lam": float(lam), "theta_lam": float(c),
             "batch_size": int(conv["primary"]["batch_size"]), "n_components": int(conv["primary"]["n_components"]),
             "schedule": PAPER_SCHEDULE, "step_offset": float(conv["schedules"][PAPER_SCHEDULE])}
            for instance in conv["instances"] for lam in rate.get("lambdas", conv["lambdas"])
            for c in rate["theta_lams"]]


def run_rate(design, *, n_jobs, progress=None, section="rate"):
    """Run a rate study of the design (its own seeds and checkpoints).

    Parameters
    ----------
    section : str
        Dotted path of the study's section (``"rate"``, ``"v2.rate"``).

    Returns
    -------
    pandas.DataFrame
        Tidy records: the cell's keys, ``seed``, ``t`` and :data:`RATE_COLUMNS`.
    """
    rate = require(design, section)
    problems, _ = build_problems(design)
    return run_cells(rate_cells(design, section), problems, seeds=int(rate["seeds"]), n_iter=int(rate["n_iter"]),
                     n_checkpoints=int(rate["n_checkpoints"]),
                     window=(float(rate["window_from"]), int(rate["window_points"])), columns=RATE_COLUMNS,
                     n_jobs=n_jobs, progress=progress)


def build_huber_problems(design, section="huber"):
    """Every ``(instance, lam)`` of a Huberised-loss study's section (``"huber"``, ``"v2.huber_informative"``) with ``f*`` the exact minimiser for the Huberised loss.

    Returns
    -------
    problems : dict
        ``(instance, lam)`` to :class:`qs3study.theory.convergence.ConvergenceProblem` (its ``coef``: that ``f*``).
    table : pandas.DataFrame
        As :func:`build_problems`, with ``M1 = 2 delta`` fixed by the loss (Assumption 3 holds by
        construction), ``curvature`` the squared loss's (an upper bound: the Huberised loss's
        curvature is at most it) and ``gradient_norm`` of the exact solve.
    """
    import dataclasses

    spec = require(design, section)
    delta = float(spec["delta"])
    problems, rows = {}, []
    for name, instance in design["convergence"]["instances"].items():
        for lam in spec["lambdas"]:
            squared = make_problem(**instance, lam=float(lam))
            coef, norm = exact_minimiser(squared.kernel, squared.codes, squared.tradeoff, float(lam), delta,
                                         gtol=float(spec["gtol"]))
            problem = dataclasses.replace(squared, coef=coef)
            problems[(name, float(lam))] = problem
            fstar = problem.fstar_scores
            rows.append({"instance": name, "lam": float(lam), "n": fstar.size, "fstar_norm": problem.fstar_norm,
                         "curvature": largest_curvature(squared), "M1": 2.0 * delta,
                         "M": loss_constant(problem.tradeoff, 2.0 * delta),
                         "L": loss_constant(problem.tradeoff, LIPSCHITZ),
                         "initial_error": float(np.mean(fstar ** 2)), "initial_error_max": float(np.max(fstar ** 2)),
                         "gradient_norm": norm})
    return problems, pd.DataFrame(rows)


def run_huber(design, *, n_jobs, progress=None, section="huber"):
    """Theorem 1 in its own setting: a Huberised-loss section's cells (paper's schedule, batch 1), tidy records.

    Parameters
    ----------
    section : str
        Dotted path of the study's section (``"huber"``, ``"v2.huber_informative"``).

    Returns
    -------
    records, problems : pandas.DataFrame
    """
    spec, conv = require(design, section), design["convergence"]
    problems, table = build_huber_problems(design, section)
    cells = [{"instance": instance, "lam": float(lam), "theta_lam": float(c),
              "batch_size": int(conv["primary"]["batch_size"]), "n_components": int(conv["primary"]["n_components"]),
              "schedule": PAPER_SCHEDULE, "step_offset": float(conv["schedules"][PAPER_SCHEDULE]),
              "huber_delta": float(spec["delta"])}
             for instance in conv["instances"] for lam in spec["lambdas"] for c in spec["theta_lams"]]
    records = run_cells(cells, problems, seeds=int(spec["seeds"]), n_iter=int(spec["n_iter"]),
                        n_checkpoints=int(spec["n_checkpoints"]),
                        window=(float(spec["window_from"]), int(spec["window_points"])), n_jobs=n_jobs,
                        progress=progress)
    return records, table


def _baseline(model, n, o):
    """A zero-argument fit of one of the paper's exact baselines on :func:`make_data`'s rows."""
    from baselines.pnu_auc import MPNUAUC
    from baselines.samult import MSAMULT

    X, y = make_data(n, o)
    k = o["n_classes"]
    if model == "samult":
        estimator = MSAMULT(gamma=o["gamma"], lam=o["lam"], tradeoff=o["tradeoff"])
    else:
        # the known class priors (y cycles through the classes) and the PU/PN mix: no prior estimation is timed
        estimator = MPNUAUC(gamma=o["gamma"], lam=o["lam"], pnu_mix=o["tradeoff"],
                            priors=[(k - 1 - j) / k for j in range(k - 1)])
    return lambda: estimator.fit(X, y)


#: The paper's exact baselines (they live in ``baselines``, which :mod:`qs3orao` does not import).
BASELINE_SWEEPS = {
    "samult_time_vs_n": ("n", lambda s, o: _baseline("samult", s, o), "cpu_seconds"),
    "pnu_auc_time_vs_n": ("n", lambda s, o: _baseline("pnu_auc", s, o), "cpu_seconds"),
    "samult_operations_vs_n": ("n", lambda s, o: _baseline("samult", s, o), "operations"),
}


def run_complexity(design, progress=None, section="complexity"):
    """Every complexity sweep of the design, as tidy records.

    Parameters
    ----------
    section : str
        Dotted path of the section whose ``repeats`` the sweeps run
        (``"complexity"``, ``"v2.complexity"``: the complexity section's sizes and settings either way).
    """
    comp = design["complexity"]
    records = []
    for name, sizes in comp["sizes"].items():
        records += run_sweep(name, sizes, comp["settings"], repeats=int(require(design, section)["repeats"]),
                             sweeps={**SWEEPS, **BASELINE_SWEEPS})
        if progress:
            progress(name)
    return pd.DataFrame(records)
