"""Time to accuracy: the wall time each method needs to come close to the exact ``f*``.

On generated problems with growing numbers of unlabeled rows, the reference is
the exact minimiser ``f*`` of the QS3ORAO objective
(:func:`qs3orao.exact.exact_solution`), solved while its ``n x n`` matrices fit
the memory budget; the sweep stops at the first size where they do not (no
approximate reference is substituted).  A method is *accurate* when both

* its ordinal AUC on the unlabeled rows (against their true classes) is within
  ``auc_tolerance`` of ``f*``'s, and
* its relative distance to ``f*`` on the training rows,
  ``||F - F*|| / ||F*||``, is within ``distance_tolerance``.

The second criterion stands in for a relative objective gap, which is not
defined for every method: QS3ORAO's and RFF-AUC's functions are sums of random
features, outside the RKHS whose norm the objective takes.

* QS3ORAO, with the paper's schedule (``qs3orao``) and with
  ``step_offset="auto"`` (``qs3orao-auto``): ``n_iter`` doubles until accurate.
* RFF-AUC and Nystroem-AUC: the smallest ``D`` on a doubling grid that is accurate.
* M-PNU-AUC and M-SAMULT solve their own objectives exactly: their time is
  their fit time, accurate or not (their AUC gap is reported beside it).
* ``exact-f*``: the exact solver of the same objective itself.

The setting that reaches the tolerance is found once; its fit is then timed
``repeats`` times (the search's fit is one of them) and the median is reported.
Every time is a fit's wall time, all methods measured in the same process.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from baselines import MPNUAUC, MSAMULT, MemoryBudgetExceeded
from baselines.registry import get_method, make_method
from qs3orao import QS3ORAO, DivergenceError, exact_solution, ordinal_auc
from qs3study.claims.crossover import log_log_crossing
from qs3study.datasets.generated import make_latent_regression
from qs3study.files import save_figure

__all__ = ["QS3ORAO_SCHEDULES", "make_problem", "exact_memory", "run_sweep", "summary_rows", "plot_time_to_accuracy",
           "time_to_accuracy_rows"]

#: The two QS3ORAO methods: label -> ``step_offset``.
QS3ORAO_SCHEDULES = {"qs3orao": 0, "qs3orao-auto": "auto"}
_FEATURE_METHODS = ("rff-auc", "nystrom-auc")
_EXACT_BASELINES = {"m-pnu-auc": MPNUAUC, "m-samult": MSAMULT}
_REFERENCE = "exact-f*"
#: Legend names: which schedule, and how each method's accuracy is reached.
LABELS = {
    _REFERENCE: "exact f* (the reference's own solve)",
    "qs3orao": "QS3ORAO, paper's step theta / t",
    "qs3orao-auto": "QS3ORAO (step offset auto)",
    "rff-auc": "RFF-AUC, smallest D",
    "nystrom-auc": "Nystroem-AUC, smallest D",
    "m-pnu-auc": "M-PNU-AUC (exact, own objective)",
    "m-samult": "M-SAMULT (exact, own objective)",
}


def make_problem(n_labeled, n_unlabeled, n_features, n_classes, seed=0):
    """A generated latent function cut into ``n_classes`` equal-frequency classes; rows after ``n_labeled`` unlabeled.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Training labels, ``-1`` for unlabeled rows.
    y_true : ndarray of shape (n,)
    """
    X, latent = make_latent_regression(n_labeled + n_unlabeled, n_features, random_state=seed)
    y_true = np.searchsorted(np.quantile(latent, np.linspace(0, 1, n_classes + 1)[1:-1]), latent)
    y = np.where(np.arange(y_true.size) < n_labeled, y_true, -1)
    return X, y, y_true


def exact_memory(n_samples):
    """Bytes of :func:`qs3orao.exact.exact_solution`: kernel, Hessian, system and the solver's copy (float64)."""
    return 4 * 8 * n_samples**2


def _timed(fit):
    start = time.perf_counter()
    out = fit()
    return time.perf_counter() - start, out


class _Problem:
    """One size of the sweep: data, ``f*`` and the accuracy of any training scores."""

    def __init__(self, n_unlabeled, *, n_labeled, n_features, n_classes, objective, seed):
        self.X, self.y, y_true = make_problem(n_labeled, n_unlabeled, n_features, n_classes, seed)
        self.n_unlabeled, self.objective = n_unlabeled, objective
        self.unlabeled_true = y_true[self.y == -1]
        self.fit_reference = lambda: exact_solution(self.X, self.y, **objective)
        self.reference_time, solution = _timed(self.fit_reference)
        self.reference = solution.train_scores
        self.reference_auc = self.auc(self.reference)

    def auc(self, scores):
        return ordinal_auc(self.unlabeled_true, scores[self.y == -1])

    def accuracy(self, scores):
        """``(auc_gap, distance)``: |AUC - AUC(f*)| on unlabeled rows, ||F - F*|| / ||F*|| on all rows.

        The distance is nan for per-split models (one column of scores per split).
        """
        distance = np.linalg.norm(scores - self.reference) / np.linalg.norm(self.reference) if scores.ndim == 1 \
            else np.nan
        return abs(self.auc(scores) - self.reference_auc), float(distance)


