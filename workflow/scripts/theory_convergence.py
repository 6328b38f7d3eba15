"""Snakemake adapter: a convergence study of the design -> tidy records and the problems' constants.

params.study names the study (convergence, or a Huberised-loss section: huber, v2.huber_informative)."""

import contextlib
import sys

from qs3study.claims.design import load_design
from qs3study.claims.studies import run_convergence, run_huber
from qs3study.files import write_frame


def main(smk):
    design = load_design(smk.params.design)

    study = smk.params.get("study", "convergence")

    def progress(done, total):
        print(f"{study}: {done}/{total} runs", file=sys.stderr, flush=True)

    if study == "convergence":
        records, problems = run_convergence(design, n_jobs=smk.threads, progress=progress)
    else:
        records, problems = run_huber(design, n_jobs=smk.threads, progress=progress, section=study)
    for frame, path in ((records, smk.output.records), (problems, smk.output.problems)):
        write_frame(path, frame, index=False, float_format="%.6g")


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake)  # noqa: F821
