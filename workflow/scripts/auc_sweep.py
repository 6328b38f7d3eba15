"""Snakemake adapter: AUC against unlabeled rows (mean and band per method), beside Figure 2."""

from qs3study.stages.auc_sweep import auc_sweep_job

auc_sweep_job(snakemake)  # noqa: F821 - injected by Snakemake
