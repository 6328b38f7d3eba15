"""One tuning job: cross-validate a method's hyperparameters on one trial's split."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from baselines.model_selection import CVResult, Halving, ScoreMemo, cross_validate_params
from qs3study.datasets import trial_rows

from qs3study.configuration import build_estimator
from qs3study.design import parse_size, trial_seed, tuning_seed
from qs3study.files import write_json
from qs3study.grids import resolve_grid
from qs3study.kernel_width import absolute_params, gamma_scale, grid_edges, settled_edges
from qs3study.runtime import limit_threads, process_cpu_s, setup_logging

__all__ = ["WINDOW", "halving", "fixed_params", "scaled_grid", "widened_search", "last_gain",
           "candidate_bound", "SearchProgress", "tune_job"]

#: Values of a widened parameter searched per round: consecutive powers of two, as many as the paper's grid.
WINDOW = 7


def halving(early_stopping):
    """The :class:`baselines.model_selection.Halving` of ``tuning.early_stopping`` (None: the paper's protocol)."""
    return None if early_stopping is None else Halving(**early_stopping)


def fixed_params(spec, grid, seed):
    """Parameters every fit of the search shares: :func:`build_estimator`'s, minus the searched ones."""
    estimator, _ = build_estimator(spec, seed=seed)
    given = set(spec["params"]) | {"random_state", "memory_budget", "low_memory"}  # what build_estimator adds
    searched = set(grid.grid) | {grid.split_param}
    return {name: value for name, value in estimator.get_params().items() if name in given - searched}


def scaled_grid(grid, scale):
    """``grid`` with its ``gamma`` values multiplied by ``scale`` (the search runs on absolute widths)."""
    if "gamma" not in grid.grid or scale == 1.0:
        return grid
    return replace(grid, grid={**grid.grid, "gamma": tuple(float(g) * scale for g in grid.grid["gamma"])})


def _relative(best_params, grid, scale):
    """Tuned values with ``gamma`` read back as the grid's own (relative) value."""
    if "gamma" not in best_params or "gamma" not in grid.grid or scale == 1.0:
        return dict(best_params)
    absolute = [float(g) * scale for g in grid.grid["gamma"]]
    return {**best_params, "gamma": float(grid.grid["gamma"][absolute.index(best_params["gamma"])])}


def _window(centre, low, high, width=WINDOW):
    """``width`` consecutive exponents around ``centre``, shifted to lie within ``[low, high]``."""
    start = min(max(centre - width // 2, low), max(high - width + 1, low))
    return list(range(start, min(start + width, high + 1)))


def last_gain(rounds):
    """The last round's best cross-validated AUC minus the best of the rounds before it (None for one round).

    Parameters
    ----------
    rounds : list of dict
        The rounds of :func:`widened_search`, each with its ``best_score``.

    Returns
    -------
    float or None
    """
    if len(rounds) < 2:
        return None
    return rounds[-1]["best_score"] - max(r["best_score"] for r in rounds[:-1])


def widened_search(run, grid, ranges, *, whole=(), widen_tolerance=None, widen_limits=(), log=None):
    """The search of ``grid`` (staged or a plain product) with some parameters over wide ranges of powers of two.

    Each parameter of ``ranges`` (name -> ``(low, high)`` exponents) is searched
    on a window of :data:`WINDOW` consecutive powers of two, first around the
    centre of its registered values (``2^-3 .. 2^3`` -> ``2^0``), clipped into
    its range; a parameter of ``whole`` is searched on its whole range in
    every round instead (for ``lam`` of a method with a ``lam`` path, whose
    extra values cost a matrix product each where a window's cost a solve).
    After each round (the whole staged search, ``run``), every windowed
    parameter is re-centred on its best value; another round runs while some
    best value is the smallest or largest value searched so far for its
    parameter and the range goes beyond it. So the search stops when no tuned
    value sits on the edge of what was searched, or sits on the declared limit
    (an edge hit that remains, counted by :func:`qs3study.kernel_width.grid_edges`),
    or, with ``widen_tolerance``, when a round's best cross-validated AUC improves on
    the best of the rounds before by less than it (:func:`last_gain`; an edge hit may then
    remain, and :func:`tune_job` marks it settled). A parameter of ``widen_limits`` has its
    declared limit widened too: a tuned value on the limit itself moves the next round past
    it (a whole range grows by :data:`WINDOW` powers of two beyond that edge), so
    its search stops only inside what it searched or by ``widen_tolerance``. That stop comes:
    every round that goes on gains at least the tolerance in a CV AUC bounded by 1.

    Parameters
    ----------
    run : callable
        ``run(TuningGrid) -> baselines.model_selection.CVResult``.
    grid : baselines.registry.TuningGrid
        The registered search (its values of the widened parameters are replaced).
    ranges : dict
        Parameter -> ``(low, high)``: the declared limits ``2^low .. 2^high``.
    whole : collection of str, default=()
        Parameters of ``ranges`` searched on their whole range from the first round.
    widen_tolerance : float, optional
        Least gain in best CV AUC for which a round earns a next one. Default None: rounds run
        until no value sits on an edge (what the committed reproductions did).
    widen_limits : collection of str, default=()
        Parameters of ``ranges`` whose declared limits are widened while a tuned value sits on them;
        needs a positive ``widen_tolerance``.
    log : logging.Logger, optional

    Returns
    -------
    result : CVResult
        The best round's result (highest cross-validated AUC).
    searched : dict
        Parameter -> every value searched (sorted): the union over the rounds, what edges are judged on.
    rounds : list of dict
        ``grid`` (the widened windows), ``best_params`` and ``best_score`` of every round.
    """
    unknown = sorted(set(ranges) - set(grid.grid))
    if unknown:
        raise ValueError(f"grid_range names {unknown}, which the configured search does not tune "
                         f"(it tunes {sorted(grid.grid)})")
    for key, names in (("whole_range", whole), ("widen_limits", widen_limits)):
        undeclared = sorted(set(names) - set(ranges))
        if undeclared:
            raise ValueError(f"{key} names {undeclared}, which grid_range does not declare "
                             f"(it declares {sorted(ranges)})")
    if widen_limits and not (widen_tolerance or 0) > 0:
        raise ValueError(f"widen_limits {sorted(widen_limits)} needs a positive widen_tolerance to stop the "
                         f"widening, got {widen_tolerance}")
    limits = dict(ranges)
    exponents = {}
    for name, (low, high) in ranges.items():
        if not low < high:
            raise ValueError(f"grid_range.{name} must be [low, high] with low < high, got {[low, high]}")
        if name in whole:
            exponents[name] = list(range(low, high + 1))
            continue
        centre = int(round(float(np.median(np.log2(grid.grid[name])))))
        exponents[name] = _window(centre, low, high)
    searched = {name: set(values) for name, values in exponents.items()}
    best, rounds = None, []
    while True:
        values = {**grid.grid, **{name: tuple(2.0 ** e for e in exps) for name, exps in exponents.items()}}
        result = run(replace(grid, grid=values))
        rounds.append({"grid": {name: values[name] for name in ranges}, "best_params": result.best_params,
                       "best_score": result.best_score})
        if log is not None:
            log.info("round %d: %s -> best %s (cv auc %.4f)", len(rounds), rounds[-1]["grid"], result.best_params,
                     result.best_score)
        gain = last_gain(rounds)
        if best is None or result.best_score > best.best_score:
            best = result
        if gain is not None and widen_tolerance is not None and gain < widen_tolerance:
            if log is not None:
                log.info("widening stops: round %d's best cv auc %.4f improves on the previous best by less than "
                         "widen_tolerance %g", len(rounds), result.best_score, widen_tolerance)
            break
        moved = False
        for name in ranges:
            low, high = limits[name]
            chosen = int(round(np.log2(result.best_params[name])))
            if name in widen_limits:  # only a value on the limit itself moves it
                low = chosen - WINDOW if chosen == min(searched[name]) <= low else low
                high = chosen + WINDOW if chosen == max(searched[name]) >= high else high
                limits[name] = low, high
            if name in whole:
                grown = list(range(low, high + 1))
                moved |= grown != exponents[name]
                exponents[name] = grown
                continue
            exponents[name] = _window(chosen, low, high)
            if chosen == min(searched[name]) > low or chosen == max(searched[name]) < high:
                moved = True
        if not moved:
            break
        for name in ranges:
            searched[name] |= set(exponents[name])
    return best, {name: tuple(2.0 ** e for e in sorted(exps)) for name, exps in searched.items()}, rounds


def candidate_bound(grid, n_classes):
    """Most candidates the staged search of ``grid`` scores (:func:`baselines.model_selection.cross_validate_params`)."""
    total = math.prod(len(values) for values in grid.grid.values())
    if grid.split_param is not None:
        total += len(grid.split_values)
        if grid.per_split:
            total += 1 if grid.separable else (n_classes - 1) * len(grid.split_values)
    return total


class SearchProgress:
    """Logs every scored candidate with the time spent and an estimate of the time left.

    A stage's candidates are scored together once every fold is fitted, so between
    candidate lines the folds fitted are logged too, at most every ``interval`` seconds.

    Parameters
    ----------
    log : logging.Logger
    bound : int
        Most candidates the search scores (:func:`candidate_bound` of the grid it searches); the
        estimate assumes every candidate left costs the mean of the candidates fitted so far (a
        candidate whose scores a :class:`baselines.model_selection.ScoreMemo` gave, ``fitted_folds``
        0, costs nothing and is left out of that mean), so it is an upper bound's estimate.
    clock : callable, default=time.perf_counter
    interval : float, default=30
        Seconds since the last line after which a fitted fold is logged.
    """

    def __init__(self, log, bound, clock=time.perf_counter, interval=30.0):
        self.log, self.bound, self.clock, self.interval = log, bound, clock, interval
        self.start, self.done, self.fitted = clock(), 0, 0
        self.last_line = self.start

    def __call__(self, record):
        now = self.clock()
        if "cv_auc" not in record:  # a fold fitted for the stage's candidates
            if now - self.last_line >= self.interval:
                self.last_line = now
                self.log.info("%s stage: fold %d of %d fitted for %d candidates; %.0f s spent", record["stage"],
                              record["fold"], record["n_folds"], record["n_candidates"], now - self.start)
            return
        reused = record.get("fitted_folds") == 0
        self.done += 1
        self.fitted += not reused
        elapsed, self.last_line = now - self.start, now
        left = elapsed / max(self.fitted, 1) * max(self.bound - self.done, 0)
        self.log.info("candidate %d of at most %d (%s stage%s): cv auc %.4f; %.0f s spent, at most about %.0f s left",
                      self.done, self.bound, record["stage"], ", scores reused" if reused else "", record["cv_auc"],
                      elapsed, left)


def tune_job(smk):
    """Snakemake job of rule ``tune``: search ``grid`` by k-fold cross-validation over the trial's labeled rows.

    A dataset with a ``group_column`` is split by group and its folds keep groups apart too
    (:func:`qs3study.datasets.trial_rows`, ``groups`` of :func:`baselines.model_selection.cross_validate_params`).

    The unlabeled rows given to every fold are the first ``tuning.n_unlabeled``
    of the trial's unlabeled pool (the split function nests pools, so they are
    a subset of every larger pool of the same trial). Writes the best
    parameters and the whole search record (``search``: one row per candidate; for a widened
    search, ``grid_range`` (and ``whole_range``, ``widen_tolerance``, ``widen_limits`` when set), every round's candidates with their ``round`` and ``fitted_folds``:
    the rounds share a :class:`baselines.model_selection.ScoreMemo`, so a candidate an earlier
    round scored is not fitted again and says so with 0). A search that cannot run (a fold
    without both sides of a split, a fit over the memory budget) is recorded
    with its reason and no best parameters; the trial's training jobs then fail
    with that reason, or train on the configured parameters and say so when
    ``tuning.on_failure`` is ``configured`` (:func:`qs3study.stages.training.tuning_failure`).
    With ``widen_tolerance``, when the last round gained less than it, the edge hits of the
    widened parameters are marked settled (:func:`qs3study.kernel_width.settled_edges`).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    log = setup_logging(smk.log[0])
    spec = smk.params.spec
    seed = trial_seed(smk.wildcards.dataset, int(smk.wildcards.trial), smk.params.base_seed)
    draw = int(getattr(smk.wildcards, "draw", 0))  # rule tune_draw's wildcard; rule tune is draw 0
    search_seed = tuning_seed(seed, draw)  # the folds and the fits' streams; the split keeps the trial's seed
    X_all = np.load(smk.input.X, mmap_mode="r")
    y_all = np.load(smk.input.y)
    available = y_all.size - smk.params.n_labeled
    size = parse_size(smk.params.n_unlabeled)
    split, X, groups = trial_rows(X_all, y_all, n_labeled=smk.params.n_labeled, seed=seed,
                                  n_unlabeled=available if size is None else min(size, available),
                                  group_column=smk.params.get("group_column"))
    grid = resolve_grid(spec["method"], smk.params.grid)
    ranges = smk.params.get("grid_range") or {}
    whole = list(smk.params.get("whole_range") or [])
    widen_tolerance = smk.params.get("widen_tolerance")
    widen_limits = list(smk.params.get("widen_limits") or [])
    early_stopping = halving(smk.params.early_stopping)
    kernel_width = smk.params.kernel_width
    scale = gamma_scale(kernel_width, X[split.labeled_mask], seed=seed)
    fixed = absolute_params(fixed_params(spec, grid, search_seed), scale)
    log.info("%s on %s trial %s: %s, fixed %s, kernel width %s (gamma x %.6g)", spec["method"],
             smk.wildcards.dataset, smk.wildcards.trial, grid, fixed, kernel_width, scale)
    record = {"dataset": smk.wildcards.dataset, "method": smk.wildcards.method, "seed": seed,
              "n_labeled": split.n_labeled, "n_unlabeled": split.n_unlabeled,
              "grid": {"grid": grid.grid, "split_param": grid.split_param, "split_values": grid.split_values,
                       "per_split": grid.per_split},
              "grid_range": ranges, "rounds": [], "early_stopping": smk.params.early_stopping,
              "kernel_width": kernel_width, "gamma_scale": scale,
              "status": "ok", "reason": "", "best_params": {}, "best_score": None, "grid_edges": [], "search": []}
    if draw:  # only at draw >= 1: draw 0's record is the single tuning's, byte for byte
        record.update(tuning_draw=draw, search_seed=search_seed)
    if whole:  # only then: the records of a search without one keep the form they had before the option
        record["whole_range"] = whole
    if widen_tolerance is not None:  # likewise
        record["widen_tolerance"] = widen_tolerance
    if widen_limits:  # likewise
        record["widen_limits"] = widen_limits
    start = time.perf_counter()
    with limit_threads(smk.threads):
        try:
            n_classes = np.unique(split.y_train[split.labeled_mask]).size
            memo = ScoreMemo() if ranges else None

            def run(candidates):  # a widened round searches other values, as many or more: its own bound
                bound = candidate_bound(candidates, n_classes)
                log.info("up to %d candidates x %d folds", bound, smk.params.n_folds)
                result = cross_validate_params(spec["method"], X, split.y_train, scaled_grid(candidates, scale),
                                               n_folds=smk.params.n_folds, random_state=search_seed,
                                               fixed_params=fixed, groups=groups,
                                               halving=early_stopping,
                                               progress=SearchProgress(log, bound), memo=memo)
                return result, _relative(result.best_params, candidates, scale)

            if ranges:
                tables = []

                def run_round(candidates):  # the rounds are judged on the grid's own (relative) values
                    result, relative = run(candidates)
                    tables.append(result.table)
                    return CVResult(relative, result.best_score, result.table)

                result, searched, rounds = widened_search(run_round, grid, ranges, whole=whole,
                                                          widen_tolerance=widen_tolerance,
                                                          widen_limits=widen_limits, log=log)
                best = result.best_params
                record["rounds"] = rounds
                table = [{"round": i, **row} for i, rows in enumerate(tables, 1) for row in rows]
            else:
                result, best = run(grid)
                searched, table = {}, result.table
            edges = grid_edges(best, {**grid.grid, **searched, **({grid.split_param: grid.split_values}
                                                                   if grid.split_param else {})})
            gain = last_gain(record["rounds"])
            if widen_tolerance is not None and gain is not None and gain < widen_tolerance:
                edges = settled_edges(edges, ranges, gain, widen_tolerance)
            record.update(best_params=best, best_score=result.best_score, grid_edges=edges, search=table)
            log.info("best %s (cv auc %.4f)", best, result.best_score)
            for edge in edges:
                log.warning(edge)
        except (ValueError, MemoryError, FloatingPointError) as error:  # DivergenceError is a FloatingPointError
            status = "out_of_memory_budget" if isinstance(error, MemoryError) else "failed"
            record.update(status=status, reason=" ".join(f"{type(error).__name__}: {error}".split()))
            log.exception("search failed; its training jobs fail too, unless tuning.on_failure is 'configured'")
    record["time"] = time.perf_counter() - start
    record["job_cpu_s"] = process_cpu_s()
    write_json(smk.output[0], record)
