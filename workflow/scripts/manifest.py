"""Snakemake adapter: write the manifest saying how the figures were made."""

from qs3study.provenance import manifest_job

manifest_job(snakemake)  # noqa: F821 - injected by Snakemake
