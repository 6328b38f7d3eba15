"""Training stage: one job per (dataset, method, unlabeled size, trial), one result file each."""


rule tune:
    """Cross-validate a method's hyperparameters on a trial's labeled rows (plus a prefix of its unlabeled pool)."""
    input:
        X=f"{RESULTS}/data/{{dataset}}/X.npy",
        y=f"{RESULTS}/data/{{dataset}}/y.npy",
    output:
        f"{RESULTS}/tuning/{{dataset}}/{{method}}/trial{{trial}}.json",
    params:
        method=lambda wildcards: bench.method_config(config, wildcards.method)["method"],
        fixed=lambda wildcards: bench.method_config(config, wildcards.method)["params"],
        grid=lambda wildcards: bench.method_config(config, wildcards.method)["grid"],
        shared=lambda wildcards: dataset_options(wildcards.dataset).get("params", {}),
        n_labeled=PROTOCOL["n_labeled"],
        n_unlabeled=bench.size_token(config["tuning"].get("n_unlabeled", 1000)),
        n_splits=config["tuning"].get("n_splits", 5),
        base_seed=PROTOCOL.get("seed", 0),
        memory_budget_mb=PROTOCOL.get("memory_budget_mb", 8192),
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
    """Fit one method and record the unlabeled rows' ordinal AUC, fit time, peak memory and status."""
    input:
        X=f"{RESULTS}/data/{{dataset}}/X.npy",
        y=f"{RESULTS}/data/{{dataset}}/y.npy",
        tuned=tuned_params_input,
    output:
        f"{RESULTS}/runs/{RUN}.json",
    params:
        method=lambda wildcards: bench.method_config(config, wildcards.method)["method"],
        fixed=lambda wildcards: bench.method_config(config, wildcards.method)["params"],
        shared=lambda wildcards: dataset_options(wildcards.dataset).get("params", {}),
        n_labeled=PROTOCOL["n_labeled"],
        base_seed=PROTOCOL.get("seed", 0),
        memory_budget_mb=PROTOCOL.get("memory_budget_mb", 8192),
    log:
        f"{LOGS}/train/{RUN}.log",
    benchmark:
        f"{BENCHMARKS}/train/{RUN}.tsv"
    threads: 1
    resources:
        mem_mb=train_mem_mb,
        runtime=resource_by_size("runtime"),
    script:
        "../scripts/train.py"
