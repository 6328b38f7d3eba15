"""Time to accuracy on real data: AUC against fit time on a dataset's whole unlabeled pool.

For each configured mirror dataset, trial ``trial`` of the reproduction is
rebuilt (same loader, same split, same kernel-width scale: the scale is
recomputed and checked against the one the tuned run recorded) and every
method is fitted at the values the reproduction tuned for it (read from its
tidy ``results.csv``, e.g. ``figures/reproduction/results.csv``), across its
size knob:

* QS3ORAO with the paper's step (``qs3orao``) and with ``step_offset="auto"``
  (``qs3orao-auto``; the reproduction tuned the paper schedule only, so both use
  its tuned ``gamma``, ``lam`` and trade-offs), over ``n_iter``;
* RFF-AUC and Nystroem-AUC over their map size (the registry's ``size_param``);
* the exact M-SAMULT and M-PNU-AUC, which do not fit the whole pool, fitted on
  the labeled rows and nested random subsets of the unlabeled pool
  (``exact_unlabeled``) while they fit the memory budget, then scored on the
  whole pool.

Every fit's AUC is the ordinal AUC on all unlabeled rows of the pool, its time
the fit's wall time (median of ``repeats``); its CPU time (all threads) is
reported beside it, a steadier measure of the work on a shared machine.  The best AUC is the largest any
method reaches; a method's time to accuracy is the shortest fit time among its
points within ``auc_tolerance`` of it (nan when none is).
"""

from __future__ import annotations

import csv
import json
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from baselines import MemoryBudgetExceeded
from baselines.converged import ConvergedQS3ORAO
from baselines.registry import get_method, make_method
from qs3study.datasets import get_spec, load_ordinal, semisupervised_split
from qs3orao.divergence import DivergenceError
from qs3orao.trig import resolve_trig_backend

from qs3study.design import trial_seed
from qs3study.files import save_figure
from qs3study.kernel_width import gamma_scale
from qs3study.stages.training import unlabeled_auc

__all__ = ["LABELS", "tuned_settings", "pool_problem", "run_pool", "time_to_accuracy", "summary_rows", "plot_pareto",
           "pool_time_to_accuracy_rows"]

#: method label -> (registered method, label in the reproduction's results, legend name)
LABELS = {
    "qs3orao": ("qs3orao", "qs3orao", "QS3ORAO, paper's step theta / t (n_iter)"),
    "qs3orao-auto": ("qs3orao", "qs3orao", "QS3ORAO, step offset auto (n_iter)"),
    "rff-auc": ("rff-auc", "rff-auc", "RFF-AUC (D)"),
    "nystrom-auc": ("nystrom-auc", "nystrom-auc", "Nystroem-AUC (landmarks)"),
    "m-samult": ("m-samult", "m-samult", "M-SAMULT, exact (unlabeled rows fitted)"),
    "m-pnu-auc": ("m-pnu-auc", "m-pnu-auc", "M-PNU-AUC, exact (unlabeled rows fitted)"),
}
_EXACT = ("m-samult", "m-pnu-auc")


def tuned_settings(results_csv, dataset, method, trial):
    """The tuned parameters of ``method`` on ``dataset`` in a reproduction's tidy results, and its gamma scale.

    Returns
    -------
    params : dict
        As recorded (``gamma`` relative to the scale when the run read the kernel width on the data's scale).
    scale : float
        The recorded ``gamma_scale`` of the trial.

    Raises
    ------
    ValueError
        If the file has no row of that dataset, method and trial, or its rows disagree on the parameters.
    """
    with open(results_csv, newline="") as handle:
        rows = [r for r in csv.DictReader(handle)  # the single tuning's rows (tuning draw 0)
                if r["dataset"] == dataset and r["method"] == method and int(r["trial"]) == trial
                and int(r.get("tuning_draw") or 0) == 0]
    if not rows:
        raise ValueError(f"{results_csv} has no row of method {method!r} on {dataset!r}, trial {trial}")
    settings = {(r["params"], r["gamma_scale"]) for r in rows}
    if len(settings) != 1:
        raise ValueError(f"{results_csv}: {method!r} on {dataset!r}, trial {trial}, has several settings {settings}")
    params, scale = settings.pop()
    return json.loads(params), float(scale)


