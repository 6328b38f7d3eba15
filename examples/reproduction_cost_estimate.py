"""Estimate the wall time of a reproduction configuration from measured fit times (issue 11, item 8).

    python examples/reproduction_cost_estimate.py [CONFIG] [DATASET] [--overhead SECONDS]

How: on one real dataset of the configuration (prepared from the mirror), the
median of 3 fits of every configured method is measured at the sizes its jobs
fit (a tuning fold: (n_folds - 1) / n_folds of the labeled rows plus
``tuning.n_unlabeled`` unlabeled rows; the comparison size; every sweep size,
until the memory budget stops a method or a fit exceeds 10 minutes, after
which larger sizes are extrapolated with the exponent of the last two measured
sizes). Then

    total = sum over jobs of (fits of the job x fit time at its size + per-job overhead)

where a training job is one fit and a tuning job ``n_folds x`` the candidates
of the staged search (baselines.model_selection: the grid product, the shared
split values, then ``(k - 1) x (values - 1)`` per-split candidates, or one for
separable methods). Every dataset is costed with this dataset's times (scaled
by its row count only through the sweep sizes it reaches), the per-job
overhead (Python start-up, imports, reading the arrays) is given on the
command line (measured as the median of ``bench_s - fit_time`` of a finished
run's training jobs), and the total is divided by the cores (2). It is an
estimate, not a measurement: fit times vary with the number of features and
classes, and the machine may be shared.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from pathlib import Path

import numpy as np
import yaml

from baselines import MemoryBudgetExceeded
from baselines.registry import get_method
from qs3orao.datasets import get_spec, load_ordinal, semisupervised_split
from qs3study.configuration import build_estimator, method_spec
from qs3study.kernel_width import gamma_scale
from qs3study.tuning import resolve_grid

REPO = Path(__file__).resolve().parents[1]
DOCUMENTED_ROWS = {"sgemm": 241_600, "road3d_subset": 5_000, "amazon_digital_music": 6_908, "uci_kin40k": 40_000,
                   "uci_keggdirected": 16_000, "uci_keggundirected": 18_000, "uci_elevators": 16_599,
                   "uci_bike": 17_379, "uci_pumadyn32nm": 8_192, "uci_parkinsons": 5_875, "uci_tamielectric": 45_781}
"""Rows after loading (keggs: about a third remains after de-duplication, per the mirror's README)."""


def candidates(grid, n_classes):
    """Candidates of the staged search (see baselines.model_selection.cross_validate_params)."""
    count = len(list(itertools.product(*grid.grid.values())))
    if grid.split_param is not None:
        count += len(grid.split_values)
        count += 1 if grid.separable else (n_classes - 1) * (len(grid.split_values) - 1)
    return count


def fit_time(spec, X, y, n_unlabeled, n_labeled, seed, repeats=3):
    """Median fit time at ``n_unlabeled`` unlabeled rows; None when the memory budget stops the method."""
    split = semisupervised_split(y, n_labeled=n_labeled, seed=seed, n_unlabeled=min(n_unlabeled, y.size - n_labeled))
    Xs, ys = X[split.train_idx], split.y_train
    if get_method(spec["method"]).labeled_only:
        Xs, ys = Xs[split.labeled_mask], ys[split.labeled_mask]
    scale = gamma_scale("median", X[split.train_idx][split.labeled_mask], seed=seed)
    times = []
    for _ in range(repeats):
        estimator, _ = build_estimator(spec, seed=seed, tuned={"gamma": scale} if "gamma" in
                                       get_method(spec["method"]).estimator().get_params() else {})
        start = time.perf_counter()
        try:
            estimator.fit(Xs, ys)
        except MemoryBudgetExceeded:
            return None
        times.append(time.perf_counter() - start)
        if times[-1] > 60:
            break
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=str(REPO / "workflow" / "config" / "reproduction.yaml"))
    parser.add_argument("dataset", nargs="?", default="uci_bike")
    parser.add_argument("--overhead", type=float, default=3.0, help="seconds per job beyond its fits")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    schema_defaults = {"params": {}, "grid": None}
    config["methods"] = {k: {**schema_defaults, **v} for k, v in config["methods"].items()}
    config["datasets"] = {k: {"params": {}, **v} for k, v in config["datasets"].items()}
    protocol, tuning, sweep = config["protocol"], config["tuning"], config["sweep"]
    data = load_ordinal(get_spec(args.dataset), cache_dir=REPO / "resources", mirror=args.mirror,
                        random_state=0, dedupe=config["datasets"][args.dataset].get("dedupe", False))
    X, y = np.asarray(data.X), np.asarray(data.y)
    k = int(np.unique(y).size)
    n_lab = protocol["n_labeled"]
    fold_labeled = n_lab * (tuning["n_folds"] - 1) // tuning["n_folds"]
    sizes = sorted({s for s in sweep["n_unlabeled"] if s != "all"} | {protocol["n_unlabeled"]})
    print(f"{args.dataset}: {X.shape}, {k} classes; fit times (s), median of up to 3")
    total = 0.0
    for label, entry in config["methods"].items():
        spec = method_spec(config, label, args.dataset)
        spec["memory_budget_mb"] = protocol["memory_budget_mb"]
        tune_time = 0.0
        if entry["grid"] is not None:
            grid = resolve_grid(entry["method"], entry["grid"])
            per_fit = fit_time(spec, X, y, tuning["n_unlabeled"], fold_labeled, 0)
            fits = tuning["n_folds"] * candidates(grid, k)
            tune_time = fits * (per_fit or 0.0) + args.overhead
            n_tune = 1 if tuning.get("per", "trial") == "dataset" else protocol["trials"]
        measured = {}
        for size in sizes:
            if measured and measured[max(measured)] is not None and measured[max(measured)] > 600:
                break
            measured[size] = fit_time(spec, X, y, size, n_lab, 0)
        per_dataset = n_tune * tune_time if entry["grid"] is not None else 0.0
        per_dataset += protocol["trials"] * ((measured.get(protocol["n_unlabeled"]) or 0.0) + args.overhead)
        ok = sorted(s for s, t in measured.items() if t is not None)
        cost_by_dataset = 0.0
        for name, rows in DOCUMENTED_ROWS.items():
            pool = rows - n_lab
            points = [s for s in sizes if s < pool] + [pool]
            sweep_time = 0.0
            for s in points:
                if s in measured and measured[s] is None:
                    break  # the budget stops it here and beyond (one fast job that records the stop)
                if s in measured:
                    t = measured[s]
                elif len(ok) >= 2 and (max(measured) >= s or measured[max(measured)] is not None):
                    a, b = ok[-2], ok[-1]
                    slope = np.log(measured[b] / measured[a]) / np.log(b / a)
                    t = measured[b] * (s / b) ** max(slope, 0.0)
                else:
                    break
                sweep_time += sweep.get("trials", protocol["trials"]) * (t + args.overhead)
            cost_by_dataset += per_dataset + sweep_time
        total += cost_by_dataset
        print(f"{label:18s} tune fit {per_fit if entry['grid'] is not None else 0:.3f} x {fits if entry['grid'] is not None else 0} "
              f"fits; sizes {', '.join(f'{s}: ' + ('stop' if t is None else f'{t:.2f}') for s, t in measured.items())}; "
              f"all datasets {cost_by_dataset / 60:.1f} min")
    print(f"estimated total {total / 3600:.2f} core-hours; wall time on {args.cores} cores "
          f"{total / args.cores / 3600:.2f} h (perfect packing)")


if __name__ == "__main__":
    main()
