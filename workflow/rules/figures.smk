"""Figure stage: the paper's Figures 2 and 3, the AUC table and the manifest, from the results table."""

from qs3study.claims.empirical import declared_screens

LABELS = {m: method_config(config, m)["label"] for m in METHODS}
CAPTIONS = {m: method_config(config, m)["caption"] for m in METHODS}
# A label that is a registered name takes that name's role (as the claims count it: the best-effort
# protocol's "qs3orao" is the paper's method, run by qs3orao-converged); any other label its method's.
ROLES = {m: METHOD_REGISTRY[m if m in METHOD_REGISTRY else method_config(config, m)["method"]].role for m in METHODS}
RELATIONS = {"paper": "paper", "subset": "subset of a paper dataset", "substitute": "substitute",
             "embedded": "embedded"}
TITLES = {d: f"{d} ({RELATIONS[dataset_options(d)['relation']]})" if dataset_options(d).get("relation") else d
          for d in SELECTED}
SCREEN = config.get("screen") or {}
CLAIMS = config.get("claims") or {}
SIGNAL_LEVEL = CLAIMS.get("signal_level")
# The signal screens: the permutation screen (every selected dataset's signal_null check of
# data_checks.csv) and the fixed level over the tuning records, each when declared.
SIGNAL_SCREENS = declared_screens(config["data_checks"]["signal_permutations"], SIGNAL_LEVEL)
PERMUTATION_SCREEN = "permutation" in SIGNAL_SCREENS
# Tuning records: every one of the design (grid-edge table), trial 0's of every dataset (signal screen).
TUNE_RECORDS = sorted({
    f"{RESULTS}/tuning/{d}/{m}/trial{t if config['tuning']['per'] == 'trial' else 0}.json"
    for d, m, _, t in design() if method_config(config, m)["grid"] is not None})
SCREEN_RECORDS = [path for path in TUNE_RECORDS if path.endswith("/trial0.json")
                  and method_config(config, Path(path).parent.name)["signal_screen"]]
TUNE_BENCHMARKS = sorted({
    f"{BENCHMARKS}/tune/{d}/{m}/trial{t if config['tuning']['per'] == 'trial' else 0}.tsv"
    for d, m, _, t in design() if method_config(config, m)["grid"] is not None})
# The tuning draws' searches (tuning.draws), counted in the manifest's times beside the single tuning's.
DRAW_SEARCHES = sorted({(d, *tuning_source(m, t), draw) for d, m, _, t, draw in draw_design()})
DRAW_TUNE_RECORDS = [expand(rules.tune_draw.output[0], dataset=d, method=m, trial=t, draw=draw)[0]
                     for d, m, t, draw in DRAW_SEARCHES]
DRAW_TUNE_BENCHMARKS = [f"{BENCHMARKS}/tune/{d}/{m}/draw{draw}/trial{t}.tsv" for d, m, t, draw in DRAW_SEARCHES]


rule publish_results:
    """The tidy results table beside the figures it feeds (one row per dataset, method, size, trial)."""
    input:
        table=rules.aggregate.output.csv,
    output:
        report(f"{FIGURES}/results.csv", caption="../report/results.rst", category="Tables"),
    log:
        f"{LOGS}/figures/publish_results.log",
    localrule: True
    script:
        "../scripts/figures.py"


SCREENED = SCREEN or SIGNAL_SCREENS


rule tuning_summary:
    """Tuned values on an edge of what was searched, counted per dataset and method (grid_edges.csv, .md)."""
    input:
        records=TUNE_RECORDS,
    output:
        csv=f"{FIGURES}/grid_edges.csv",
        md=f"{FIGURES}/grid_edges.md",
    params:
        labels=LABELS,
    log:
        f"{LOGS}/figures/tuning_summary.log",
    localrule: True
    script:
        "../scripts/tuning_summary.py"


rule figure_auc_sweep:
    """AUC on the unlabeled rows against their number: mean and band per method (beside Figure 2)."""
    input:
        table=rules.aggregate.output.csv,
    output:
        f"{FIGURES}/fig2b_auc_vs_unlabeled.png",
        f"{FIGURES}/fig2b_auc_vs_unlabeled.pdf",
    params:
        datasets=SWEEP_DATASETS,
        labels=LABELS,
        titles=TITLES,
    log:
        f"{LOGS}/figures/figure_auc_sweep.log",
    localrule: True
    script:
        "../scripts/auc_sweep.py"


rule empirical_claims:
    """The empirical claims' verdicts from this run, by the criteria of its ``claims:`` section."""
    input:
        table=rules.aggregate.output.csv,
        screened=f"{FIGURES}/screened_datasets.csv" if SIGNAL_SCREENS else [],
    output:
        report(f"{FIGURES}/empirical_claims.csv", caption="../report/claims.rst", category="Tables"),
    params:
        criteria=config.get("claims") or {},
        screens=SIGNAL_SCREENS,
    log:
        f"{LOGS}/figures/empirical_claims.log",
    localrule: True
    script:
        "../scripts/empirical_claims.py"


