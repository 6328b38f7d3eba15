"""Cross-validation for the paper's protocol: folds over labeled rows, unlabeled rows always in training."""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

from qs3orao import DivergenceError
from qs3orao.validation import UNLABELED, check_features, check_labels, check_memory_budget, ordinal_classes, plain
from qs3orao.metrics import binary_auc

from .kernel_cache import reuse_kernels
from .registry import TuningGrid, make_method, tuning_grid

__all__ = ["CVResult", "Halving", "ScoreMemo", "split_aucs", "cross_validate_params"]


@dataclass(frozen=True)
class CVResult:
    """Outcome of :func:`cross_validate_params`.

    Attributes
    ----------
    best_params : dict
    best_score : float
        Mean held-out ordinal AUC of ``best_params``.
    table : list of dict
        One record per candidate: ``stage``, the parameters, ``cv_auc`` and
        ``cv_auc_split_j`` for every split (``pandas.DataFrame(table)`` makes it tidy);
        under :class:`Halving` also ``n_folds``, the folds a candidate was scored on
        (fewer than all for one stopped early); with a :class:`ScoreMemo` also
        ``fitted_folds``, the folds it was fitted on in this search (0: every
        score reused from an earlier search sharing the memo).
    """

    best_params: dict
    best_score: float
    table: list


def split_aucs(y, scores, classes):
    """Binary AUC of every split ``j`` (label ``> classes[j]``); NaN where a side is empty.

    ``scores`` is one column per split or one score for all.
    """
    aucs = np.full(classes.size - 1, np.nan)
    for j, level in enumerate(classes[:-1]):
        positive = y > level
        if positive.any() and not positive.all():
            aucs[j] = binary_auc(positive, scores if scores.ndim == 1 else scores[:, j])
    return aucs


@dataclass(frozen=True)
class Halving:
    """Successive halving of a stage's candidates over the folds: a declared option, off by default.

    Every candidate of a stage is scored on ``min_folds`` folds; the best
    ``1 / eta`` (rounded up) go on to ``eta`` times as many folds, and so on
    until the survivors are scored on all folds.  Only candidates scored on all
    folds can be chosen.  Stopped candidates stay in the table with the mean
    AUC of their folds and their ``n_folds``.  This changes the paper's protocol
    (a candidate stopped early might have won on all folds), so it is used only
    when a configuration asks for it.

    Attributes
    ----------
    eta : int, default=3
        Reduction factor, at least 2.
    min_folds : int, default=1
        Folds of the first rung, at least 1.
    """

    eta: int = 3
    min_folds: int = 1

    def __post_init__(self):
        for name, least in (("eta", 2), ("min_folds", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"Halving.{name} must be an integer >= {least}, got {plain(value)}")

    def rungs(self, n_candidates, n_folds):
        """``(folds, survivors)`` per rung: score on the first ``folds`` folds, keep the best ``survivors``."""
        plan, folds, alive = [], min(self.min_folds, n_folds), n_candidates
        while folds < n_folds and alive > 1:
            alive = max(1, math.ceil(alive / self.eta))
            plan.append((folds, alive))
            folds = min(n_folds, folds * self.eta)
        return plan + [(n_folds, alive)]


class ScoreMemo:
    """Held-out split AUCs of every (candidate, fold) fitted so far, shared by searches of one problem.

    Give one instance as ``memo`` to the :func:`cross_validate_params` calls of
    one tuning job (the rounds of :func:`qs3study.stages.tuning.widened_search`, whose
    windows overlap): a candidate already scored on a fold by an earlier call
    reuses that fold's AUCs instead of being fitted again.  A candidate is its
    parameter dict as fitted, ``fixed_params`` and the fixed ``classes``
    included.  The memo is bound to the first call's method, rows, labels and
    folds (``n_folds``, ``random_state``, ``groups``) and refuses any other.

    Scores are kept per fold, so a candidate that :class:`Halving` stopped
    early in an earlier call reuses the folds it was scored on and is fitted on
    the others only: a fold's AUCs depend on the candidate and the fold's rows
    alone, never on the rung or the other candidates (one search already
    reuses them this way between its stages).  Reused scores are the stored
    floats themselves, so every choice sees them exactly as if fitted again,
    up to the rounding by which a ``fit_path`` over other settings may differ
    from the fit that stored them.
    """

    def __init__(self):
        self._problem = None
        self._scores = {}

    def _bind(self, name, X, y, n_folds, random_state, groups):
        problem = (name, n_folds, random_state, X.shape, _digest(X), _digest(y),
                   None if groups is None else _digest(groups))
        if self._problem is None:
            self._problem = problem
        elif problem != self._problem:
            raise ValueError("memo holds the scores of another search problem (method, rows, labels, n_folds or "
                             f"random_state differ): it was filled for {self._problem[:4]}, not {problem[:4]}")

    def scores(self, key):
        """Fold -> split AUCs of the candidate with parameter key ``key`` (a mutable dict, empty if new)."""
        return self._scores.setdefault(key, {})

    def __len__(self):
        """Number of (candidate, fold) pairs scored."""
        return sum(len(folds) for folds in self._scores.values())


def _digest(array):
    return hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16).hexdigest()


