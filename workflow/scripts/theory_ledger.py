"""Snakemake adapter: the deterministic checks, the studies' data and the design -> the claims ledger."""

import contextlib

from qs3study.claims.assemble import assemble_ledger


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    inputs, outputs = snakemake.input, snakemake.output  # noqa: F821
    assemble_ledger(design=inputs.design, convergence=inputs.convergence, problems=inputs.problems, rate=inputs.rate,
                    rate_v2=inputs.rate_v2, huber=inputs.huber, huber_problems=inputs.huber_problems,
                    huber_informative=inputs.huber_informative,
                    huber_informative_problems=inputs.huber_informative_problems, offset_data=inputs.offset_data,
                    complexity_v2=inputs.complexity_v2, datasets=inputs.datasets,
                    results_tables=list(inputs.results_table),
                    results_configurations=list(inputs.get("results_configuration", [])),
                    md=outputs.md, csv=outputs.csv, summary=outputs.summary,
                    rate_summary=outputs.rate_summary, huber_summary=outputs.huber_summary,
                    huber_informative_summary=outputs.huber_informative_summary,
                    offset_data_summary=outputs.offset_data_summary)
