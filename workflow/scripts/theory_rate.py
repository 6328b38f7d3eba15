"""Snakemake adapter: the rate study of the design -> tidy records."""

import contextlib
import os
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_rate


def main(smk):
    design = load_design(smk.params.design)

    def progress(done, total):
        print(f"rate: {done}/{total} runs", file=sys.stderr, flush=True)

    records = run_rate(design, n_jobs=smk.threads, progress=progress)
    records.to_csv(smk.output.records + ".tmp", index=False, float_format="%.6g")
    os.replace(smk.output.records + ".tmp", smk.output.records)


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
