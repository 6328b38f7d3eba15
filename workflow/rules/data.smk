"""Data stage: fetch each file-backed dataset (upstream or mirror), preprocess it once, screen it."""

from qs3study.stages.data_checks import SIGNAL_SETTINGS


rule download:
    """Fetch one dataset's upstream file into the cache (or find it in the mirror, or copy its local source) and checksum it."""
    input:
        lambda wildcards: dataset_spec(wildcards.dataset).source_path or [],
    output:
        f"{RESULTS}/downloads/{{dataset}}.json",
    params:
        options=lambda wildcards: dataset_options(wildcards.dataset),
        sha256=source_sha256,
        cache_dir=config["data"]["cache_dir"],
        mirror=config["data"]["mirror"],
    log:
        f"{LOGS}/download/{{dataset}}.log",
    resources:
        runtime=60,
    retries: 2
    script:
        "../scripts/download.py"


rule prepare:
    """Preprocess a dataset as in the paper (bins, TF-IDF+SVD, [0, 1] scaling) into memory-mappable arrays."""
    input:
        download_input,
    output:
        X=f"{RESULTS}/data/{{dataset}}/X.npy",
        y=f"{RESULTS}/data/{{dataset}}/y.npy",
        info=f"{RESULTS}/data/{{dataset}}/info.json",
        checks=f"{RESULTS}/data/{{dataset}}/checks.csv",
    params:
        options=lambda wildcards: dataset_options(wildcards.dataset),
        sha256=source_sha256,
        cache_dir=config["data"]["cache_dir"],
        mirror=config["data"]["mirror"],
        seed=PROTOCOL["seed"],
        protocol=PROTOCOL,
        checks={k: v for k, v in config["data_checks"].items() if k not in SIGNAL_SETTINGS},
    log:
        f"{LOGS}/prepare/{{dataset}}.log",
    benchmark:
        f"{BENCHMARKS}/prepare/{{dataset}}.tsv"
    resources:
        mem_mb=resource_by_size("mem_mb", 2),
        runtime=resource_by_size("runtime"),
    script:
        "../scripts/prepare.py"


rule signal_screen:
    """The signal screen's permutation test on one dataset's trial-0 labeled rows (its signal_null check)."""
    input:
        X=rules.prepare.output.X,
        y=rules.prepare.output.y,
    output:
        f"{RESULTS}/signal_screen/{{dataset}}.csv",
    params:
        options=lambda wildcards: dataset_options(wildcards.dataset),
        sha256=source_sha256,
        seed=PROTOCOL["seed"],
        n_labeled=PROTOCOL["n_labeled"],
        settings={k: config["data_checks"][k] for k in SIGNAL_SETTINGS},
    log:
        f"{LOGS}/signal_screen/{{dataset}}.log",
    benchmark:
        f"{BENCHMARKS}/signal_screen/{{dataset}}.tsv"
    resources:
        mem_mb=resource_by_size("mem_mb"),
        runtime=resource_by_size("runtime"),
    script:
        "../scripts/signal_screen.py"


rule data_checks:
    """The data-validity screen's numbers of every selected dataset, with what was done (data_checks.csv)."""
    input:
        checks=expand(rules.prepare.output.checks, dataset=SELECTED),
        signal=expand(rules.signal_screen.output[0], dataset=SELECTED)
        if config["data_checks"]["signal_permutations"] > 0 else [],
    output:
        f"{FIGURES}/data_checks.csv",
    log:
        f"{LOGS}/figures/data_checks.log",
    localrule: True
    script:
        "../scripts/data_checks.py"
