"""Snakemake adapter: the rate study of the design -> tidy records."""

import contextlib
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_rate
from qs3study.files import write_frame


def main(smk):
    design = load_design(smk.params.design)

    section = smk.params.study

    def progress(done, total):
        print(f"{section}: {done}/{total} runs", file=sys.stderr, flush=True)

    records = run_rate(design, n_jobs=smk.threads, progress=progress, section=section)
    write_frame(smk.output.records, records, index=False, float_format="%.6g")


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
