"""The exact baselines' fast and low-memory solvers side by side: fit time and peak memory.

    python timing/low_memory_solvers.py [--method m-samult] [--sizes 2000 4000] [--repeats 3]

On a generated 10-feature, 5-class problem with 500 labeled rows, at each size
(training rows in all), each solver fits in a process forked from this one, as
a training job runs a trial (:func:`qs3study.runtime.run_forked`), on one BLAS
thread, the two solvers alternating: medians over ``repeats`` of the wall and
CPU seconds and of the peak resident memory (which includes this process's
own, about the same for both).  Then, once per solver and size, the peak that
numpy allocates during the fit (tracemalloc, what the memory estimate bounds),
beside the estimate.
"""

from __future__ import annotations

import argparse
import statistics
import tracemalloc

from threadpoolctl import threadpool_limits

from baselines.registry import make_method
from qs3study.perf.summary import ordinal_problem
from qs3study.runtime import run_forked

SOLVERS = {"fast": False, "low-memory": True}


def traced_peak(fit):
    """Peak bytes numpy and Python allocate while ``fit()`` runs."""
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(method, sizes, repeats):
    with threadpool_limits(limits=1):
        for n in sizes:
            X, y = ordinal_problem(n, 10, 5, 500, 0)
            models = {name: make_method(method, gamma=0.1, lam=0.01, low_memory=flag) for name, flag in SOLVERS.items()}
            runs = {name: [] for name in SOLVERS}
            for _ in range(repeats):
                for name, model in models.items():
                    end = run_forked(lambda model=model: model.fit(X, y))
                    if end.exit_code != 0:
                        raise RuntimeError(f"{method} ({name}) at {n} rows: {end.failure()}")
                    runs[name].append(end)
            for name, model in models.items():
                peak = traced_peak(lambda model=model: model.fit(X, y))
                print(f"{method} {name:10s} n={n}: wall {statistics.median(r.wall_s for r in runs[name]):7.2f} s, "
                      f"CPU {statistics.median(r.cpu_s for r in runs[name]):7.2f} s, "
                      f"peak RSS {statistics.median(r.max_rss_mb for r in runs[name]):7.1f} MiB, "
                      f"traced peak {peak / 2**20:7.1f} MiB (estimate {model.memory_estimate_ / 2**20:7.1f} MiB)",
                      flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="m-samult", choices=("m-samult", "m-pnu-auc"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    main(args.method, args.sizes, args.repeats)
