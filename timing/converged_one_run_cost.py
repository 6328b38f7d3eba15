"""CPU time of ConvergedQS3ORAO's single run against the fresh doublings it replaced, side by side.

The fresh doublings fit 2,000, 4,000, ... iterations anew, each from the same seed; the single run
reads the training risk at each doubling and stops where the criterion holds. Both must
stop at the same count with the same scores; the ratio is fresh / one run, medians of 3 alternating
repeats, process CPU seconds on one BLAS thread, on a generated 2,500-row problem (500 labeled), at
the paper grid's smallest lam and a lam the best-effort protocol reaches.

    python timing/converged_one_run_cost.py
"""

import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from baselines.converged import ConvergedQS3ORAO, relative_change
from qs3orao import QS3ORAO
from qs3orao.objective import ordinal_risk
from qs3orao.validation import check_semisupervised
from qs3study.perf.summary import ordinal_problem

warnings.simplefilter("ignore")
X, y = ordinal_problem(2500, 12, 5, 500, 0)
_, codes, _, w = check_semisupervised(X, y, tradeoff=0.5)
params = dict(n_components=4, batch_size=16, gamma=0.1, step_offset="auto", random_state=0, n_jobs=1)


def fresh(lam):
    """The doublings as fresh fits, stopping by ConvergedQS3ORAO's criterion (tol 0.01, max_iter 32,000)."""
    n, model = 2000, QS3ORAO(n_iter=2000, lam=lam, **params).fit(X, y)
    risk = ordinal_risk(model.train_scores_, codes, w)[0]
    while 2 * n <= 32000:
        n *= 2
        model = QS3ORAO(n_iter=n, lam=lam, **params).fit(X, y)
        new = ordinal_risk(model.train_scores_, codes, w)[0]
        if relative_change(risk, new) <= 0.01:
            break
        risk = new
    return model


with threadpool_limits(1):
    for lam in [0.125, 2.0**-8]:
        ratios = []
        for _ in range(3):
            t = time.process_time()
            a = fresh(lam)
            t_old = time.process_time() - t
            t = time.process_time()
            b = ConvergedQS3ORAO(n_iter=2000, lam=lam, **params).fit(X, y)
            t_new = time.process_time() - t
            ratios.append(t_old / t_new)
        print(f"lam={lam:g}: n_iter {a.n_iter_} (fresh) vs {b.n_iter_} (one run); "
              f"max|diff|={np.abs(a.train_scores_ - b.train_scores_).max():.1e}; "
              f"fresh/one-run CPU ratio median {np.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)})",
              flush=True)
