"""Snakemake adapter: fetch one dataset file and record where it came from and its sha256."""

from qs3study.stages.data import download_job

download_job(snakemake)  # noqa: F821 - injected by Snakemake
