"""Snakemake adapter: the signal screen's permutation test on one prepared dataset."""

from qs3study.stages.data import signal_screen_job

signal_screen_job(snakemake)  # noqa: F821 - injected by Snakemake
