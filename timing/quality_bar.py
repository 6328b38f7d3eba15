"""Quality-bar run: every method on one generated semi-supervised ordinal problem.

Each fit runs in its own process, so that its peak resident memory (``VmHWM``
minus the resident size before the fit) is its own.  AUC is the ordinal AUC
of the unlabeled rows' true labels; "supervised" rows give each method the
labeled rows only (trade-off 1, or ``pnu_mix = 0``), which a semi-supervised
method should match or beat.

Usage::

    python -m timing.quality_bar --n-labeled 500 --n-unlabeled 5000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time

import numpy as np

from qs3study.datasets.generated import make_latent_regression
from qs3orao.metrics import ordinal_auc

from .registry import get_method, make_method


def make_problem(n_labeled, n_unlabeled, n_features, n_classes, seed):
    """Latent-regression data cut into equal-frequency ordinal classes; rows past ``n_labeled`` unlabeled."""
    X, target = make_latent_regression(n_labeled + n_unlabeled, n_features, random_state=seed)
    edges = np.quantile(target, np.arange(1, n_classes) / n_classes)
    truth = np.digitize(target, edges)
    y = truth.copy()
    y[n_labeled:] = -1
    return X, y, truth


def _status(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _run(args):
    name, params, supervised, problem = args
    X, y, truth = make_problem(**problem)
    unlabeled = y == -1
    if supervised:
        X_fit, y_fit = X[~unlabeled], y[~unlabeled]
    else:
        X_fit, y_fit = X, y
    before = _status("VmRSS")
    start = time.perf_counter()
    model = make_method(name, **params).fit(X_fit, y_fit)
    seconds = time.perf_counter() - start
    peak = _status("VmHWM") - before
    auc = ordinal_auc(truth[unlabeled], model.decision_function(X[unlabeled]))
    return {"method": name, "supervised": supervised, "auc_unlabeled": round(auc, 4),
            "fit_seconds": round(seconds, 2), "peak_mib": round(peak / 2**20, 1), "params": params}


def default_runs(args):
    common = {"gamma": args.gamma, "lam": args.lam}
    D = 2 * args.n_iter * args.n_components
    qs3 = dict(common, n_iter=args.n_iter, n_components=args.n_components, batch_size=args.batch_size,
               random_state=0)
    runs = [
        ("svorex", {"gamma": args.gamma, "C": args.C}, False),
        ("m-pnu-auc", dict(common, pnu_mix=args.pnu_mix), False),
        ("m-pnu-auc", dict(common, pnu_mix=0.0), True),
        ("m-samult", dict(common, tradeoff=args.tradeoff), False),
        ("m-samult", dict(common, tradeoff=1.0), True),
        ("qs3orao", dict(qs3, tradeoff=args.tradeoff), False),
        ("qs3orao", dict(qs3, tradeoff=1.0), True),
    ]
    for name in ("rff-auc", "nystrom-auc"):
        width = get_method(name).size_param
        for size in sorted({D, args.equal_time_components}):
            runs.append((name, dict(common, **{width: size}, tradeoff=args.tradeoff, random_state=0), False))
        runs.append((name, dict(common, **{width: D}, tradeoff=1.0, random_state=0), True))
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-labeled", type=int, default=500)
    parser.add_argument("--n-unlabeled", type=int, default=5000)
    parser.add_argument("--n-features", type=int, default=5)
    parser.add_argument("--n-classes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--lam", type=float, default=2.0**-3)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tradeoff", type=float, default=0.5)
    parser.add_argument("--pnu-mix", type=float, default=0.5)
    parser.add_argument("--n-iter", type=int, default=500)
    parser.add_argument("--n-components", type=int, default=2, help="QS3ORAO frequencies per iteration")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--equal-time-components", type=int, default=1000,
                        help="feature count of the extra RFF/Nystrom run near QS3ORAO's wall time")
    parser.add_argument("--overrides", type=json.loads, default={},
                        help='JSON {method: {param: value}} for the semi-supervised runs, e.g. cross-validated '
                             'per-split weights: \'{"m-samult": {"tradeoff": [0.1, 0.2, 0.3, 0.4]}}\'')
    args = parser.parse_args(argv)
    problem = {"n_labeled": args.n_labeled, "n_unlabeled": args.n_unlabeled, "n_features": args.n_features,
               "n_classes": args.n_classes, "seed": args.seed}
    context = multiprocessing.get_context("spawn")
    for name, params, supervised in default_runs(args):
        if not supervised:
            params = dict(params, **args.overrides.get(name, {}))
        with context.Pool(1) as pool:
            print(json.dumps(pool.apply(_run, ((name, params, supervised, problem),))), flush=True)


if __name__ == "__main__":
    main()
