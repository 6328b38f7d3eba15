"""Snakemake adapter: grid-edge hits per dataset and method from the tuning records."""

from qs3study.stages.tuning_records import tuning_summary_job

tuning_summary_job(snakemake)  # noqa: F821 - injected by Snakemake
