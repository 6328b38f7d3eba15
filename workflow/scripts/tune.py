"""Snakemake adapter: cross-validate one method's hyperparameters on one trial's split."""

from qs3study.stages.tuning import tune_job

tune_job(snakemake)  # noqa: F821 - injected by Snakemake