rule screened_datasets:
    """Every dataset of ``screen:``, loaded, with the loader's refusal (or acceptance) and its reason; the signal screens."""
    input:
        records=SCREEN_RECORDS if SIGNAL_LEVEL is not None else [],
        checks=rules.data_checks.output[0] if PERMUTATION_SCREEN else [],
    output:
        f"{FIGURES}/screened_datasets.csv",
    params:
        screen=SCREEN,
        cache_dir=config["data"]["cache_dir"],
        mirror=config["data"]["mirror"],
        seed=PROTOCOL["seed"],
        signal_level=SIGNAL_LEVEL,
        permutation_screen=PERMUTATION_SCREEN,
        signal_alpha=config["data_checks"]["signal_alpha"],
        datasets=SELECTED,
    log:
        f"{LOGS}/figures/screened_datasets.log",
    localrule: True
    script:
        "../scripts/screen.py"


rule figure_time:
    """Figure 2: training time against unlabeled rows, memory-budget stops marked."""
    input:
        table=rules.aggregate.output.csv,
    output:
        report(f"{FIGURES}/fig2_time_vs_unlabeled.png", caption="../report/fig2.rst", category="Figures"),
        f"{FIGURES}/fig2_time_vs_unlabeled.pdf",
    params:
        datasets=SWEEP_DATASETS,
        labels=LABELS,
        captions=CAPTIONS,
        titles=TITLES,
    log:
        f"{LOGS}/figures/figure_time.log",
    localrule: True
    script:
        "../scripts/figures.py"


rule figure_auc:
    """Figure 3: box plots of the unlabeled rows' ordinal AUC per dataset and method."""
    input:
        table=rules.aggregate.output.csv,
    output:
        report(f"{FIGURES}/fig3_auc_boxplot.png", caption="../report/fig3.rst", category="Figures"),
        f"{FIGURES}/fig3_auc_boxplot.pdf",
    params:
        datasets=SELECTED,
        labels=LABELS,
        titles=TITLES,
    log:
        f"{LOGS}/figures/figure_auc.log",
    localrule: True
    script:
        "../scripts/figures.py"


rule auc_table:
    """Mean and standard deviation of AUC per dataset and method, with paired tests against the reference."""
    input:
        table=rules.aggregate.output.csv,
    output:
        md=report(f"{FIGURES}/auc_table.md", caption="../report/auc_table.rst", category="Tables"),
        csv=report(f"{FIGURES}/auc_table.csv", caption="../report/auc_table.rst", category="Tables"),
    params:
        labels=LABELS,
        reference=PROTOCOL["reference"],
        roles=ROLES,
        titles=TITLES,
    log:
        f"{LOGS}/figures/auc_table.log",
    localrule: True
    script:
        "../scripts/figures.py"


rule manifest:
    """Which configuration, commit, date and data made the figures."""
    input:
        table=rules.aggregate.output.csv,
        figures=[*rules.figure_time.output, *rules.figure_auc.output, *rules.auc_table.output,
                 *rules.publish_results.output, *(rules.screened_datasets.output if SCREENED else []),
                 *rules.data_checks.output,
                 *(rules.tuning_summary.output if TUNE_RECORDS else []), *rules.figure_auc_sweep.output,
                 *(rules.empirical_claims.output if config.get("claims") else [])],
        benchmarks=expand_batches(f"{BENCHMARKS}/train/{BATCH}.tsv") + expand_draws(f"{BENCHMARKS}/train/{DRAW_BATCH}.tsv"),
        tune_benchmarks=TUNE_BENCHMARKS + DRAW_TUNE_BENCHMARKS,
        batches=expand_batches(rules.train.output[0]) + expand_draws(rules.train_draw.output[0]),
        tune_records=TUNE_RECORDS + DRAW_TUNE_RECORDS,
        downloads=expand(rules.download.output[0], dataset=FILE_DATASETS),
        infos=expand(rules.prepare.output.info, dataset=SELECTED),
        X=expand(rules.prepare.output.X, dataset=SELECTED),
        y=expand(rules.prepare.output.y, dataset=SELECTED),
    output:
        report(f"{FIGURES}/manifest.json", caption="../report/manifest.rst", category="Provenance"),
    params:
        root=workflow.basedir,
        kernel_width=PROTOCOL["kernel_width"],
        tuning_per=config["tuning"]["per"],
        figures=lambda wildcards, input: input.figures,
        runs=expand_design(TRIAL_RESULTS) + expand_draws(DRAW_TRIAL_RESULTS),
        batch_records=expand_batches(BATCH_RECORDS) + expand_draws(DRAW_BATCH_RECORDS),
    log:
        f"{LOGS}/figures/manifest.log",
    localrule: True
    script:
        "../scripts/manifest.py"
