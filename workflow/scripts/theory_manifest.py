"""Snakemake adapter: the manifest of the theory outputs."""

import contextlib
import os

from qs3study.claims.manifest import theory_manifest, write_manifest


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    write_manifest(snakemake.output[0], theory_manifest(  # noqa: F821
        design_path=os.path.relpath(snakemake.input.design), outputs=list(snakemake.input.outputs),  # noqa: F821
        root=os.getcwd(), command="snakemake -c2 theory", inputs=list(snakemake.input.tables)))  # noqa: F821