def cross_validate_params(name, X, y, grid=None, *, n_folds=5, random_state=0, fixed_params=None, use_path=True,
                          halving=None, progress=None, memo=None, groups=None):
    """Staged cross-validated search of the paper's hyperparameters for method ``name``.

    Folds are stratified over the labeled rows (and keep every group in one
    fold when ``groups`` are given); every unlabeled row stays in every
    training set and held-out rows are left out of training entirely.
    The score is the ordinal AUC (mean split-wise AUC) on the held-out rows.

    The exact methods' kernel work (M-SAMULT's kernel matrix, M-PNU-AUC's
    moments and priors) depends on a fold's rows and the kernel width only, so
    it is computed once per (fold, width) and reused across ``lam`` and the
    trade-offs (:func:`baselines.kernel_cache.reuse_kernels`, at most 1 GiB or
    the ``memory_budget`` in ``fixed_params``, whichever is smaller).

    A stage's candidates are scored together.  When the method's estimator
    has ``fit_path`` and ``PATH_PARAMS`` (QS3ORAO: ``lam`` and the trade-offs;
    M-SAMULT, M-PNU-AUC, f*, RFF-AUC, Nystroem-AUC: ``lam``), the candidates
    that share every other parameter are fitted on a fold by one ``fit_path``
    call, which gives what separate fits give to rounding, when they are at
    least the estimator's ``PATH_MIN_SETTINGS`` (QS3ORAO: 2; M-PNU-AUC: 12,
    M-SAMULT: 20, f*: 27, the fixed feature maps: 4, where their
    eigendecomposition pays off).

    Stages (cost in candidates, each costing ``n_folds`` fits):

    1. the product of ``grid.grid`` at ``split_default`` (49 for the paper's grid);
    2. the shared split weight over ``split_values`` at the best stage-1 pair (11, or 21 for ``pnu_mix``);
    3. per-split weights (skipped when ``grid.per_split`` is False): if
       ``grid.separable`` (one model per split), split ``j``'s held-out AUC
       depends on weight ``j`` only, so the best value of each split is read
       from stage 2 and one candidate checks the combination; otherwise one
       coordinate-wise sweep over the splits, ``(k - 1) x (len(split_values) - 1)``
       candidates, starting from the best shared value.

    Parameters
    ----------
    name : str
        A key of :data:`baselines.registry.METHODS`.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Ordinal labels, ``-1`` for unlabeled rows.
    grid : TuningGrid, optional
        Default :func:`baselines.registry.tuning_grid` ``(name)``.
    n_folds : int, default=5
        Cross-validation folds.
    random_state : int, default=0
        Seed of the fold assignment.
    fixed_params : dict, optional
        Parameters passed to every fit (e.g. ``n_iter``, ``memory_budget``).
    use_path : bool, default=True
        Fit candidates that differ only in path parameters in one ``fit_path``
        call; False fits every candidate on its own (same choices, to rounding).
    halving : Halving, optional
        Stop hopeless candidates early in stage 1, in stage 2 of a
        non-separable method and in its per-split sweep (see :class:`Halving`);
        default None, the paper's protocol (every candidate on every fold).
    progress : callable, optional
        Called with each new candidate's record (stage, parameters, ``cv_auc``) once it is scored,
        and, as a stage's candidates are scored together at its end, after every fold fitted for
        them with ``{"stage", "fold", "n_folds", "n_candidates"}`` (no ``cv_auc``).
    memo : ScoreMemo, optional
        Scores of earlier searches of the same problem, reused instead of
        fitting again, and filled with this search's; the table then has
        ``fitted_folds``.  Default None: every candidate fitted, the table as
        without a memo.
    groups : array-like of shape (n_samples,), optional
        A group per row (a subject): the folds are scikit-learn's
        ``StratifiedGroupKFold`` over the labeled rows' groups, so no group is
        both fitted and held out. Default None: ``StratifiedKFold`` over the rows.

    Returns
    -------
    CVResult

    Raises
    ------
    MemoryBudgetExceeded
        As soon as one fit would exceed its memory budget.
    qs3orao.DivergenceError
        When a candidate's fit diverges (as its own fit would raise it).
    ValueError
        If ``memo`` holds scores of another method, rows, labels or folds; if
        ``groups`` has not one value per row, or the labeled rows hold fewer groups than ``n_folds``.
    TypeError
        If ``memo`` is not a :class:`ScoreMemo`, or a value of ``fixed_params``
        cannot key a candidate (not a scalar or an array).
    """
    grid = tuning_grid(name) if grid is None else grid
    if not isinstance(grid, TuningGrid):
        raise TypeError(f"grid must be a TuningGrid, got {type(grid).__name__}")
    if halving is not None and not isinstance(halving, Halving):
        raise TypeError(f"halving must be a Halving or None, got {type(halving).__name__}")
    if memo is not None and not isinstance(memo, ScoreMemo):
        raise TypeError(f"memo must be a ScoreMemo or None, got {type(memo).__name__}")
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    classes = ordinal_classes(y)
    labeled = np.flatnonzero(y != UNLABELED)
    unlabeled = np.flatnonzero(y == UNLABELED)
    if groups is None:
        folds = StratifiedKFold(n_folds, shuffle=True, random_state=random_state).split(labeled, y[labeled])
    else:
        groups = np.asarray(groups)
        if groups.shape != y.shape:
            raise ValueError(f"groups must have one value per row ({y.size}), got shape {groups.shape}")
        n_groups = np.unique(groups[labeled]).size
        if n_groups < n_folds:
            raise ValueError(f"the labeled rows hold {n_groups} groups, fewer than n_folds={n_folds}: "
                             "grouped folds need a group per fold at least")
        folds = StratifiedGroupKFold(n_folds, shuffle=True, random_state=random_state).split(
            labeled, y[labeled], groups[labeled])
    fixed = dict(fixed_params or {})
    if "classes" in make_method(name).get_params():  # a fold may miss a level; its model still knows them all
        fixed["classes"] = classes
    folds = [(np.concatenate([labeled[train], unlabeled]), labeled[test]) for train, test in folds]
    record_fits = memo is not None
    if record_fits:  # a memo of this search alone needs no check that it is this search's
        memo._bind(name, X, y, n_folds, random_state, groups)
    else:
        memo = ScoreMemo()
    search = _Search(name, X, y, folds, classes, fixed, use_path, halving, progress, memo, record_fits)
    budget = check_memory_budget(fixed.get("memory_budget"), "memory_budget", optional=True)
    with reuse_kernels(int(min(2**30, budget)) if budget else 2**30):
        best_params, best_score = _staged_search(grid, classes, search.evaluate_many)
    return CVResult(best_params=best_params, best_score=best_score, table=search.table)


