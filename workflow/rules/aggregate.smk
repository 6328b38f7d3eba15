"""Aggregation stage: all result files -> one tidy table."""


rule aggregate:
    """Join the trials' result files into results/tables/results.csv."""
    input:
        batches=expand_batches(rules.train.output[0]),
        draw_batches=expand_draws(rules.train_draw.output[0]),
    output:
        csv=f"{RESULTS}/tables/results.csv",
    params:
        results=expand_design(TRIAL_RESULTS) + expand_draws(DRAW_TRIAL_RESULTS),
        comparison_sizes={dataset: comparison_size(dataset) for dataset in SELECTED},
    log:
        f"{LOGS}/aggregate.log",
    localrule: True
    script:
        "../scripts/aggregate.py"
