"""The scale study's training cost, estimated from a pilot before the study runs.

    python timing/scale_cost_pilot.py [--configs FILE ...] [--datasets NAME ...] [--sizes N ...]
        [--mirror DIR]

For every method of the merged configuration (the protocol and ``scale.yaml`` by default, merged
as Snakemake merges ``--configfile`` files: later keys win, mappings merged key by key) and every
pilot size, one fit's CPU seconds (BLAS limited to one thread, as the pipeline's jobs run) on each
dataset, with the solver the fit takes at the study's memory budget: an exact baseline that would
take its low-memory solver at a study size is timed with that solver at the pilot sizes too.
Each method's time at the sweep's sizes is extrapolated from the two largest pilot sizes with
the larger of their measured exponent and ``--floor`` (3 for the exact methods' O(n^3), 1 for the
others: below the asymptote a measured exponent underestimates the cost; 0 for a labeled-only method,
which fits the same labeled rows at every size); a size beyond the dataset's pool (its rows after
loading, less the labeled ones) is recorded and costs nothing, and a size whose memory
estimate exceeds the budget is a stop (the job records it and costs nothing). Printed: per dataset
and method the pilot times, the exponent used and the estimate per size; the total core-hours of
the sweep's trials and its wall time on ``--cores`` cores. An estimate, not a measurement.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import yaml
from threadpoolctl import threadpool_limits

from baselines._budget import MemoryBudgetExceeded
from baselines.registry import get_method
from qs3study.configuration import build_estimator, job_memory_mb, method_spec
from qs3study.datasets import get_spec, load_ordinal, semisupervised_split
from qs3study.kernel_width import gamma_scale

REPO = Path(__file__).resolve().parents[1]
CONFIGS = [REPO / "workflow" / "config" / "reproduction-paper.yaml", REPO / "workflow" / "config" / "scale.yaml"]
#: The methods whose cost grows as O(n^3) (the extrapolation's floor exponent for them).
CUBIC = {"m-pnu-auc", "m-samult", "qs3orao-exact", "qs3orao-exact-labeled"}


def merged(paths):
    """The configuration files merged as Snakemake merges ``--configfile`` files."""
    def update(base, overlay):
        for key, value in overlay.items():
            base[key] = update(dict(base[key]), value) if isinstance(value, dict) and isinstance(
                base.get(key), dict) else value
        return base

    config = {}
    for path in paths:
        config = update(config, yaml.safe_load(Path(path).read_text()) or {})
    config["methods"] = {label: {"params": {}, "grid": None, **entry}
                         for label, entry in config["methods"].items() if entry is not None}
    config["datasets"] = {name: {"params": {}, **(entry or {})} for name, entry in config["datasets"].items()}
    return config


def fit_cpu(spec, X, y, n_unlabeled, n_labeled, low_memory):
    """CPU seconds of one fit at ``n_unlabeled`` unlabeled rows (None: stopped by the budget)."""
    split = semisupervised_split(y, n_labeled=n_labeled, seed=0, n_unlabeled=n_unlabeled)
    Xs, ys = X[split.train_idx], split.y_train
    estimator, _ = build_estimator(spec, seed=0)
    tuned = {"gamma": gamma_scale("median", Xs[split.labeled_mask], seed=0)} if "gamma" in estimator.get_params() else {}
    if "low_memory" in estimator.get_params():
        tuned["low_memory"] = low_memory
    estimator, _ = build_estimator(spec, seed=0, tuned=tuned)
    if get_method(spec["method"]).labeled_only:
        Xs, ys = Xs[split.labeled_mask], ys[split.labeled_mask]
    start = time.process_time()
    try:
        with threadpool_limits(limits=1):
            estimator.fit(Xs, ys)
    except MemoryBudgetExceeded:
        return None
    return time.process_time() - start


def size_estimates(seconds, at, exponent, sizes, *, pool, stops):
    """One fit's seconds at each of ``sizes``, from ``seconds`` measured at ``at`` unlabeled rows.

    Returns
    -------
    dict
        Size to its seconds ``seconds * (size / at) ** exponent``, or to "beyond the pool" (a size
        above ``pool``) or "stop" (``stops(size)``: the memory budget stops the method there).
    """
    return {s: "beyond the pool" if s > pool else "stop" if stops(s) else seconds * (s / at) ** exponent
            for s in sizes}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=[str(p) for p in CONFIGS])
    parser.add_argument("--datasets", nargs="+", default=None, help="default: the configuration's select")
    parser.add_argument("--sizes", nargs="+", type=int, default=[2000, 4000], help="pilot unlabeled sizes")
    parser.add_argument("--floor", type=float, default=3.0, help="smallest exponent of the cubic methods")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    args = parser.parse_args()
    config = merged(args.configs)
    protocol, sweep = config["protocol"], config["sweep"]
    n_lab, trials = protocol["n_labeled"], sweep.get("trials", protocol["trials"])
    sizes = [s for s in sweep["n_unlabeled"] if s != "all"]
    total = 0.0
    for name in args.datasets or config["select"]:
        data = load_ordinal(get_spec(name), cache_dir=REPO / "resources", mirror=args.mirror, random_state=0,
                            dedupe=config["datasets"].get(name, {}).get("dedupe", False))
        X, y = np.asarray(data.X), np.asarray(data.y)
        k = int(np.unique(y).size)
        print(f"{name}: {X.shape}, {k} classes; pilot sizes {args.sizes}, {trials} trials per sweep size")
        for label in config["methods"]:
            spec = method_spec(config, label, name)
            method = spec["method"]
            fast = {**spec, "low_memory_exact": False}
            low = [s for s in sizes if job_memory_mb(spec, n_rows=s + n_lab, n_features=X.shape[1], n_classes=k,
                                                     n_labeled=n_lab) != job_memory_mb(
                fast, n_rows=s + n_lab, n_features=X.shape[1], n_classes=k, n_labeled=n_lab)]
            solver = bool(low) and spec.get("low_memory_exact", False)
            pilot = {s: fit_cpu(spec, X, y, s, n_lab, True if solver else None) for s in args.sizes}
            a, b = args.sizes[-2], args.sizes[-1]
            measured = np.log(pilot[b] / pilot[a]) / np.log(b / a) if pilot[a] and pilot[b] else float("nan")
            # a labeled-only method fits the same labeled rows at every size
            exponent = 0.0 if get_method(method).labeled_only else max(measured, args.floor if method in CUBIC else 1.0)
            estimates = size_estimates(pilot[b], b, exponent, sizes, pool=y.size - n_lab,
                                       stops=lambda s: (job_memory_mb(spec, n_rows=s + n_lab, n_features=X.shape[1],
                                                                      n_classes=k, n_labeled=n_lab) or 0)
                                       >= protocol["memory_budget_mb"])
            total += trials * sum(t for t in estimates.values() if not isinstance(t, str))
            parts = [f"{s}: {t}" if isinstance(t, str) else f"{s}: {t:.0f} s" for s, t in estimates.items()]
            print(f"  {label:22s} pilot {', '.join(f'{s}: {t:.2f} s' if t else f'{s}: stop' for s, t in pilot.items())}"
                  f"{' (low-memory solver)' if solver else ''}; exponent measured {measured:.2f}, used "
                  f"{exponent:.2f}; {'; '.join(parts)}")
    print(f"estimated sweep training total: {total / 3600:.1f} core-hours; {total / args.cores / 3600:.1f} h on "
          f"{args.cores} cores (perfect packing; tuning and the comparison size not included)")


if __name__ == "__main__":
    main()
