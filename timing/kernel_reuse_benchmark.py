"""Cross-validation of the exact methods with and without kernel reuse, side by side.

    python timing/kernel_reuse_benchmark.py [n_rows] [repeats]

For M-SAMULT and M-PNU-AUC, runs the paper's staged search (gamma x lam on
2^-3..2^3, then the trade-offs) twice in the same process, once with
:func:`baselines.kernel_cache.reuse_kernels` disabled (every fit recomputes
its kernel) and once as the search runs by default, and prints the median
wall time of each over ``repeats`` repeats, their ratio, and whether both
searches chose the same parameters with the same scores (equal accuracy).
"""

import statistics
import sys
import time
from unittest import mock

import numpy as np

from baselines import kernel_cache, model_selection
from qs3study.datasets import equal_frequency_bins, make_latent_regression


def main(n_rows=600, repeats=3):
    X, target = make_latent_regression(n_rows, 3, random_state=0)
    y, _ = equal_frequency_bins(target, 5)
    y = y.astype(np.int64)
    y[150:] = -1  # 150 labeled rows, the rest unlabeled
    off = lambda max_bytes=0: kernel_cache.reuse_kernels(0)  # noqa: E731 - nothing is ever kept
    print(f"{n_rows} rows (150 labeled), 5-fold staged search, median of {repeats}")
    for name in ("m-samult", "m-pnu-auc"):
        times, results = {}, {}
        for mode in ("recompute", "reuse"):
            runs = []
            for _ in range(repeats):
                start = time.perf_counter()
                if mode == "recompute":
                    with mock.patch.object(model_selection, "reuse_kernels", off):
                        result = model_selection.cross_validate_params(name, X, y, n_folds=5)
                else:
                    result = model_selection.cross_validate_params(name, X, y, n_folds=5)
                runs.append(time.perf_counter() - start)
            times[mode], results[mode] = statistics.median(runs), result
        same = (results["recompute"].best_params == results["reuse"].best_params
                and [r["cv_auc"] for r in results["recompute"].table] == [r["cv_auc"] for r in results["reuse"].table])
        print(f"{name:10s} recompute {times['recompute']:7.2f} s  reuse {times['reuse']:7.2f} s  "
              f"speed-up {times['recompute'] / times['reuse']:.2f}x  identical search: {same}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
