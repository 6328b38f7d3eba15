"""Snakemake adapter: the figures of the claims ledger."""

import contextlib

import numpy as np
import pandas as pd

from qs3orao.theory import checks, plots
from qs3orao.theory.bounds import theorem1_bound
from qs3orao.theory.complexity import fit_exponent


def main(inputs, outputs):
    records = pd.read_csv(inputs.convergence)
    summary = pd.read_csv(inputs.summary)
    bounds = {}
    for _, row in summary.iterrows():
        t = np.sort(records.loc[records["product"] == row["product"], "t"].unique())
        bounds[row["product"]] = (t, theorem1_bound(t, row["theta"], row["M"], row["Q1"]))
    plots.save(plots.convergence_figure(records, summary, bounds), outputs.convergence[:-4])
    plots.save(plots.slopes_figure(summary), outputs.slopes[:-4])
    products = np.unique(np.r_[np.geomspace(0.2, 40, 60), np.arange(1, 41)])
    plots.save(plots.lemma2_figure(products, np.unique(np.geomspace(1, 1e4, 80).round())), outputs.lemma2[:-4])
    examples = [("hinge LP: minimiser not unique", *checks.PINNED_HINGE_NOT_UNIQUE),
                ("hinge LP: b_1* = b_2*", *checks.PINNED_HINGE_NOT_STRICT),
                ("squared hinge: not unique", *checks.PINNED_SQUARED_HINGE_NOT_UNIQUE),
                ("logistic: unique, ordered", *checks.PINNED_HINGE_NOT_STRICT[:3], "logistic")]
    plots.save(plots.thresholds_figure(examples), outputs.thresholds[:-4])
    complexity = pd.read_csv(inputs.complexity)
    exponents = {name: fit_exponent(g["size"], g["value"]) for name, g in complexity.groupby("sweep")}
    plots.save(plots.complexity_figure(complexity, exponents), outputs.complexity[:-4])


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake.input, snakemake.output)  # noqa: F821