def _scores(model, X):
    return model.train_scores_ if hasattr(model, "train_scores_") else model.decision_function(X)


def _search(problem, make, values, tolerances, repeats):
    """The first value whose fit is accurate, its median fit time and accuracy; None when none is.

    Returns
    -------
    dict or None, list of str
        The record, and one trace entry per value tried.
    """
    trace = []
    for value in values:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # short paper-schedule fits end far off
                elapsed, model = _timed(lambda: make(value).fit(problem.X, problem.y))
        except DivergenceError:
            trace.append(f"{value}: diverged")
            continue
        except MemoryBudgetExceeded:
            trace.append(f"{value}: over the memory budget")
            break
        auc_gap, distance = problem.accuracy(_scores(model, problem.X))
        trace.append(f"{value}: {elapsed:.2f} s, AUC gap {auc_gap:.4f}, distance {distance:.3f}")
        if auc_gap <= tolerances[0] and distance <= tolerances[1]:
            times = [elapsed] + [_timed(lambda: make(value).fit(problem.X, problem.y))[0]
                                 for _ in range(repeats - 1)]
            return dict(time=float(np.median(times)), setting=value, auc_gap=auc_gap, distance=distance), trace
    return None, trace


def _exact_record(problem, fit, repeats):
    elapsed = [_timed(fit) for _ in range(repeats)]
    auc_gap, distance = problem.accuracy(_scores(elapsed[-1][1], problem.X))
    return dict(time=float(np.median([t for t, _ in elapsed])), setting="exact", auc_gap=auc_gap, distance=distance)


def run_sweep(*, sizes, n_labeled, n_features, n_classes, objective, qs3orao_params, n_iters, feature_widths,
              auc_tolerance, distance_tolerance, memory_budget_mb, repeats=3, seed=0):
    """Every method's time to accuracy at every size where ``f*`` fits the budget.

    Parameters
    ----------
    sizes : list of int
        Numbers of unlabeled rows, increasing.
    n_labeled, n_features, n_classes : int
    objective : dict
        ``gamma``, ``lam``, ``tradeoff``: the objective every method is measured against.
    qs3orao_params : dict
        Further QS3ORAO parameters (``batch_size``, ``n_components``, ...).
    n_iters, feature_widths : list of int
        The doubling grids of QS3ORAO's ``n_iter`` and of the feature-map width ``D`` of RFF-AUC
        (``n_random_features``) and Nystroem-AUC (``n_landmarks``).
    auc_tolerance, distance_tolerance : float
    memory_budget_mb : float
        Budget of ``f*`` and of the exact baselines.
    repeats : int
    seed : int

    Returns
    -------
    records : list of dict
        ``method, n_unlabeled, time, setting, auc_gap, distance, trace`` (``time`` nan when never accurate).
    stop : str
        Why the sweep ended.
    """
    budget = int(memory_budget_mb * 2**20)
    tolerances = (auc_tolerance, distance_tolerance)
    makers = {label: (lambda n_iter, offset=offset: QS3ORAO(n_iter=n_iter, step_offset=offset, random_state=seed,
                                                            **objective, **qs3orao_params), n_iters)
              for label, offset in QS3ORAO_SCHEDULES.items()}
    makers.update({label: (lambda D, label=label: make_method(label, **{get_method(label).size_param: D},
                                                              random_state=seed, memory_budget=budget, **objective),
                           feature_widths)
                   for label in _FEATURE_METHODS})
    records, stop = [], f"reached the largest configured size ({sizes[-1]} unlabeled rows)"
    for n_unlabeled in sizes:
        if exact_memory(n_labeled + n_unlabeled) > budget:
            stop = (f"stopped before {n_unlabeled} unlabeled rows: the exact f* needs "
                    f"{exact_memory(n_labeled + n_unlabeled) / 2**20:.0f} MiB, over the {memory_budget_mb} MiB budget")
            break
        print(f"time to accuracy: {n_unlabeled} unlabeled rows", file=sys.stderr, flush=True)
        problem = _Problem(n_unlabeled, n_labeled=n_labeled, n_features=n_features, n_classes=n_classes,
                           objective=objective, seed=seed)
        found = {_REFERENCE: (_exact_record(problem, problem.fit_reference, repeats), [])}
        for label, (make, values) in makers.items():
            found[label] = _search(problem, make, values, tolerances, repeats)
        for label, cls in _EXACT_BASELINES.items():
            params = dict(gamma=objective["gamma"], lam=objective["lam"], memory_budget=budget)
            try:
                found[label] = (_exact_record(problem, lambda c=cls: c(**params).fit(problem.X, problem.y),
                                              repeats), [])
            except MemoryBudgetExceeded:
                found[label] = (None, ["over the memory budget"])
        for label, (record, trace) in found.items():
            record = record or dict(time=np.nan, setting=None, auc_gap=np.nan, distance=np.nan)
            records.append(dict(method=label, n_unlabeled=n_unlabeled, trace="; ".join(trace), **record))
    return records, stop


