"""Snakemake adapter: cross-validate one method's hyperparameters on one trial's split."""

import sys
import time


def main(smk):
    """Search ``smk.params.grid`` by k-fold cross-validation over the trial's labeled rows.

    The unlabeled rows given to every fold are the first ``tuning.n_unlabeled``
    of the trial's unlabeled pool (the split function nests pools, so they are
    a subset of every larger pool of the same trial). Writes the best
    parameters and the whole search record. A search that cannot run (a fold
    without both sides of a split, a fit over the memory budget) is recorded
    with its reason and no best parameters, so the trial's training jobs use
    the fixed parameters and say so (``tuned`` is false).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    import numpy as np

    import bench
    from baselines.model_selection import cross_validate_params
    from baselines.registry import make_method
    from qs3orao.datasets import semisupervised_split

    log = bench.setup_logging(smk.log[0])
    seed = bench.trial_seed(smk.wildcards.dataset, int(smk.wildcards.trial), smk.params.base_seed)
    X_all = np.load(smk.input.X, mmap_mode="r")
    y_all = np.load(smk.input.y)
    available = y_all.size - smk.params.n_labeled
    size = bench.parse_size(smk.params.n_unlabeled)
    split = semisupervised_split(y_all, n_labeled=smk.params.n_labeled, seed=seed,
                                 n_unlabeled=available if size is None else min(size, available))
    X = np.array(X_all[split.train_idx])
    grid = bench.resolve_grid(smk.params.method, smk.params.grid)
    fixed = {name: value for name, value in {**smk.params.fixed, **smk.params.shared}.items()
             if name not in grid.grid and name != grid.split_param}
    accepted = make_method(smk.params.method).get_params()
    fixed = {name: value for name, value in fixed.items() if name in accepted}
    if "memory_budget" in accepted:
        fixed["memory_budget"] = int(smk.params.memory_budget_mb * 2**20)
    if "random_state" in accepted:
        fixed["random_state"] = seed
    log.info("%s on %s trial %s: %s, fixed %s", smk.params.method, smk.wildcards.dataset, smk.wildcards.trial,
             grid, fixed)
    record = {"dataset": smk.wildcards.dataset, "method": smk.wildcards.method, "seed": seed,
              "n_labeled": split.n_labeled, "n_unlabeled": split.n_unlabeled,
              "grid": {"grid": grid.grid, "split_param": grid.split_param, "split_values": grid.split_values},
              "status": "ok", "reason": "", "best_params": {}, "best_score": None, "search": []}
    start = time.perf_counter()
    with bench.limit_threads(smk.threads):
        try:
            result = cross_validate_params(smk.params.method, X, split.y_train, grid,
                                           n_splits=smk.params.n_splits, random_state=seed, fixed_params=fixed)
            record.update(best_params=result.best_params, best_score=result.best_score, search=result.table)
            log.info("best %s (cv auc %.4f)", result.best_params, result.best_score)
        except (ValueError, MemoryError) as error:  # the trial is trained on the fixed parameters instead
            status = "out_of_memory_budget" if isinstance(error, MemoryError) else "failed"
            record.update(status=status, reason=" ".join(f"{type(error).__name__}: {error}".split()))
            log.exception("search failed; the training jobs fall back to the fixed parameters")
    record["time"] = time.perf_counter() - start
    bench.write_json(smk.output[0], record)

if __name__ == "__main__":
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821 - injected by Snakemake
    main(snakemake)  # noqa: F821
