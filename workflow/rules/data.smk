"""Data stage: fetch each file-backed dataset (upstream or mirror), then preprocess it once."""


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
        checks=config["data_checks"],
    log:
        f"{LOGS}/prepare/{{dataset}}.log",
    benchmark:
        f"{BENCHMARKS}/prepare/{{dataset}}.tsv"
    resources:
        mem_mb=resource_by_size("mem_mb", 2),
        runtime=resource_by_size("runtime"),
    script:
        "../scripts/prepare.py"


rule data_checks:
    """The data-validity screen's numbers of every selected dataset, with what was done (data_checks.csv)."""
    input:
        checks=expand(rules.prepare.output.checks, dataset=SELECTED),
    output:
        f"{FIGURES}/data_checks.csv",
    log:
        f"{LOGS}/figures/data_checks.log",
    localrule: True
    script:
        "../scripts/data_checks.py"
