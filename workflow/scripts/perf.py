"""Snakemake adapter: run the side-by-side performance measurements, write and print the summary table."""

from qs3study.perf.summary import perf_job

perf_job(snakemake)  # noqa: F821 - injected by Snakemake
