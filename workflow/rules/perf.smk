"""Performance benchmark of the fast engine: ``snakemake -c2 perf`` writes results/perf/summary.csv.

Each ratio is measured side by side in one process (see ``qs3study.perf.summary``).
Settings: ``config["perf"]``, defaults in the schema.
"""

PERF = config["perf"]


rule perf:
    """Speed-up over the reference, fit over evaluation floor, crossover with the exact baselines, memory, throughput,
    time to equal accuracy (generated problem), AUC against fit time on real unlabeled pools."""
    output:
        f"{RESULTS}/perf/summary.csv",
        time_to_accuracy=report(f"{RESULTS}/perf/time_to_accuracy.png", category="Performance"),
        pool_time_to_accuracy=report(f"{RESULTS}/perf/pool_time_to_accuracy.png", category="Performance"),
    params:
        settings=PERF,
    log:
        f"{LOGS}/perf/summary.log",
    benchmark:
        f"{BENCHMARKS}/perf/summary.tsv"
    threads: 2
    script:
        "../scripts/perf.py"