def _crossover(ours, theirs):
    """Smallest size from which ``ours`` is faster at every larger size of the sweep, interpolated log-log.

    nan when ``ours`` is not faster at the largest size; the smallest size (an
    upper bound) when it is faster at every size.  Sizes where either side has
    no time are left out.
    """
    sizes = [n for n in sorted(set(ours) & set(theirs)) if np.isfinite(ours[n]) and np.isfinite(theirs[n])]
    position, value = log_log_crossing(sizes, [np.log(theirs[n] / ours[n]) for n in sizes]) if sizes \
        else ("above", np.nan)
    if position == "above":
        return np.nan, "QS3ORAO (step offset auto) is not faster at the largest size both were timed at"
    if position == "below":
        return float(sizes[0]), "faster at every size: the smallest size is an upper bound"
    return value, "interpolated log-log"


def summary_rows(records, stop, *, auc_tolerance, distance_tolerance, repeats):
    """``time_to_accuracy[<method>,<n_unlabeled>]`` and ``crossover_at_equal_accuracy[<method>]`` rows."""
    criterion = (f"AUC within {auc_tolerance} of f* and ||F - F*|| / ||F*|| <= {distance_tolerance}; "
                 f"median of {repeats} fits")
    rows = []
    for r in records:
        if r["method"] in _EXACT_BASELINES or r["method"] == _REFERENCE:
            how = f"exact solve of its own objective; AUC gap {r['auc_gap']:.4f}, distance {r['distance']:.3f}"
            if r["method"] == _REFERENCE:
                how = "the exact solver of the same objective (the reference)"
        elif np.isfinite(r["time"]):
            how = f"{criterion}; reached at {r['setting']} (AUC gap {r['auc_gap']:.4f}, distance {r['distance']:.3f})"
        else:
            how = f"not accurate on the grid ({criterion})"
        rows.append((f"time_to_accuracy[{r['method']},{r['n_unlabeled']}]", r["time"],
                     f"{how}; tried {r['trace']}" if r["trace"] else how))
    times = {}
    for r in records:
        times.setdefault(r["method"], {})[r["n_unlabeled"]] = r["time"]
    for method in times:
        if method == "qs3orao-auto":
            continue
        value, how = _crossover(times["qs3orao-auto"], times[method])
        rows.append((f"crossover_at_equal_accuracy[{method}]", value,
                     f"unlabeled rows from which QS3ORAO (step offset auto) reaches the accuracy faster than "
                     f"{method}: {how}; {stop}"))
    return rows


def plot_time_to_accuracy(records, stop, paths, tolerances):
    """Time to accuracy against unlabeled rows, one line per method, log-log; saved under each of ``paths``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for method in dict.fromkeys(r["method"] for r in records):
        points = [(r["n_unlabeled"], r["time"]) for r in records if r["method"] == method and np.isfinite(r["time"])]
        if points:
            ax.plot(*zip(*points), marker="o", label=LABELS[method],
                    linestyle="--" if method in _EXACT_BASELINES else "-")
    ax.set(xscale="log", yscale="log", xlabel="unlabeled rows", ylabel="wall time to accuracy (s)",
           title="Time to equal accuracy (within tolerance of the exact f*)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.text(0.01, -0.06, f"Accurate: AUC within {tolerances[0]} of f* and ||F - F*|| / ||F*|| <= {tolerances[1]}; "
             f"exact baselines: fit time. Sweep {stop}.", fontsize=6)
    for path in paths:
        save_figure(fig, path, bbox_inches="tight")
    plt.close(fig)


def time_to_accuracy_rows(*, figure_paths=(), **settings):
    """Run the sweep with ``settings`` (see :func:`run_sweep`), draw its figure, return its summary rows."""
    records, stop = run_sweep(**settings)
    plot_time_to_accuracy(records, stop, figure_paths, (settings["auc_tolerance"], settings["distance_tolerance"]))
    return summary_rows(records, stop, auc_tolerance=settings["auc_tolerance"],
                        distance_tolerance=settings["distance_tolerance"], repeats=settings.get("repeats", 3))
