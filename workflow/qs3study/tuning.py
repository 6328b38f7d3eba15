"""One tuning job: cross-validate a method's hyperparameters on one trial's split."""

from __future__ import annotations

import math
import time

import numpy as np

from baselines.model_selection import cross_validate_params
from baselines.registry import TuningGrid, tuning_grid
from qs3orao.datasets import semisupervised_split

from .configuration import build_estimator
from .design import parse_size, trial_seed
from .files import write_json
from .kernel_width import absolute_params, gamma_scale, grid_edges
from .runtime import limit_threads, setup_logging

__all__ = ["resolve_grid", "fixed_params", "scaled_grid", "candidate_bound", "SearchProgress", "tune_job"]


def resolve_grid(method, grid):
    """The :class:`baselines.registry.TuningGrid` of a configured search space.

    Parameters
    ----------
    method : str
        Registered method name.
    grid : "registry" or dict
        ``"registry"``: the paper's staged search (the method's registered grid);
        a mapping parameter -> values: their full product, nothing else.
    """
    if grid == "registry":
        return tuning_grid(method)
    return TuningGrid(grid={name: tuple(values) for name, values in grid.items()})


def fixed_params(spec, grid, seed):
    """Parameters every fit of the search shares: :func:`build_estimator`'s, minus the searched ones."""
    estimator, _ = build_estimator(spec, seed=seed)
    given = set(spec["params"]) | {"random_state", "memory_budget"}
    searched = set(grid.grid) | {grid.split_param}
    return {name: value for name, value in estimator.get_params().items() if name in given - searched}


def scaled_grid(grid, scale):
    """``grid`` with its ``gamma`` values multiplied by ``scale`` (the search runs on absolute widths)."""
    if "gamma" not in grid.grid or scale == 1.0:
        return grid
    values = {**grid.grid, "gamma": tuple(float(g) * scale for g in grid.grid["gamma"])}
    return TuningGrid(values, grid.split_param, grid.split_values, grid.split_default, grid.separable)


def _relative(best_params, grid, scale):
    """Tuned values with ``gamma`` read back as the grid's own (relative) value."""
    if "gamma" not in best_params or "gamma" not in grid.grid or scale == 1.0:
        return dict(best_params)
    absolute = [float(g) * scale for g in grid.grid["gamma"]]
    return {**best_params, "gamma": float(grid.grid["gamma"][absolute.index(best_params["gamma"])])}


def candidate_bound(grid, n_classes):
    """Most candidates the staged search of ``grid`` scores (:func:`baselines.model_selection.cross_validate_params`)."""
    total = math.prod(len(values) for values in grid.grid.values())
    if grid.split_param is not None:
        total += len(grid.split_values)
        total += 1 if grid.separable else (n_classes - 1) * len(grid.split_values)
    return total


class SearchProgress:
    """Logs every scored candidate with the time spent and an estimate of the time left.

    Parameters
    ----------
    log : logging.Logger
    bound : int
        Most candidates the search scores (:func:`candidate_bound`); the estimate assumes every
        candidate costs the mean so far, so it is an upper bound's estimate.
    clock : callable, default=time.perf_counter
    """

    def __init__(self, log, bound, clock=time.perf_counter):
        self.log, self.bound, self.clock = log, bound, clock
        self.start, self.done = clock(), 0

    def __call__(self, record):
        self.done += 1
        elapsed = self.clock() - self.start
        left = elapsed / self.done * max(self.bound - self.done, 0)
        self.log.info("candidate %d of at most %d (%s stage): cv auc %.4f; %.0f s spent, at most about %.0f s left",
                      self.done, self.bound, record["stage"], record["cv_auc"], elapsed, left)


def tune_job(smk):
    """Snakemake job of rule ``tune``: search ``grid`` by k-fold cross-validation over the trial's labeled rows.

    The unlabeled rows given to every fold are the first ``tuning.n_unlabeled``
    of the trial's unlabeled pool (the split function nests pools, so they are
    a subset of every larger pool of the same trial). Writes the best
    parameters and the whole search record. A search that cannot run (a fold
    without both sides of a split, a fit over the memory budget) is recorded
    with its reason and no best parameters; the trial's training jobs then fail
    with that reason, or train on the configured parameters and say so when
    ``tuning.on_failure`` is ``configured`` (:func:`qs3study.training.tuning_failure`).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    log = setup_logging(smk.log[0])
    spec = smk.params.spec
    seed = trial_seed(smk.wildcards.dataset, int(smk.wildcards.trial), smk.params.base_seed)
    X_all = np.load(smk.input.X, mmap_mode="r")
    y_all = np.load(smk.input.y)
    available = y_all.size - smk.params.n_labeled
    size = parse_size(smk.params.n_unlabeled)
    split = semisupervised_split(y_all, n_labeled=smk.params.n_labeled, seed=seed,
                                 n_unlabeled=available if size is None else min(size, available))
    X = np.array(X_all[split.train_idx])
    grid = resolve_grid(spec["method"], smk.params.grid)
    kernel_width = smk.params.kernel_width
    scale = gamma_scale(kernel_width, X[split.labeled_mask], seed=seed)
    fixed = absolute_params(fixed_params(spec, grid, seed), scale)
    log.info("%s on %s trial %s: %s, fixed %s, kernel width %s (gamma x %.6g)", spec["method"],
             smk.wildcards.dataset, smk.wildcards.trial, grid, fixed, kernel_width, scale)
    record = {"dataset": smk.wildcards.dataset, "method": smk.wildcards.method, "seed": seed,
              "n_labeled": split.n_labeled, "n_unlabeled": split.n_unlabeled,
              "grid": {"grid": grid.grid, "split_param": grid.split_param, "split_values": grid.split_values},
              "kernel_width": kernel_width, "gamma_scale": scale,
              "status": "ok", "reason": "", "best_params": {}, "best_score": None, "grid_edges": [], "search": []}
    start = time.perf_counter()
    with limit_threads(smk.threads):
        try:
            bound = candidate_bound(grid, np.unique(split.y_train[split.labeled_mask]).size)
            log.info("up to %d candidates x %d folds", bound, smk.params.n_folds)
            result = cross_validate_params(spec["method"], X, split.y_train, scaled_grid(grid, scale),
                                           n_folds=smk.params.n_folds, random_state=seed, fixed_params=fixed,
                                           progress=SearchProgress(log, bound))
            best = _relative(result.best_params, grid, scale)
            edges = grid_edges(best, {**grid.grid, **({grid.split_param: grid.split_values}
                                                      if grid.split_param else {})})
            record.update(best_params=best, best_score=result.best_score, grid_edges=edges, search=result.table)
            log.info("best %s (cv auc %.4f)", best, result.best_score)
            for edge in edges:
                log.warning(edge)
        except (ValueError, MemoryError) as error:  # the trial is trained on the configured parameters instead
            status = "out_of_memory_budget" if isinstance(error, MemoryError) else "failed"
            record.update(status=status, reason=" ".join(f"{type(error).__name__}: {error}".split()))
            log.exception("search failed; its training jobs fail too, unless tuning.on_failure is 'configured'")
    record["time"] = time.perf_counter() - start
    write_json(smk.output[0], record)
