"""Snakemake adapter: join every result file and benchmark record into the tidy results table."""

import sys


def main(smk):
    """Write ``results/tables/results.csv`` from the training jobs' outputs.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    import bench
    import tables

    log = bench.setup_logging(smk.log[0])
    table = tables.build_results(smk.input.results, smk.input.benchmarks, smk.params.comparison_sizes)
    log.info("%d rows; status counts:\n%s", len(table), table["status"].value_counts().to_string())
    with bench.atomic_path(smk.output.csv) as tmp:
        table.to_csv(tmp, index=False)


if __name__ == "__main__":
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821 - injected by Snakemake
    main(snakemake)  # noqa: F821
