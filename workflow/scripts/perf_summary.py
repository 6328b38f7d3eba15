"""Snakemake adapter: run the side-by-side performance measurements, write and print the summary table."""

import csv
import os
import sys
from pathlib import Path

if "snakemake" in globals():
    # The repository root first, so that `baselines` (imported lazily by the crossover) is this checkout's.
    sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1]))  # noqa: F821

from qs3orao import _perf  # noqa: E402
from qs3study.time_to_accuracy import time_to_accuracy_rows  # noqa: E402


def summary_rows(settings, figure_paths=()):
    """Every measurement of ``qs3orao._perf`` and the time to accuracy, in the order of the summary table."""
    seed = settings["seed"]
    rows = _perf.speedup_vs_reference(**settings["reference"], seed=seed)
    rows += _perf.fit_over_floor(**settings["floor"], seed=seed)
    rows += _perf.crossover_unlabeled(**settings["crossover"], seed=seed)
    rows += _perf.throughput_vs_gemm(**settings["throughput"])
    rows += time_to_accuracy_rows(**settings["time_to_accuracy"], figure_paths=figure_paths)
    return rows


def write_summary(rows, path):
    """Write ``metric,value,detail`` to ``path`` through a temporary file, so no partial file is left."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.partial"
    with open(partial, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["metric", "value", "detail"])
        writer.writerows((metric, f"{value:.6g}", detail) for metric, value, detail in rows)
    os.replace(partial, path)


if __name__ == "__main__" and "snakemake" in globals():
    with open(snakemake.log[0], "w") as log:  # noqa: F821
        sys.stderr = log
        rows = summary_rows(snakemake.params.settings, [snakemake.output.time_to_accuracy])  # noqa: F821
        write_summary(rows, snakemake.output[0])  # noqa: F821
    with open(snakemake.output[0]) as table:  # noqa: F821
        print(table.read(), end="")
