"""Snakemake adapter: the figures of the claims ledger."""

import contextlib

from qs3study.claims.assemble import draw_figures


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    draw_figures(snakemake.input, snakemake.output)  # noqa: F821
