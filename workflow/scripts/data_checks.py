"""Snakemake adapter: the data-validity screen's rows of every selected dataset, as one CSV."""

from qs3study.stages.data import data_checks_job

data_checks_job(snakemake)  # noqa: F821 - injected by Snakemake
