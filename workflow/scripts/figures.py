"""Snakemake adapter: draw Figure 2 or Figure 3, or write the AUC table, from the results table."""

from qs3study.stages.figures import figure_job

figure_job(snakemake)  # noqa: F821 - injected by Snakemake
