"""Snakemake adapter: the deterministic checks, the studies' data and the design -> the claims ledger."""

import contextlib

from qs3study.claims.assemble import assemble_ledger


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    assemble_ledger(snakemake.input, snakemake.output)  # noqa: F821
