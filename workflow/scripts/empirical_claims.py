"""Snakemake adapter: the verdicts of the empirical claims from this run's results table."""

from qs3study.claims.empirical import claims_job

claims_job(snakemake)  # noqa: F821 - injected by Snakemake