def _key(params):
    return tuple(sorted((k, tuple(np.atleast_1d(v).tolist())) for k, v in params.items()))


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


class _Search:
    """Candidates scored fold by fold, each (candidate, fold) fitted once (scores in ``memo``), recorded in ``table``.

    ``record_fits`` adds ``fitted_folds`` to the table's records: the folds
    fitted for the candidate since its previous record in this search.
    """

    def __init__(self, name, X, y, folds, classes, fixed, use_path, halving, progress, memo, record_fits):
        self.name, self.X, self.y, self.folds, self.classes, self.fixed = name, X, y, folds, classes, fixed
        self.progress, self.memo, self.record_fits = progress, memo, record_fits
        estimator = make_method(name)
        self.path_params = set(getattr(estimator, "PATH_PARAMS", ())) if use_path and hasattr(
            estimator, "fit_path") else set()
        self.path_min = getattr(estimator, "PATH_MIN_SETTINGS", 2)
        self.halving = halving
        self.fixed_key = _key(fixed)
        try:
            hash(self.fixed_key)
        except TypeError:
            raise TypeError(f"fixed_params values must be scalars or arrays (they key the scored candidates); "
                            f"{sorted(k for k, v in _key(fixed) if not _hashable(v))} are not") from None
        self.table, self.records, self.fits = [], {}, Counter()

    def fold_aucs(self, params):
        """Fold -> split AUCs of candidate ``params`` (as fitted: with the fixed parameters)."""
        return self.memo.scores((self.fixed_key, _key(params)))

    def evaluate_many(self, stage, candidates, prune=True):
        """Score ``candidates`` (dicts of parameters) on every fold; return their records in order.

        Under :class:`Halving` and ``prune``, candidates stopped early get None
        (their partial records go to the table).
        """
        fresh = list({_key(c): c for c in candidates if _key(c) not in self.records}.values())
        rungs = self.halving.rungs(len(fresh), len(self.folds)) if self.halving and prune else [
            (len(self.folds), len(fresh))]
        alive = fresh
        for n_folds, survivors in rungs:
            for fold in range(n_folds):
                pending = [c for c in alive if fold not in self.fold_aucs(c)]
                self._fit_fold(fold, pending)
                if pending and self.progress is not None:
                    self.progress({"stage": stage, "fold": fold + 1, "n_folds": len(self.folds),
                                   "n_candidates": len(pending)})
            scored = [self._record(stage, c, n_folds) for c in alive]
            order = sorted(range(len(alive)), key=lambda i: -scored[i]["cv_auc"])  # stable: ties keep their order
            kept = sorted(order[:survivors])
            if n_folds < len(self.folds):
                for i in range(len(alive)):
                    if i not in kept:
                        self._add_to_table(alive[i], scored[i])
            alive = [alive[i] for i in kept]
        for candidate in alive:
            record = self._record(stage, candidate, len(self.folds))
            self.records[_key(candidate)] = record
            self._add_to_table(candidate, record)
            if self.progress is not None:
                self.progress(record)
        return [self.records.get(_key(c)) for c in candidates]

    def _record(self, stage, params, n_folds):
        fold_aucs = self.fold_aucs(params)
        per_split = np.nanmean([fold_aucs[f] for f in range(n_folds)], axis=0)
        record = {"stage": stage, **params, "cv_auc": float(np.mean(per_split))}
        record.update({f"cv_auc_split_{j}": float(a) for j, a in enumerate(per_split)})
        if self.halving is not None:
            record["n_folds"] = n_folds
        return record

    def _add_to_table(self, params, record):
        fitted = self.fits.pop(_key(params), 0)
        if self.record_fits:
            record["fitted_folds"] = fitted
        self.table.append(record)

    def _fit_fold(self, fold, candidates):
        """Fit ``candidates`` on fold ``fold``'s training rows and store their held-out split AUCs."""
        rows, held = self.folds[fold]
        groups = {}
        for c in candidates:
            shared = {k: v for k, v in c.items() if k not in self.path_params}
            groups.setdefault(_key(shared), (shared, []))[1].append(c)
        for shared, members in groups.values():
            if len(members) < max(2, self.path_min):
                models = [make_method(self.name, **self.fixed, **c).fit(self.X[rows], self.y[rows]) for c in members]
            else:
                models = make_method(self.name, **self.fixed, **shared).fit_path(
                    self.X[rows], self.y[rows], [{k: v for k, v in c.items() if k in self.path_params}
                                                 for c in members])
            for c, model in zip(members, models):
                if isinstance(model, DivergenceError):
                    raise model
                self.fold_aucs(c)[fold] = split_aucs(self.y[held], model.decision_function(self.X[held]),
                                                     self.classes)
                self.fits[_key(c)] += 1


