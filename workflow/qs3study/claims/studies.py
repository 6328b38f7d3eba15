"""The theory studies, driven by the design file: convergence cells and complexity sweeps.

The Snakemake scripts call :func:`run_convergence` and :func:`run_complexity`;
every setting comes from the design.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from qs3orao import QS3ORAO
from qs3orao.theory.bounds import LIPSCHITZ, loss_constant
from qs3orao.theory.complexity import run_sweep
from qs3orao.theory.convergence import derivative_bound, largest_curvature, make_problem, run_cells

__all__ = ["PAPER_SCHEDULE", "build_problems", "resolve_step_offset", "build_cells", "run_convergence",
           "run_complexity"]

#: Name of the paper's schedule ``theta / t`` in the design's ``schedules``.
PAPER_SCHEDULE = "paper"


def build_problems(design):
    """Every ``(instance, lam)`` problem of the design and its constants.

    Returns
    -------
    problems : dict
        ``(instance, lam)`` to :class:`qs3orao.theory.convergence.ConvergenceProblem`.
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
    """The numeric ``t0`` of a schedule ``theta / (t + t0)``.

    A number is used as given. ``"auto"`` is QS3ORAO's own choice: the
    estimator is fitted for one step with ``step_offset="auto"`` and its fitted
    ``step_offset_`` is read.

    Returns
    -------
    float or None
        None when QS3ORAO has no ``step_offset`` parameter (the schedule then
        is not run, and the ledger says so).
    """
    if value != "auto":
        return float(value)
    if "step_offset" not in inspect.signature(QS3ORAO.__init__).parameters:
        return None
    y = np.where(problem.codes < 0, -1, problem.codes)
    model = QS3ORAO(n_iter=1, batch_size=1, n_components=1, gamma=problem.gamma, lam=problem.lam, theta=theta,
                    tradeoff=problem.tradeoff, step_offset="auto", random_state=0).fit(problem.X, y)
    return float(model.step_offset_)


def build_cells(design, problems):
    """The study's cells: the primary grid under every schedule, the secondary grid under the paper's.

    Returns
    -------
    cells : list of dict
    skipped : dict
        Schedule name to the reason it was not run.
    """
    conv = design["convergence"]
    cells, skipped = [], {}
    grids = [(conv["primary"], conv["lambdas"], conv["theta_lams"], conv["schedules"]),
             (conv["secondary"], conv["secondary"]["lambdas"], conv["secondary"]["theta_lams"],
              {PAPER_SCHEDULE: conv["schedules"][PAPER_SCHEDULE]})]
    for sampling, lambdas, products, schedules in grids:
        for schedule, offset in schedules.items():
            for instance in conv["instances"]:
                for lam in lambdas:
                    for c in products:
                        problem = problems[(instance, float(lam))]
                        t0 = resolve_step_offset(offset, problem, float(c) / float(lam))
                        if t0 is None:
                            skipped[schedule] = (f"step_offset={offset!r}: QS3ORAO has no step_offset parameter "
                                                 "in this version")
                            continue
                        cells.append({"instance": instance, "lam": float(lam), "theta_lam": float(c),
                                      "batch_size": int(sampling["batch_size"]),
                                      "n_components": int(sampling["n_components"]),
                                      "schedule": schedule, "step_offset": t0})
    return cells, skipped


def run_convergence(design, *, n_jobs, progress=None):
    """Run the convergence study of the design.

    Returns
    -------
    records : pandas.DataFrame
        Tidy records, one per (cell, seed, checkpoint).
    problems : pandas.DataFrame
        :func:`build_problems`' table.
    skipped : dict
        Schedules not run, with the reason.
    """
    conv = design["convergence"]
    problems, table = build_problems(design)
    cells, skipped = build_cells(design, problems)
    records = run_cells(cells, problems, seeds=int(conv["seeds"]), n_iter=int(conv["n_iter"]),
                        n_checkpoints=int(conv["n_checkpoints"]), n_jobs=n_jobs, progress=progress)
    return records, table, skipped


def run_complexity(design, progress=None):
    """Every complexity sweep of the design, as tidy records."""
    comp = design["complexity"]
    records = []
    for name, sizes in comp["sizes"].items():
        records += run_sweep(name, sizes, comp["settings"], repeats=int(comp["repeats"]))
        if progress:
            progress(name)
    return pd.DataFrame(records)