class _Pool:
    """Trial ``trial`` of ``dataset`` with its whole unlabeled pool, as the reproduction built it."""

    def __init__(self, dataset, *, trial, base_seed, n_labeled, kernel_width, cache_dir, mirror, loader_seed):
        self.dataset = dataset
        data = load_ordinal(get_spec(dataset), cache_dir=cache_dir, mirror=mirror, random_state=loader_seed)
        self.y_all = data.y
        self.X_all = data.X
        self.n_labeled = n_labeled
        self.seed = trial_seed(dataset, trial, base_seed)
        split = self.split(None)
        self.X, self.y, self.labeled = self.X_all[split.train_idx], split.y_train, split.labeled_mask
        self.unlabeled_true = split.y_true[~self.labeled]
        self.n_classes = int(np.unique(self.y_all).size)
        self.scale = gamma_scale(kernel_width, self.X[self.labeled], seed=self.seed)

    def split(self, n_unlabeled):
        return semisupervised_split(self.y_all, n_labeled=self.n_labeled, seed=self.seed, n_unlabeled=n_unlabeled)

    def auc(self, scores):
        return unlabeled_auc(self.unlabeled_true, scores, self.n_classes)[0]


def pool_problem(dataset, *, trial=0, base_seed=0, n_labeled=500, kernel_width="median", cache_dir=None, mirror=None,
                 loader_seed=0):
    """The reproduction's trial of ``dataset`` with the whole unlabeled pool (see :class:`_Pool`)."""
    return _Pool(dataset, trial=trial, base_seed=base_seed, n_labeled=n_labeled, kernel_width=kernel_width,
                 cache_dir=cache_dir, mirror=mirror, loader_seed=loader_seed)


def _timed_fit(make, X, y, repeats):
    """Median wall time and median CPU time (all threads of the process) of ``repeats`` fits, and the last model."""
    times, cpu, model = [], [], None
    for _ in range(repeats):
        model = make()
        start, start_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # short paper-schedule fits end far off f*
            model.fit(X, y)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return float(np.median(times)), float(np.median(cpu)), model


def _settings(pool, params, recorded_scale, *, results_csv, method):
    if not np.isclose(pool.scale, recorded_scale, rtol=1e-9, atol=0):
        raise ValueError(f"{pool.dataset}: the kernel-width scale {pool.scale!r} differs from the {recorded_scale!r} "
                         f"recorded in {results_csv} for {method!r}: the data or the split is not the tuned run's")
    return {**params, "gamma": float(params["gamma"]) * pool.scale} if "gamma" in params else dict(params)


