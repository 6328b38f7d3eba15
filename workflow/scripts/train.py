"""Snakemake adapter: fit one method on each trial of one (dataset, unlabeled size) and score the unlabeled rows."""

from qs3study.stages.training import train_job

train_job(snakemake)  # noqa: F821 - injected by Snakemake
