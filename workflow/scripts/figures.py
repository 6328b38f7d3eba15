"""Snakemake adapter: draw Figure 2 or Figure 3, or write the AUC table, from the results table."""

import sys


def main(smk):
    """Dispatch on the rule name: ``figure_time``, ``figure_auc`` or ``auc_table``.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    import bench
    import plots
    import tables

    bench.setup_logging(smk.log[0])
    table = tables.read_results(smk.input.table)
    labels = smk.params.labels
    if smk.rule == "figure_time":
        plots.time_vs_unlabeled(table, smk.params.datasets, labels, smk.output)
    elif smk.rule == "figure_auc":
        plots.auc_boxplot(table, smk.params.datasets, labels, smk.output)
    else:
        summary = tables.auc_summary(table, smk.params.reference, list(labels))
        with bench.atomic_path(smk.output.csv) as tmp:
            summary.to_csv(tmp, index=False)
        with bench.atomic_path(smk.output.md) as tmp:
            tmp.write_text(tables.summary_markdown(summary, smk.params.reference, labels))


if __name__ == "__main__":
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821 - injected by Snakemake
    main(snakemake)  # noqa: F821
