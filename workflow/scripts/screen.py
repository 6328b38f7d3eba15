"""Snakemake adapter: load every dataset of ``screen:`` and list which the loader refuses, and why."""

from qs3study.stages.data import screen_job

screen_job(snakemake)  # noqa: F821 - injected by Snakemake
