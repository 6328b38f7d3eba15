# Theory stage: the claims ledger. Every setting of the studies lives in the
# pre-registered design file, config["theory"]["design"] (default workflow/config/theory.yaml);
# the outputs go to config["theory"]["out"] (default figures/theory/), where the tidy data are committed with the ledger.
import os

import yaml

from qs3study.claims.assemble import empirical_inputs

# A relative design path is read from the repository (the working directory may be elsewhere).
_THEORY_DESIGN = config.get("theory", {}).get("design", "workflow/config/theory.yaml")
THEORY_DESIGN = os.path.relpath(os.path.join(workflow.basedir, _THEORY_DESIGN))
with open(THEORY_DESIGN) as _handle:
    _THEORY = yaml.safe_load(_handle)
THEORY_OUT = config.get("theory", {}).get("out", "figures/theory")
THEORY_INSTANCES = list(_THEORY["convergence"]["instances"])
THEORY_FIGURES = [f"convergence_{name}" for name in THEORY_INSTANCES] + [
    "slopes", "bounds", "huber", "huber_informative", "rate", "transient", "lemma2_ratio", "thresholds", "complexity"]
# The empirical rows read the benchmark tables the design names (declared inputs; none: not evaluated):
# one table, or one per protocol (rows 8a-<name> .. 8f-<name>; each table's
# screened_datasets.csv beside it feeds the signal screens its manifest.json declares), with the
# criteria of the configuration
# files that made them (their claims: sections). Tables are read from the working directory (the
# run's), configuration files from the repository.
THEORY_RESULTS_TABLES, _RESULTS_CONFIGURATIONS = empirical_inputs(_THEORY)
THEORY_RESULTS_CONFIGURATIONS = [os.path.relpath(os.path.join(workflow.basedir, path))
                                 for path in _RESULTS_CONFIGURATIONS]
THEORY_DATA = [f"{THEORY_OUT}/{name}.csv"
               for name in ("convergence", "problems", "summary", "rate", "rate_v2", "rate_summary", "huber", "huber_problems",
                            "huber_summary", "huber_informative", "huber_informative_problems",
                            "huber_informative_summary", "offset_data", "offset_data_summary", "complexity",
                            "complexity_v2", "datasets")]
# The offline mirror Table 2 is counted against: config["theory"]["mirror"] when given (a working tree
# whose neighbour is not the mirror), else the design's, relative to the repository. A folder outside
# the workflow's files: a parameter, not an input; absent, its datasets read "needs the mirror".
THEORY_MIRROR = config.get("theory", {}).get("mirror") or os.path.relpath(
    os.path.join(workflow.basedir, _THEORY["checks"]["table2"]["mirror"]))


rule theory:
    input:
        f"{THEORY_OUT}/manifest.json",


# The studies depend on their own section of the design, not on the whole file: naming the
# reproduction's table in the empirical section reruns the ledger, not hours of studies. A
# section's verdict criteria are read by the ledger only, so they are left out of its study's params.
def _study_section(path):
    section = _THEORY
    for part in path.split("."):
        section = section[part]
    return {key: value for key, value in section.items() if key != "criteria"}


rule theory_convergence:
    params:
        design=THEORY_DESIGN,
        section=_study_section("convergence"),
    output:
        records=f"{THEORY_OUT}/convergence.csv",
        problems=f"{THEORY_OUT}/problems.csv",
    threads: 2
    log:
        "results/theory/logs/convergence.log",
    benchmark:
        "results/theory/benchmarks/convergence.tsv"
    script:
        "../scripts/theory_convergence.py"


# The rate study runs the convergence section's primary grid with its own seeds and checkpoints.
rule theory_rate:
    params:
        design=THEORY_DESIGN,
        grid=_study_section("convergence"),
        section=_study_section("rate"),
        study="rate",
    output:
        records=f"{THEORY_OUT}/rate.csv",
    threads: 2
    log:
        "results/theory/logs/rate.log",
    benchmark:
        "results/theory/benchmarks/rate.tsv"
    script:
        "../scripts/theory_rate.py"


# Theorem 1 in its own setting: the Huberised loss, on the convergence section's instances.
rule theory_huber:
    params:
        design=THEORY_DESIGN,
        grid=_study_section("convergence"),
        section=_study_section("huber"),
        study="huber",
    output:
        records=f"{THEORY_OUT}/huber.csv",
        problems=f"{THEORY_OUT}/huber_problems.csv",
    threads: 2
    log:
        "results/theory/logs/huber.log",
    benchmark:
        "results/theory/benchmarks/huber.tsv"
    script:
        "../scripts/theory_convergence.py"


# Row O with a data-based offset: the primary grid under step_offset="auto-data".
rule theory_offset_data:
    params:
        design=THEORY_DESIGN,
        grid=_study_section("convergence"),
        section=_study_section("offset_data"),
    output:
        records=f"{THEORY_OUT}/offset_data.csv",
    threads: 2
    log:
        "results/theory/logs/offset_data.log",
    benchmark:
        "results/theory/benchmarks/offset_data.tsv"
    script:
        "../scripts/theory_offset_data.py"


rule theory_complexity:
    params:
        design=THEORY_DESIGN,
        section=_study_section("complexity"),
        study="complexity",
    output:
        records=f"{THEORY_OUT}/complexity.csv",
    # Timings need the machine to themselves: every core the run was given (--cores), so that no other
    # job runs beside them. Commands that name no total (--unlock, --report, a cluster executor) get 1
    # instead of Snakemake's "Workflow requires a total number of cores" error.
    threads: workflow.resource_settings.cores or 1
    log:
        "results/theory/logs/complexity.log",
    benchmark:
        "results/theory/benchmarks/complexity.tsv"
    script:
        "../scripts/theory_complexity.py"


