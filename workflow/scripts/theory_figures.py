"""Snakemake adapter: the figures of the claims ledger."""

import contextlib
import os

from qs3study.claims.assemble import draw_figures


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    inputs = snakemake.input  # noqa: F821
    stems = {os.path.splitext(os.path.basename(path))[0]: os.path.splitext(path)[0]
             for path in snakemake.output}  # noqa: F821
    draw_figures(design=inputs.design, convergence=inputs.convergence, summary=inputs.summary,
                 huber_summary=inputs.huber_summary, huber_informative_summary=inputs.huber_informative_summary,
                 rate_summary=inputs.rate_summary, complexity_v2=inputs.complexity_v2, stems=stems)