def _best(records):
    """The first record with the highest ``cv_auc`` among those scored on all folds."""
    return max((r for r in records if r is not None), key=lambda r: r["cv_auc"])


def _staged_search(grid, classes, evaluate_many):
    """Stages 1-3 of :func:`cross_validate_params`; ``evaluate_many(stage, candidates)`` scores a stage's candidates.

    Returns the best parameters and their mean held-out AUC.
    """
    names = list(grid.grid)
    base = {} if grid.split_param is None else {grid.split_param: grid.split_default}
    best = _best(evaluate_many("grid", [{**dict(zip(names, values)), **base}
                                        for values in itertools.product(*grid.grid.values())]))
    best_params = {p: best[p] for p in names}
    if grid.split_param is not None:
        # A separable method reads each split's best weight off this stage's table: every candidate needs all folds.
        shared = evaluate_many("shared", [{**best_params, grid.split_param: v} for v in grid.split_values],
                               prune=not grid.separable)
        best = _best(shared)
        n_weights = classes.size - 1
        if grid.per_split and grid.separable:
            weights = [float(max(shared, key=lambda r: r[f"cv_auc_split_{j}"])[grid.split_param])
                       for j in range(n_weights)]
            candidate = evaluate_many("per-split", [{**best_params, grid.split_param: weights}])[0]
            best = max([best, candidate], key=lambda r: r["cv_auc"])
        elif grid.per_split:
            weights = [float(best[grid.split_param])] * n_weights
            for j in range(n_weights):
                trials = []
                for v in grid.split_values:
                    trial = list(weights)
                    trial[j] = float(v)
                    trials.append(trial)
                records = evaluate_many("per-split", [{**best_params, grid.split_param: t} for t in trials])
                for trial, record in zip(trials, records):
                    if record is not None and record["cv_auc"] > best["cv_auc"]:
                        best, weights = record, trial
        best_params[grid.split_param] = best[grid.split_param]
    return best_params, best["cv_auc"]
