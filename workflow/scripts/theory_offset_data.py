"""Snakemake adapter: row O-data's study of the design (the primary grid under step_offset="auto-data") -> tidy
records (its problems are the convergence study's)."""

import contextlib
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_offset_data
from qs3study.files import write_frame


def main(smk):
    def progress(done, total):
        print(f"offset_data: {done}/{total} runs", file=sys.stderr, flush=True)

    records = run_offset_data(load_design(smk.params.design), n_jobs=smk.threads, progress=progress)
    write_frame(smk.output.records, records, index=False, float_format="%.6g")


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
