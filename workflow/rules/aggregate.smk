"""Aggregation stage: all result files and benchmark records -> one tidy table."""


rule aggregate:
    """Join result files and Snakemake benchmark records into results/tables/results.csv."""
    input:
        results=expand_design(rules.train.output[0]),
        benchmarks=expand_design(f"{BENCHMARKS}/train/{RUN}.tsv"),
    output:
        csv=f"{RESULTS}/tables/results.csv",
    params:
        comparison_sizes={dataset: comparison_size(dataset) for dataset in SELECTED},
    log:
        f"{LOGS}/aggregate.log",
    localrule: True
    script:
        "../scripts/aggregate.py"
