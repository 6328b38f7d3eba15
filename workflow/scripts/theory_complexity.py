"""Snakemake adapter: the complexity sweeps of claim 7 -> a tidy CSV."""

import contextlib
import os

import pandas as pd

from qs3orao.theory.complexity import run_sweep

DEFAULTS = {
    "settings": {"literal_n": 200, "engine_n": 2000, "engine_t": 300, "m": 8},
    "sizes": {
        "literal_time_vs_t": [25, 50, 100, 200],
        "engine_time_vs_t": [200, 400, 800, 1600],
        "engine_time_vs_n": [1000, 2000, 4000, 8000],
        "engine_memory_vs_n": [1000, 2000, 4000, 8000],
        "engine_memory_vs_t": [200, 400, 800, 1600],
        "exact_time_vs_n": [500, 1000, 1500, 2500],
        "exact_memory_vs_n": [500, 1000, 1500, 2500],
    },
    "repeats": 2,
}


def main(settings, out_csv):
    solver = {**DEFAULTS["settings"], **settings.get("settings", {})}
    sizes = {**DEFAULTS["sizes"], **settings.get("sizes", {})}
    repeats = settings.get("repeats", DEFAULTS["repeats"])
    records = [r for name, values in sizes.items() for r in run_sweep(name, values, solver, repeats=repeats)]
    pd.DataFrame(records).to_csv(out_csv + ".tmp", index=False)
    os.replace(out_csv + ".tmp", out_csv)


with open(snakemake.log[0], "w") as log, contextlib.redirect_stderr(log):  # noqa: F821
    main(snakemake.params.settings, snakemake.output.records)  # noqa: F821
