"""Snakemake adapter: preprocess one dataset into memory-mappable arrays."""

from qs3study.stages.data import prepare_job

prepare_job(snakemake)  # noqa: F821 - injected by Snakemake
