"""Where the compiled steps pay: CPU time of a training on ``step_backend="numba"`` over ``"numpy"``.

    python timing/compiled_steps_scaling.py [--features 14] [--pools 1000 2000 ...] [--iterations 2000]
        [--repeats 3]

For each number of features and each unlabeled pool size (default: sizes of the
best-effort reproduction's sweep up to SGEMM's pool) (500 labeled rows, 5 classes, ``n_components=4``,
``batch_size=16``, a trade-off that weighs the unlabeled rows of three of the
four splits), one training of ``iterations`` steps on each backend, one
thread, the two alternating ``repeats`` times; it prints the median CPU
seconds, their ratio and the largest relative difference of the training
scores.  Pools of 100,000 rows and more take the engine's sparse plan, where
every group's features are computed again for all rows and the steps are a
small part of the time.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path
import sys

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

from qs3orao.engine import train  # noqa: E402
from qs3study.perf.summary import ordinal_problem  # noqa: E402

POOLS = (1000, 2000, 10000, 50000, 100000, 240000)


def cpu_times(X, codes, iterations, repeats):
    """Median CPU seconds per backend and the largest relative difference of the two fits' scores."""
    times, scores = {"numpy": [], "numba": []}, {}
    for _ in range(repeats):
        for backend in times:
            start = time.process_time()
            _, scores[backend] = train(X, codes, np.array([0.9, 1.0, 0.8, 0.8]), n_iter=iterations, batch_size=16,
                                       n_components=4, gamma=0.125, lam=2.0**-14, theta=1.0, seed=0, step_offset=50.0,
                                       step_backend=backend)
            times[backend].append(time.process_time() - start)
    gap = np.abs(scores["numba"] - scores["numpy"]).max() / np.abs(scores["numpy"]).max()
    return statistics.median(times["numpy"]), statistics.median(times["numba"]), gap


def main(features, pools, iterations, repeats):
    warnings.simplefilter("ignore")
    print(f"{'features':>8} {'unlabeled':>9} {'numpy s':>8} {'numba s':>8} {'ratio':>6} {'max rel diff':>12}")
    with threadpool_limits(limits=1):
        for d in features:
            for pool in pools:
                X, y = ordinal_problem(500 + pool, d, 5, 500, seed=0)
                plain, compiled, gap = cpu_times(X, np.where(y < 0, -1, y), iterations, repeats if pool <= 50000 else 1)
                print(f"{d:8d} {pool:9d} {plain:8.2f} {compiled:8.2f} {compiled / plain:6.3f} {gap:12.1e}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", type=int, nargs="+", default=[14])
    parser.add_argument("--pools", type=int, nargs="+", default=list(POOLS))
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    main(args.features, args.pools, args.iterations, args.repeats)
