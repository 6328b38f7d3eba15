# Theory stage: the claims ledger (issue 6).  Settings: config["theory"] with keys
# "convergence" and "complexity" (defaults in workflow/scripts/theory_*.py).
import os

THEORY = config.get("theory", {})
THEORY_FIGURES = ["convergence", "slopes", "lemma2_ratio", "thresholds", "complexity"]
RESULTS_TABLE = "results/tables/results.csv"


rule theory:
    input:
        "figures/claims_ledger.md",
        "figures/claims_ledger.csv",
        expand("figures/theory_{name}.{ext}", name=THEORY_FIGURES, ext=["png", "pdf"]),


rule theory_convergence:
    output:
        records="results/theory/convergence.csv",
        meta="results/theory/convergence_meta.json",
    params:
        settings=THEORY.get("convergence", {}),
    threads: 2
    log:
        "results/theory/logs/convergence.log",
    benchmark:
        "results/theory/benchmarks/convergence.tsv"
    script:
        "../scripts/theory_convergence.py"


rule theory_complexity:
    output:
        records="results/theory/complexity.csv",
    params:
        settings=THEORY.get("complexity", {}),
    # Timings need the machine to themselves.
    threads: workflow.cores
    log:
        "results/theory/logs/complexity.log",
    benchmark:
        "results/theory/benchmarks/complexity.tsv"
    script:
        "../scripts/theory_complexity.py"


rule theory_ledger:
    input:
        convergence="results/theory/convergence.csv",
        convergence_meta="results/theory/convergence_meta.json",
        complexity="results/theory/complexity.csv",
        # Claim 8 reads the benchmark table when the main pipeline has produced it.
        results_table=lambda wildcards: [RESULTS_TABLE] if os.path.exists(RESULTS_TABLE) else [],
    output:
        md="figures/claims_ledger.md",
        csv="figures/claims_ledger.csv",
        summary="results/theory/convergence_summary.csv",
    log:
        "results/theory/logs/ledger.log",
    benchmark:
        "results/theory/benchmarks/ledger.tsv"
    script:
        "../scripts/theory_ledger.py"


rule theory_figures:
    input:
        convergence="results/theory/convergence.csv",
        summary="results/theory/convergence_summary.csv",
        complexity="results/theory/complexity.csv",
    output:
        **{name: f"figures/theory_{stem}.png" for name, stem in
           [("convergence", "convergence"), ("slopes", "slopes"), ("lemma2", "lemma2_ratio"),
            ("thresholds", "thresholds"), ("complexity", "complexity")]},
        pdfs=expand("figures/theory_{name}.pdf", name=THEORY_FIGURES),
    log:
        "results/theory/logs/figures.log",
    benchmark:
        "results/theory/benchmarks/figures.tsv"
    script:
        "../scripts/theory_figures.py"
