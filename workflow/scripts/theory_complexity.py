"""Snakemake adapter: the complexity sweeps of the design -> a tidy CSV."""

import contextlib
import os
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_complexity


def main(smk):
    design = load_design(smk.params.design)
    records = run_complexity(design, progress=lambda name: print(f"complexity: {name} done", file=sys.stderr,
                                                                 flush=True))
    records.to_csv(smk.output.records + ".tmp", index=False)
    os.replace(smk.output.records + ".tmp", smk.output.records)


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
