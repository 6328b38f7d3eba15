"""QS3ORAO's per-step overhead, timed for two source trees side by side.

    python timing/fit_overhead_benchmark.py BASELINE_TREE [CANDIDATE_TREE] [--repeats 5]
        [--step-backend numba]

For changes to the engine's per-step bookkeeping that must not change a single
bit.  Each tree (a checkout, for example ``git worktree add /tmp/base HEAD~1``;
the candidate defaults to this checkout) runs in its own interpreter, the two
alternating, ``repeats`` times:

* one :class:`baselines.converged.ConvergedQS3ORAO` fit as the best-effort
  reproduction's trainings run it (a generated 14-feature, 5-class problem
  with 500 labeled and 2,000 unlabeled rows; ``n_components=4``,
  ``batch_size=16``, iterations doubled from 2,000 up to 8,000; one thread,
  BLAS limited to one thread too), where the bookkeeping dominates;
* one :meth:`qs3orao.QS3ORAO.fit_path` over the perf rule's ``grid_pass``
  workload (the schema's defaults: 7 ``lam`` x 11 trade-off values, 5,000 rows,
  500 iterations, every core), and one fit of that workload's first setting,
  every core (the denominator of ``grid_pass_ratio``).

All run on ``--step-backend`` (default numpy; with numba the compiled loops
are loaded in each interpreter before anything is timed).  It prints the
median wall and CPU time of each per tree, the candidate's over the
baseline's, each tree's pass over its one fit, and whether the two trees'
scores and thresholds are equal bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
SCHEMA = CHECKOUT / "workflow" / "config" / "schema.yaml"


def _timed(func):
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def child(tree, step_backend):
    """Time both workloads with the code of ``tree`` on ``step_backend``; print a JSON line."""
    sys.path[:0] = [str(tree), str(tree / "workflow")]
    import warnings

    import yaml

    import qs3orao
    from baselines.converged import ConvergedQS3ORAO
    from qs3study.perf.summary import ordinal_problem
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    if not Path(qs3orao.__file__).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"qs3orao imported from {qs3orao.__file__}, not from {tree}")
    warnings.simplefilter("ignore", ConvergenceWarning)
    if step_backend != "numpy":
        X, y = ordinal_problem(300, 14, 5, 100, 0)
        ConvergedQS3ORAO(n_iter=20, max_iter=40, step_backend=step_backend, random_state=0).fit(X, y)
        qs3orao.QS3ORAO(n_iter=20, step_backend=step_backend, random_state=0).fit_path(X, y, [{}, dict(tradeoff=1.0)])
    X, y = ordinal_problem(2500, 14, 5, 500, 0)
    fit = ConvergedQS3ORAO(batch_size=16, gamma=0.125, lam=2.0**-14, n_components=4, n_iter=2000, max_iter=8000,
                           step_offset="auto", tol=0.01, tradeoff=[0.9, 1.0, 0.8, 0.8], n_jobs=1,
                           step_backend=step_backend, random_state=0)
    with threadpool_limits(limits=1):  # a training job's one thread
        fit_wall, fit_cpu, fitted = _timed(lambda: fit.fit(X, y))
    # The perf rule's grid_pass workload, read from this script's checkout, so both trees run the same one.
    workload = yaml.safe_load(SCHEMA.read_text())["properties"]["perf"]["properties"]["grid_pass"]["default"]
    X, y = ordinal_problem(workload["n_samples"], workload["n_features"], workload["n_classes"],
                           workload["n_labeled"], 0)
    grid = [dict(lam=lam, tradeoff=t) for lam in workload["lams"] for t in workload["tradeoffs"]]
    path = qs3orao.QS3ORAO(**workload["params"], step_backend=step_backend, random_state=0)
    path_wall, path_cpu, models = _timed(lambda: path.fit_path(X, y, grid))
    one = qs3orao.QS3ORAO(**workload["params"], **grid[0], step_backend=step_backend, random_state=0)
    one_wall, one_cpu, single = _timed(lambda: one.fit(X, y))
    digest = hashlib.sha256(b"".join(array.tobytes() for model in [fitted, single, *models]
                                     for array in (model.train_scores_, model.thresholds_))).hexdigest()
    print(json.dumps(dict(fit_wall=fit_wall, fit_cpu=fit_cpu, path_wall=path_wall, path_cpu=path_cpu,
                          one_wall=one_wall, one_cpu=one_cpu, iterations=int(fitted.n_iter_), scores=digest)))


def main(baseline, candidate, repeats, step_backend):
    trees = {"baseline": baseline, "candidate": candidate}
    runs = {name: [] for name in trees}
    for r in range(repeats):
        for name, tree in trees.items():
            out = subprocess.run([sys.executable, __file__, "--child", str(tree), "--step-backend", step_backend],
                                 check=True, capture_output=True, text=True, cwd=tree).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
            print(f"round {r + 1}/{repeats} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
    keys = ("fit_wall", "fit_cpu", "path_wall", "path_cpu", "one_wall", "one_cpu")
    medians = {name: {key: statistics.median(run[key] for run in rows) for key in keys} for name, rows in runs.items()}
    print(f"baseline {baseline}\ncandidate {candidate}\nstep_backend {step_backend}; medians of {repeats}, alternating:")
    for key in keys:
        base, cand = medians["baseline"][key], medians["candidate"][key]
        print(f"  {key:9s}  baseline {base:7.3f} s  candidate {cand:7.3f} s  candidate/baseline {cand / base:.3f}")
    print("  pass / one fit (wall, medians):  " + "  ".join(
        f"{name} {medians[name]['path_wall'] / medians[name]['one_wall']:.2f}" for name in trees))
    digests = {run["scores"] for rows in runs.values() for run in rows}
    iterations = {run["iterations"] for rows in runs.values() for run in rows}
    print(f"ConvergedQS3ORAO kept {sorted(iterations)} iterations; scores equal bit for bit across trees and "
          f"repeats: {len(digests) == 1}")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, nargs="?")
    parser.add_argument("candidate", type=Path, nargs="?", default=CHECKOUT)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--step-backend", choices=["numpy", "numba"], default="numpy")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.step_backend)
    elif args.baseline is None:
        parser.error("give the baseline tree")
    else:
        sys.exit(main(args.baseline, args.candidate, args.repeats, args.step_backend))
