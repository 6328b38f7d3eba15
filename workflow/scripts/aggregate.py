"""Snakemake adapter: join every trial's result file into the tidy results table."""

from qs3study.stages.tables import aggregate_job

aggregate_job(snakemake)  # noqa: F821 - injected by Snakemake
