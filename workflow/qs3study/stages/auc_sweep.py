"""AUC on the unlabeled rows against their number (beside the paper's Figure 2): does more unlabeled data help?

One panel per dataset of the sweep: for every method, the mean AUC over the
finished trials at each unlabeled size, with a band from the mean minus to the
mean plus one standard deviation (a single trial gives a point, no band).
"""

from __future__ import annotations

from matplotlib.ticker import NullFormatter

from qs3study.stages.figures import STYLE, _grid, method_styles, plt, save
from qs3study.runtime import setup_logging
from qs3study.stages.tables import one_draw, read_results

__all__ = ["sweep_auc", "auc_vs_unlabeled", "auc_sweep_job"]


def sweep_auc(table, datasets):
    """Mean, standard deviation and count of the AUC per (dataset, method, unlabeled rows), finished trials only.

    Returns
    -------
    pandas.DataFrame
        ``dataset, method, n_unlabeled, auc_mean, auc_std, n_trials``.
    """
    ok = table[(table["status"] == "ok") & table["dataset"].isin(datasets)]
    grouped = ok.groupby(["dataset", "method", "n_unlabeled"])["auc"]
    out = grouped.agg(auc_mean="mean", auc_std="std", n_trials="count").reset_index()
    return out.sort_values(["dataset", "method", "n_unlabeled"], kind="stable").reset_index(drop=True)


def auc_vs_unlabeled(table, datasets, labels, paths, titles=None):
    """Draw AUC against unlabeled rows, mean and +-1 SD band per method, one panel per dataset.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table.
    datasets : list of str
    labels : dict
        Method -> display name, in display order.
    paths : list of path-like
        Output files (format from the extension).
    titles : dict, optional
        Dataset -> panel title.
    """
    titles = titles or {}
    points = sweep_auc(table, datasets)
    styles = method_styles(list(labels))
    with plt.rc_context(STYLE):
        fig, axes = _grid(max(len(datasets), 1), ncols=3, width=3.4, height=2.8)
        for ax, dataset in zip(axes, datasets):
            for method, label in labels.items():
                rows = points[(points["dataset"] == dataset) & (points["method"] == method)]
                if rows.empty:
                    continue
                style = styles[method]
                ax.plot(rows["n_unlabeled"], rows["auc_mean"], marker=style["marker"], color=style["color"],
                        ms=3.5, lw=1.2, label=label)
                band = rows[rows["n_trials"] > 1]
                ax.fill_between(band["n_unlabeled"], band["auc_mean"] - band["auc_std"],
                                band["auc_mean"] + band["auc_std"], color=style["color"], alpha=0.15, lw=0)
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels overlap on short ranges
            ax.set_title(titles.get(dataset, dataset))
            ax.set_xlabel("unlabeled rows")
            ax.set_ylabel("AUC on the unlabeled rows")
        handles, names = axes[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, names, loc="lower center", ncol=min(len(names), 5), frameon=False,
                       bbox_to_anchor=(0.5, -0.02 - 0.03 * ((len(names) - 1) // 5)))
        fig.suptitle("AUC against unlabeled rows (mean over finished trials, band: ±1 SD)")
        fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    save(fig, paths)


def auc_sweep_job(smk):
    """Snakemake job of rule ``figure_auc_sweep``.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    log = setup_logging(smk.log[0])
    table = one_draw(read_results(smk.input.table))
    log.info("%d sweep points", len(sweep_auc(table, smk.params.datasets)))
    auc_vs_unlabeled(table, smk.params.datasets, smk.params.labels, list(smk.output),
                     titles=smk.params.get("titles"))
