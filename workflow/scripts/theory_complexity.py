"""Snakemake adapter: the complexity sweeps of the design -> a tidy CSV."""

import contextlib
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_complexity
from qs3study.files import write_frame


def main(smk):
    design = load_design(smk.params.design)
    section = smk.params.study
    records = run_complexity(design, section=section,
                             progress=lambda name: print(f"{section}: {name} done", file=sys.stderr, flush=True))
    write_frame(smk.output.records, records, index=False)


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
