"""Cross-validation for the paper's protocol: folds over labeled rows, unlabeled rows always in training."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedKFold

from qs3orao.validation import UNLABELED, check_features, check_labels, ordinal_classes
from qs3orao.metrics import binary_auc

from .kernel_cache import reuse_kernels
from .registry import TuningGrid, make_method, tuning_grid

__all__ = ["CVResult", "split_aucs", "cross_validate_params"]


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
        ``cv_auc_split_j`` for every split (``pandas.DataFrame(table)`` makes it tidy).
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


def cross_validate_params(name, X, y, grid=None, *, n_folds=5, random_state=0, fixed_params=None, progress=None):
    """Staged cross-validated search of the paper's hyperparameters for method ``name``.

    Folds are stratified over the labeled rows; every unlabeled row stays in
    every training set and held-out rows are left out of training entirely.
    The score is the ordinal AUC (mean split-wise AUC) on the held-out rows.

    The exact methods' kernel work (M-SAMULT's kernel matrix, M-PNU-AUC's
    moments and priors) depends on a fold's rows and the kernel width only, so
    it is computed once per (fold, width) and reused across ``lam`` and the
    trade-offs (:func:`baselines.kernel_cache.reuse_kernels`, at most 1 GiB or
    the ``memory_budget`` in ``fixed_params``, whichever is smaller).

    Stages (cost in candidates, each costing ``n_folds`` fits):

    1. the product of ``grid.grid`` at ``split_default`` (49 for the paper's grid);
    2. the shared split weight over ``split_values`` at the best stage-1 pair (11, or 21 for ``pnu_mix``);
    3. per-split weights: if ``grid.separable`` (one model per split), split
       ``j``'s held-out AUC depends on weight ``j`` only, so the best value of
       each split is read from stage 2 and one candidate checks the combination;
       otherwise one coordinate-wise sweep over the splits, ``(k - 1) x
       (len(split_values) - 1)`` candidates, starting from the best shared value.

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
    progress : callable, optional
        Called with each new candidate's record (stage, parameters, ``cv_auc``) once it is scored.

    Returns
    -------
    CVResult

    Raises
    ------
    MemoryBudgetExceeded
        As soon as one fit would exceed its memory budget.
    """
    grid = tuning_grid(name) if grid is None else grid
    if not isinstance(grid, TuningGrid):
        raise TypeError(f"grid must be a TuningGrid, got {type(grid).__name__}")
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    classes = ordinal_classes(y)
    labeled = np.flatnonzero(y != UNLABELED)
    unlabeled = np.flatnonzero(y == UNLABELED)
    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=random_state).split(labeled, y[labeled]))
    fixed = dict(fixed_params or {})
    if "classes" in make_method(name).get_params():  # a fold may miss a level; its model still knows them all
        fixed["classes"] = classes
    table, cache = [], {}

    def evaluate(stage, params):
        key = tuple(sorted((k, tuple(np.atleast_1d(v).tolist())) for k, v in params.items()))
        if key in cache:
            return cache[key]
        per_fold = []
        for train, test in folds:
            rows = np.concatenate([labeled[train], unlabeled])
            model = make_method(name, **fixed, **params).fit(X[rows], y[rows])
            held = labeled[test]
            per_fold.append(split_aucs(y[held], model.decision_function(X[held]), classes))
        per_split = np.nanmean(per_fold, axis=0)
        record = {"stage": stage, **params, "cv_auc": float(np.mean(per_split))}
        record.update({f"cv_auc_split_{j}": float(a) for j, a in enumerate(per_split)})
        table.append(record)
        cache[key] = record
        if progress is not None:
            progress(record)
        return record

    budget = fixed.get("memory_budget")
    with reuse_kernels(int(min(2**30, budget)) if budget else 2**30):
        best_params, best_score = _staged_search(grid, classes, evaluate)
    return CVResult(best_params=best_params, best_score=best_score, table=table)


def _staged_search(grid, classes, evaluate):
    """Stages 1-3 of :func:`cross_validate_params`; ``evaluate(stage, params)`` scores one candidate.

    Returns the best parameters and their mean held-out AUC.
    """
    names = list(grid.grid)
    base = {} if grid.split_param is None else {grid.split_param: grid.split_default}
    best = max((evaluate("grid", {**dict(zip(names, values)), **base})
                for values in itertools.product(*grid.grid.values())), key=lambda r: r["cv_auc"])
    best_params = {p: best[p] for p in names}
    if grid.split_param is not None:
        shared = [evaluate("shared", {**best_params, grid.split_param: v}) for v in grid.split_values]
        best = max(shared, key=lambda r: r["cv_auc"])
        n_weights = classes.size - 1
        if grid.separable:
            weights = [float(max(shared, key=lambda r: r[f"cv_auc_split_{j}"])[grid.split_param])
                       for j in range(n_weights)]
            candidate = evaluate("per-split", {**best_params, grid.split_param: weights})
            best = max([best, candidate], key=lambda r: r["cv_auc"])
        else:
            weights = [float(best[grid.split_param])] * n_weights
            for j in range(n_weights):
                for v in grid.split_values:
                    trial = list(weights)
                    trial[j] = float(v)
                    record = evaluate("per-split", {**best_params, grid.split_param: trial})
                    if record["cv_auc"] > best["cv_auc"]:
                        best, weights = record, trial
        best_params[grid.split_param] = best[grid.split_param]
    return best_params, best["cv_auc"]