def run_pool(pool, *, results_csv, trial, n_iters, feature_sizes, exact_unlabeled, memory_budget_mb, repeats=1,
             n_jobs=-1, methods=tuple(LABELS)):
    """Every method's fits across its size knob on ``pool``.

    Returns
    -------
    list of dict
        ``dataset, method, knob, value, time, auc, params`` per point tried (``time``
        and ``auc`` nan with a ``note`` when the fit was over the memory budget or diverged).
        QS3ORAO's tuned values enter without the converged QS3ORAO's stopping criterion
        (:attr:`baselines.converged.ConvergedQS3ORAO.CRITERION_PARAMS`): ``n_iter`` is its knob.
    """
    budget = int(memory_budget_mb * 2**20)
    resolve_trig_backend("auto")  # the compiled loops load once per process, before any fit is timed
    points = []
    for label in methods:
        name, tuned_as, _ = LABELS[label]
        params, scale = tuned_settings(results_csv, pool.dataset, tuned_as, trial)
        params = _settings(pool, params, scale, results_csv=results_csv, method=tuned_as)
        if name == "qs3orao":
            params = {key: value for key, value in params.items() if key not in ConvergedQS3ORAO.CRITERION_PARAMS}
            params.update(step_offset="auto" if label == "qs3orao-auto" else 0, n_jobs=n_jobs)
            knob, values = "n_iter", n_iters
        elif name in _EXACT:
            knob, values = "n_unlabeled_fitted", exact_unlabeled
            params["memory_budget"] = budget
        else:
            knob, values = get_method(name).size_param, feature_sizes[label]
            params["memory_budget"] = budget
        if "random_state" in make_method(name).get_params():
            params["random_state"] = pool.seed
        for value in values:
            point = dict(dataset=pool.dataset, pool=int((~pool.labeled).sum()), method=label, knob=knob, value=value,
                         params=params, note="")
            try:
                if name in _EXACT:
                    split = pool.split(value)
                    X_fit, y_fit = pool.X_all[split.train_idx], split.y_train
                    fit_time, cpu_time, model = _timed_fit(lambda: make_method(name, **params),
                                                 X_fit, y_fit, repeats)
                    scores = model.decision_function(pool.X[~pool.labeled])
                else:
                    fit_time, cpu_time, model = _timed_fit(lambda: make_method(name, **{**params, knob: value}),
                                                 pool.X, pool.y, repeats)
                    scores = model.train_scores_[~pool.labeled]
                point.update(time=fit_time, cpu_time=cpu_time, auc=pool.auc(scores))
            except MemoryBudgetExceeded as error:
                point.update(time=np.nan, cpu_time=np.nan, auc=np.nan, note=f"over the memory budget ({error})")
            except DivergenceError as error:
                point.update(time=np.nan, cpu_time=np.nan, auc=np.nan, note=f"diverged ({error})")
            print(f"pool time to accuracy: {pool.dataset} {label} {knob}={value}: {point['time']:.2f} s "
                  f"(CPU {point['cpu_time']:.2f} s), AUC {point['auc']:.4f} {point['note']}", file=sys.stderr,
                  flush=True)
            points.append(point)
            if point["note"]:
                break  # larger values need more memory still, or run the same diverging steps further
    return points


def time_to_accuracy(points, auc_tolerance, clock="time"):
    """Per method, the shortest fit time within ``auc_tolerance`` of the best AUC of ``points``.

    ``clock`` is the time compared: ``"time"`` (wall) or ``"cpu_time"``.

    Returns
    -------
    best : dict
        The point with the largest AUC.
    reached : dict
        Method -> its fastest point at or above ``best AUC - auc_tolerance``, or None.
    """
    timed = [p for p in points if np.isfinite(p["auc"])]
    best = max(timed, key=lambda p: p["auc"])
    target = best["auc"] - auc_tolerance
    reached = {}
    for p in points:
        reached.setdefault(p["method"], None)
        if np.isfinite(p["auc"]) and p["auc"] >= target:
            current = reached[p["method"]]
            if current is None or p[clock] < current[clock]:
                reached[p["method"]] = p
    return best, reached


def summary_rows(points, *, auc_tolerance, repeats):
    """Per dataset: ``best_auc[<dataset>]``, ``time_to_accuracy[<dataset>,<method>]`` (wall) and
    ``cpu_time_to_accuracy[<dataset>,<method>]`` (CPU seconds of all threads, steadier on a shared machine)."""
    rows = []
    for dataset in dict.fromkeys(p["dataset"] for p in points):
        mine = [p for p in points if p["dataset"] == dataset]
        best, reached = time_to_accuracy(mine, auc_tolerance)
        rows.append((f"best_auc[{dataset}]", best["auc"],
                     f"reached by {best['method']} at {best['knob']}={best['value']} in {best['time']:.2f} s; "
                     f"ordinal AUC on all {best['pool']} unlabeled rows of the pool"))
        for method, point in reached.items():
            trace = "; ".join(f"{p['knob']}={p['value']}: " + (f"{p['time']:.2f} s (CPU {p['cpu_time']:.2f} s), "
                                                               f"AUC {p['auc']:.4f}"
                                                               if not p["note"] else p["note"])
                              for p in mine if p["method"] == method)
            how = (f"fastest within {auc_tolerance} of the best AUC {best['auc']:.4f}: {point['knob']}="
                   f"{point['value']}, AUC {point['auc']:.4f}, CPU {point['cpu_time']:.2f} s" if point else
                   f"never within {auc_tolerance} of the best AUC {best['auc']:.4f} on its grid")
            rows.append((f"time_to_accuracy[{dataset},{method}]", point["time"] if point else np.nan,
                         f"{how}; fit wall time (CPU time of all the process's threads beside it), median of "
                         f"{repeats}; tried {trace}"))
        _, by_cpu = time_to_accuracy(mine, auc_tolerance, clock="cpu_time")
        for method, point in by_cpu.items():
            rows.append((f"cpu_time_to_accuracy[{dataset},{method}]", point["cpu_time"] if point else np.nan,
                         f"CPU seconds (all threads) of the fit with the least CPU time within {auc_tolerance} of "
                         f"the best AUC {best['auc']:.4f}: " + (f"{point['knob']}={point['value']}, AUC "
                                                                f"{point['auc']:.4f}" if point else "none")))
    return rows