# Design version 2 (the design's v2 section): each study reruns with the criteria fixed there before its run.
rule theory_rate_v2:
    params:
        design=THEORY_DESIGN,
        grid=_study_section("convergence"),
        section=_study_section("v2.rate"),
        study="v2.rate",
    output:
        records=f"{THEORY_OUT}/rate_v2.csv",
    threads: 2
    log:
        "results/theory/logs/rate_v2.log",
    benchmark:
        "results/theory/benchmarks/rate_v2.tsv"
    script:
        "../scripts/theory_rate.py"


# Theorem 1 where its bound is below the error of f = 0.
rule theory_huber_informative:
    params:
        design=THEORY_DESIGN,
        grid=_study_section("convergence"),
        section=_study_section("v2.huber_informative"),
        study="v2.huber_informative",
    output:
        records=f"{THEORY_OUT}/huber_informative.csv",
        problems=f"{THEORY_OUT}/huber_informative_problems.csv",
    threads: 2
    log:
        "results/theory/logs/huber_informative.log",
    benchmark:
        "results/theory/benchmarks/huber_informative.tsv"
    script:
        "../scripts/theory_convergence.py"


# Table 1 v2: every complexity sweep again, with fresh repeats (the machine to itself, as theory_complexity).
rule theory_complexity_v2:
    params:
        design=THEORY_DESIGN,
        sizes=_study_section("complexity"),
        section=_study_section("v2.complexity"),
        study="v2.complexity",
    output:
        records=f"{THEORY_OUT}/complexity_v2.csv",
    threads: workflow.resource_settings.cores or 1
    log:
        "results/theory/logs/complexity_v2.log",
    benchmark:
        "results/theory/benchmarks/complexity_v2.tsv"
    script:
        "../scripts/theory_complexity.py"


# Every dataset the suite can read, counted as the project reads it: the ledger reads this file, never the mirror.
rule theory_datasets:
    params:
        mirror=THEORY_MIRROR,
    output:
        facts=f"{THEORY_OUT}/datasets.csv",
    log:
        "results/theory/logs/datasets.log",
    benchmark:
        "results/theory/benchmarks/datasets.tsv"
    script:
        "../scripts/theory_datasets.py"


rule theory_ledger:
    input:
        design=THEORY_DESIGN,
        convergence=f"{THEORY_OUT}/convergence.csv",
        problems=f"{THEORY_OUT}/problems.csv",
        rate=f"{THEORY_OUT}/rate.csv",
        rate_v2=f"{THEORY_OUT}/rate_v2.csv",
        huber=f"{THEORY_OUT}/huber.csv",
        huber_problems=f"{THEORY_OUT}/huber_problems.csv",
        huber_informative=f"{THEORY_OUT}/huber_informative.csv",
        huber_informative_problems=f"{THEORY_OUT}/huber_informative_problems.csv",
        offset_data=f"{THEORY_OUT}/offset_data.csv",
        complexity_v2=f"{THEORY_OUT}/complexity_v2.csv",
        datasets=f"{THEORY_OUT}/datasets.csv",
        results_table=THEORY_RESULTS_TABLES,
        results_configuration=THEORY_RESULTS_CONFIGURATIONS,
    output:
        md=f"{THEORY_OUT}/claims_ledger.md",
        csv=f"{THEORY_OUT}/claims_ledger.csv",
        summary=f"{THEORY_OUT}/summary.csv",
        rate_summary=f"{THEORY_OUT}/rate_summary.csv",
        huber_summary=f"{THEORY_OUT}/huber_summary.csv",
        huber_informative_summary=f"{THEORY_OUT}/huber_informative_summary.csv",
        offset_data_summary=f"{THEORY_OUT}/offset_data_summary.csv",
    log:
        "results/theory/logs/ledger.log",
    benchmark:
        "results/theory/benchmarks/ledger.tsv"
    script:
        "../scripts/theory_ledger.py"


rule theory_figures:
    input:
        design=THEORY_DESIGN,
        convergence=f"{THEORY_OUT}/convergence.csv",
        summary=f"{THEORY_OUT}/summary.csv",
        huber_summary=f"{THEORY_OUT}/huber_summary.csv",
        huber_informative_summary=f"{THEORY_OUT}/huber_informative_summary.csv",
        rate_summary=f"{THEORY_OUT}/rate_summary.csv",
        complexity_v2=f"{THEORY_OUT}/complexity_v2.csv",
    output:
        expand(f"{THEORY_OUT}/{{name}}.{{ext}}", name=THEORY_FIGURES, ext=["png", "pdf"]),
    log:
        "results/theory/logs/figures.log",
    benchmark:
        "results/theory/benchmarks/figures.tsv"
    script:
        "../scripts/theory_figures.py"


rule theory_manifest:
    input:
        design=THEORY_DESIGN,
        # the empirical rows' tables, hashed as inputs (the tidy data are among the outputs)
        tables=THEORY_RESULTS_TABLES,
        outputs=THEORY_DATA + [f"{THEORY_OUT}/claims_ledger.md", f"{THEORY_OUT}/claims_ledger.csv"]
        + expand(f"{THEORY_OUT}/{{name}}.{{ext}}", name=THEORY_FIGURES, ext=["png", "pdf"]),
    output:
        f"{THEORY_OUT}/manifest.json",
    log:
        "results/theory/logs/manifest.log",
    script:
        "../scripts/theory_manifest.py"
