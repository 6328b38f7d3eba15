"""Snakemake adapter: every registry dataset the suite can read, counted -> the dataset facts' tidy file."""

import contextlib

from qs3study.datasets.registry import DATASETS
from qs3study.files import write_frame
from qs3study.theory.dataset_facts import dataset_facts


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    write_frame(snakemake.output.facts, dataset_facts(DATASETS, snakemake.params.mirror), index=False)  # noqa: F821