def plot_pareto(points, paths, auc_tolerance):
    """AUC against fit time, one panel per dataset, one line per method along its knob; saved under each of ``paths``.

    Points more than 0.15 below the best AUC are left below the drawn range (they are in the rows). Each
    method keeps one colour in every panel, also where it has no finite point (a fit that diverged
    everywhere), and the legend names every method drawn in any panel.

    Returns
    -------
    dict
        Dataset -> {method label: colour of its drawn line}, for the methods drawn in that panel.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(p["dataset"] for p in points))
    colours = {method: f"C{i}" for i, method in enumerate(LABELS)}
    drawn, legend = {}, {}
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 3.9), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        mine = [p for p in points if p["dataset"] == dataset and np.isfinite(p["auc"])]
        best, _ = time_to_accuracy(mine, auc_tolerance)
        drawn[dataset] = {}
        for method in dict.fromkeys(p["method"] for p in mine):
            line = [(p["time"], p["auc"]) for p in sorted(mine, key=lambda p: p["value"]) if p["method"] == method]
            legend[method], = ax.plot(*zip(*line), marker="o", markersize=3, label=LABELS[method][2],
                                      color=colours[method], linestyle="--" if method in _EXACT else "-")
            drawn[dataset][method] = legend[method].get_color()
        frontier, top = [], -np.inf
        for p in sorted(mine, key=lambda p: p["time"]):
            if p["auc"] > top:
                frontier.append((p["time"], p["auc"]))
                top = p["auc"]
        legend["front"], = ax.step(*zip(*frontier), where="post", color="black", linewidth=0.8, alpha=0.5,
                                   label="Pareto front")
        legend["best"] = ax.axhline(best["auc"] - auc_tolerance, color="grey", linestyle=":", linewidth=0.8,
                                    label=f"best AUC - {auc_tolerance}")
        ax.set(xscale="log", xlabel="fit wall time (s)", ylabel="ordinal AUC, unlabeled pool",
               title=f"{dataset}: {mine[0]['pool']} unlabeled rows")
        ax.set_ylim(max(min(p["auc"] for p in mine) - 0.005, best["auc"] - 0.15), best["auc"] + 0.005)
    handles = [legend[key] for key in (*LABELS, "front", "best") if key in legend]
    axes[0][-1].legend(handles=handles, fontsize=6, loc="center left", bbox_to_anchor=(1.02, 0.5))
    for path in paths:
        save_figure(fig, path, bbox_inches="tight")
    plt.close(fig)
    return drawn


def pool_time_to_accuracy_rows(*, datasets, results_csv, figure_paths=(), trial=0, base_seed=0, n_labeled=500,
                               kernel_width="median", cache_dir=None, mirror=None, loader_seed=0, n_iters,
                               feature_sizes, exact_unlabeled, auc_tolerance, memory_budget_mb, repeats=1,
                               n_jobs=-1):
    """Run every dataset of ``datasets``, draw the Pareto plot, return the summary rows."""
    points = []
    for dataset in datasets:
        pool = pool_problem(dataset, trial=trial, base_seed=base_seed, n_labeled=n_labeled,
                            kernel_width=kernel_width, cache_dir=cache_dir, mirror=mirror, loader_seed=loader_seed)
        points += run_pool(pool, results_csv=results_csv, trial=trial, n_iters=n_iters, feature_sizes=feature_sizes,
                           exact_unlabeled=exact_unlabeled, memory_budget_mb=memory_budget_mb, repeats=repeats,
                           n_jobs=n_jobs)
    plot_pareto(points, figure_paths, auc_tolerance)
    return summary_rows(points, auc_tolerance=auc_tolerance, repeats=repeats)
