"""Where a kernel expansion's ``lam`` path pays off against separate solves, at the tuning size.

    python timing/lam_path_break_even.py [--repeats 3]

For f* (:class:`baselines.exact_reference.QS3ORAOExact`) and M-SAMULT, at the
shared trade-off of the search's first stage (0.5) and at 1 (the unlabeled
rows weigh nothing), on a generated 10-feature, 5-class problem of a tuning
fold's size (400 labeled and 1,000 unlabeled rows): the CPU time of one
``fit_path`` over the 24 values of the best-effort ``lam`` range against 24
separate fits, one BLAS thread as the tuning jobs run, medians of
``repeats`` alternating.  The kernel is computed once, outside the timing, as
the tuning computes it once per (fold, kernel width); the path's kernel root is
timed, as the tuning computes it once per path.  It prints the path's cost in
separate solves: the estimator's ``PATH_MIN_SETTINGS`` should lie about there.
"""

from __future__ import annotations

import argparse
import statistics
import time

from threadpoolctl import threadpool_limits

from baselines.exact_reference import QS3ORAOExact
from baselines.kernel_cache import reuse_kernels
from baselines.samult import MSAMULT
from qs3study.perf.summary import ordinal_problem

LAMS = [2.0 ** e for e in range(-20, 4)]


def cpu_seconds(estimator_class, X, y, tradeoff, path):
    """CPU seconds of the 24 values of ``LAMS`` by one ``fit_path`` (``path``) or by separate fits."""
    with reuse_kernels():
        estimator_class(gamma=0.1, tradeoff=tradeoff, lam=LAMS[0]).fit(X, y)  # the kernel, untimed
        start = time.process_time()
        if path:
            estimator_class(gamma=0.1, tradeoff=tradeoff).fit_path(X, y, [dict(lam=v) for v in LAMS])
        else:
            for lam in LAMS:
                estimator_class(gamma=0.1, tradeoff=tradeoff, lam=lam).fit(X, y)
        return time.process_time() - start


def main(repeats):
    X, y = ordinal_problem(1400, 10, 5, 400, 0)
    with threadpool_limits(limits=1):
        for estimator_class in (QS3ORAOExact, MSAMULT):
            for tradeoff in (0.5, 1.0):
                times = {True: [], False: []}
                for _ in range(repeats):
                    for path in times:
                        times[path].append(cpu_seconds(estimator_class, X, y, tradeoff, path))
                path, separate = (statistics.median(times[p]) for p in (True, False))
                print(f"{estimator_class.__name__:13s} tradeoff {tradeoff}: path over {len(LAMS)} values {path:.2f} "
                      f"CPU-s, {len(LAMS)} separate fits {separate:.2f} CPU-s: the path costs "
                      f"{path / (separate / len(LAMS)):.1f} separate fits (PATH_MIN_SETTINGS "
                      f"{estimator_class.PATH_MIN_SETTINGS})", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    main(parser.parse_args().repeats)
