"""Training stage: one job per (dataset, method, unlabeled size), or per part of its trials (resources.trials_per_job);
one result file per trial."""


rule tune:
    """Cross-validate a method's hyperparameters on a trial's labeled rows (plus a prefix of its unlabeled pool)."""
    input:
        X=rules.prepare.output.X,
        y=rules.prepare.output.y,
    output:
        f"{RESULTS}/tuning/{{dataset}}/{{method}}/trial{{trial}}.json",
    params:
        spec=lambda wildcards: method_spec(config, wildcards.method, wildcards.dataset),
        grid=lambda wildcards: method_config(config, wildcards.method)["grid"],
        grid_range=lambda wildcards: method_config(config, wildcards.method)["grid_range"],
        whole_range=lambda wildcards: method_config(config, wildcards.method)["whole_range"],
        widen_tolerance=lambda wildcards: method_config(config, wildcards.method)["widen_tolerance"],
        widen_limits=lambda wildcards: method_config(config, wildcards.method)["widen_limits"],
        n_labeled=PROTOCOL["n_labeled"],
        n_unlabeled=size_token(config["tuning"]["n_unlabeled"]),
        n_folds=config["tuning"]["n_folds"],
        early_stopping=config["tuning"]["early_stopping"],
        base_seed=PROTOCOL["seed"],
        kernel_width=PROTOCOL["kernel_width"],
        group_column=lambda wildcards: dataset_spec(wildcards.dataset).group_column,
    log:
        f"{LOGS}/tune/{{dataset}}/{{method}}/trial{{trial}}.log",
    benchmark:
        f"{BENCHMARKS}/tune/{{dataset}}/{{method}}/trial{{trial}}.tsv"
    threads: 1
    resources:
        mem_mb=train_mem_mb,
        runtime=resource_by_size("runtime", 4),
    script:
        "../scripts/tune.py"


rule train:
    """Fit one method on each trial of one (dataset, unlabeled size) (or of a part of its trials), each trial in its
    own process forked from the job's; one result file per trial records the unlabeled rows' ordinal AUC, fit time,
    peak memory and status."""
    input:
        X=rules.prepare.output.X,
        y=rules.prepare.output.y,
        tuned=batch_tuned_input,
    output:
        directory(f"{RESULTS}/runs/{BATCH}"),
    params:
        spec=lambda wildcards: method_spec(config, wildcards.method, wildcards.dataset),
        trials=batch_trials,
        tuned=batch_tuned_params,
        n_labeled=PROTOCOL["n_labeled"],
        base_seed=PROTOCOL["seed"],
        kernel_width=PROTOCOL["kernel_width"],
        group_column=lambda wildcards: dataset_spec(wildcards.dataset).group_column,
        on_failure=config["tuning"]["on_failure"],
    log:
        f"{LOGS}/train/{BATCH}.log",
    benchmark:
        f"{BENCHMARKS}/train/{BATCH}.tsv"
    threads: 1
    resources:
        mem_mb=train_job_mem_mb,
        runtime=train_runtime,
    script:
        "../scripts/train.py"


# Tuning draws d >= 1 (tuning.draws): the same jobs at the draw's paths, the draw a wildcard that the
# scripts read (qs3study.design.tuning_seed); draw 0 is rules tune and train, their paths unchanged.
use rule tune as tune_draw with:
    output:
        f"{RESULTS}/tuning/{{dataset}}/{{method}}/draw{{draw}}/trial{{trial}}.json",
    log:
        f"{LOGS}/tune/{{dataset}}/{{method}}/draw{{draw}}/trial{{trial}}.log",
    benchmark:
        f"{BENCHMARKS}/tune/{{dataset}}/{{method}}/draw{{draw}}/trial{{trial}}.tsv"


use rule train as train_draw with:
    output:
        directory(f"{RESULTS}/runs/{DRAW_BATCH}"),
    log:
        f"{LOGS}/train/{DRAW_BATCH}.log",
    benchmark:
        f"{BENCHMARKS}/train/{DRAW_BATCH}.tsv"
