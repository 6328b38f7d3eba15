"""Performance benchmark of the fast engine: ``snakemake -c2 perf`` writes results/perf/summary.csv.

Each ratio is measured side by side in one process (see ``qs3orao._perf``).
Settings: the defaults below, overridden key by key by ``config["perf"]``.
"""

PERF_DEFAULTS = {
    "seed": 0,
    # Reference (Algorithms 1-2 as written, O(t^2)) against the fast engine.
    "reference": {
        "n_samples": 1000, "n_features": 5, "n_classes": 3, "n_labeled": 200,
        "params": {"n_iter": 2000, "batch_size": 8, "n_components": 8, "gamma": 1.0, "lam": 1.0,
                   "theta": 1.5, "tradeoff": 0.5, "seed": 0},
    },
    # Fit against one evaluation pass, at the scale of Yolanda (400,000 rows x 100 features).
    "floor": {
        "n_samples": 400_000, "n_features": 100, "n_classes": 5, "n_labeled": 2000,
        "params": {"n_iter": 48, "gamma": 0.01, "n_jobs": -1},
    },
    "throughput": {"n_samples": 100_000, "n_features": 100, "n_components": 32, "n_blocks": 18, "n_jobs": -1},
    "crossover": {
        "n_features": 10, "n_classes": 5, "n_labeled": 200,
        "sizes": [250, 500, 1000, 2000, 4000, 8000, 16000],
        "params": {"gamma": 0.1, "n_jobs": -1},
        "baseline_params": {"gamma": 0.1, "lam": 1.0},
        "memory_budget_mb": 2048,
    },
    # Wall time to come within tolerance of the exact f* (qs3study.time_to_accuracy). The sweep stops at
    # the first size whose exact f* (4 n x n float64 matrices) exceeds the budget, which also bounds the
    # exact baselines: 2.5 GiB reaches 8,000 unlabeled rows (about 20 minutes on 2 cores).
    "time_to_accuracy": {
        "sizes": [1000, 2000, 4000, 8000, 16000, 32000, 64000],
        "n_labeled": 200, "n_features": 5, "n_classes": 4,
        "objective": {"gamma": 1.0, "lam": 0.1, "tradeoff": 0.5},
        "qs3orao_params": {"batch_size": 16, "n_components": 4},
        "n_iters": [250, 500, 1000, 2000, 4000, 8000, 16000, 32000],
        "n_components": [64, 128, 256, 512, 1024, 2048, 4096],
        "auc_tolerance": 0.005, "distance_tolerance": 0.1,
        "memory_budget_mb": 2560, "repeats": 3, "seed": 0,
    },
}
PERF = {**PERF_DEFAULTS, **config.get("perf", {})}


rule perf:
    """Speed-up over the reference, fit over evaluation floor, crossover with the exact baselines, memory, throughput,
    time to equal accuracy."""
    output:
        "results/perf/summary.csv",
        time_to_accuracy=report("results/perf/time_to_accuracy.png", category="Performance"),
    params:
        settings=PERF,
    log:
        "logs/perf/summary.log",
    benchmark:
        "benchmarks/perf/summary.tsv"
    threads: 2
    script:
        "../scripts/perf_summary.py"
