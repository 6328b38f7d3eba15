"""The paper's Figures 2 and 3 and the AUC table, drawn from the tidy results table."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from qs3study.files import atomic_path, save_figure  # noqa: E402
from qs3study.runtime import setup_logging  # noqa: E402
from qs3study.stages.tables import auc_summary, one_draw, read_results, summary_markdown  # noqa: E402

MARKERS = "osD^P*hp<>H"
"""Method markers; none is a marker of ``UNFINISHED`` (``x``, ``v``) or of the budget stop (``x``)."""
TITLE_WIDTH = 28
"""Characters per line of a panel title (longer ones wrap, so that neighbouring titles do not collide)."""
STYLE = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
    "savefig.dpi": 200, "pdf.fonttype": 42,
}


def method_styles(methods):
    """A colour and marker per method label, stable across figures (colour-blind-safe palette)."""
    colours = plt.get_cmap("tab10").colors
    return {m: {"color": colours[i % 10], "marker": MARKERS[i % len(MARKERS)]} for i, m in enumerate(methods)}


def _title(text):
    return "\n".join(textwrap.wrap(text, TITLE_WIDTH)) or text


MAX_X_TICKS = 5


def _compact(value):
    """``1500`` -> ``1.5k``, ``16000`` -> ``16k``: short tick labels."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.0f}{suffix}" if value >= 10 * size else f"{value / size:.2g}{suffix}"
    return f"{value:g}"


def size_ticks(ax, sizes):
    """The x ticks of a log axis at the panel's sizes (at most :data:`MAX_X_TICKS`), in short labels.

    Matplotlib's log ticks label every minor tick of a range under a decade ("2×10³ 3×10³4×10³"),
    which collide; the sizes themselves, thinned, never do.
    """
    sizes = np.unique(np.asarray(sizes, dtype=float))
    logs = np.log10(sizes)
    gap = (logs[-1] - logs[0]) / (MAX_X_TICKS + 1) if sizes.size > 1 else 0.0
    kept = [sizes.size - 1]  # the largest size (often "all") is kept; others only when not too close
    for i in range(sizes.size - 2, -1, -1):
        if logs[kept[-1]] - logs[i] >= gap:
            kept.append(i)
    sizes = sizes[sorted(kept)]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(sizes))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([_compact(v) for v in sizes]))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _grid(n_panels, ncols, width=3.0, height=2.6):
    ncols = min(ncols, n_panels)
    nrows = math.ceil(n_panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def save(fig, paths):
    """Save one figure under each of ``paths`` (format from the extension), atomically, and close it."""
    for path in paths:
        save_figure(fig, path, bbox_inches="tight")
    plt.close(fig)


UNFINISHED = {"out_of_memory_budget": "x", "failed": "v"}
"""Status -> marker of the points Figure 2 marks on a panel's bottom edge."""


def unfinished_points(rows):
    """The rows of ``UNFINISHED`` statuses with their x position: unlabeled rows, else the size, else the pool.

    A point that failed before its split knows only its size token; ``all`` is
    placed at the largest unlabeled count of the dataset's rows.
    """
    pool = rows["n_unlabeled"].max()
    numeric = pd.to_numeric(rows["size"].where(rows["size"] != "all"), errors="coerce")
    x = rows["n_unlabeled"].fillna(numeric).fillna(pool)
    out = rows.assign(x=x)
    return out[out["status"].isin(list(UNFINISHED)) & out["x"].notna()]


def _mark_unfinished(ax, rows, styles):
    points = unfinished_points(rows)
    bottom = ax.get_xaxis_transform()  # x in data, y in axes coordinates
    for (method, status), group in points.groupby(["method", "status"]):
        if method in styles:
            ax.plot(group["x"], np.full(len(group), 0.03), transform=bottom, ls="none", ms=6, mew=1.5,
                    marker=UNFINISHED[status], color=styles[method]["color"], clip_on=False)


def time_vs_unlabeled(table, datasets, labels, paths, titles=None):
    """Figure 2: training time against the number of unlabeled rows, one panel per dataset.

    Lines join the mean fit time over finished trials (error bars: min to
    max). A method whose fit exceeded its memory budget at some size gets a
    cross at that size, at the height of its last finished point, joined by a
    dotted line: the paper's stopping lines. Every point that did not finish,
    stopped by the budget or failed, is also marked on the panel's bottom edge
    at its size (``x`` and ``v``), so none is silently missing; ``beyond_pool``
    points (sizes over the rows loaded) were never run and are not drawn.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table.
    datasets : list of str
        Datasets of the sweep, one panel each.
    labels : dict
        Method -> display name, in display order.
    paths : list of str
        Output files.
    titles : dict, optional
        Dataset -> panel title (default: its name).
    """
    titles = titles or {}
    styles = method_styles(list(labels))
    with plt.rc_context(STYLE):
        fig, axes = _grid(len(datasets), 4)
        for ax, dataset in zip(axes, datasets):
            _mark_unfinished(ax, table[table["dataset"] == dataset], styles)
            rows = table[(table["dataset"] == dataset) & table["n_unlabeled"].notna()]
            for method, label in labels.items():
                runs = rows[rows["method"] == method]
                ok = runs[runs["status"] == "ok"].groupby("n_unlabeled")["fit_time"]
                if ok.ngroups:
                    mean = ok.mean()
                    ax.errorbar(mean.index, mean.values, yerr=[mean - ok.min(), ok.max() - mean], label=label,
                                capsize=2, lw=1.2, ms=4, **styles[method])
                stopped = runs[runs["status"] == "out_of_memory_budget"]["n_unlabeled"]
                if len(stopped) and ok.ngroups:
                    last = mean.index.max()
                    first_stop = stopped[stopped > last].min() if (stopped > last).any() else stopped.min()
                    ax.plot([last, first_stop], [mean[last], mean[last]], ls=":", color=styles[method]["color"])
                    ax.plot([first_stop], [mean[last]], marker="x", ms=8, mew=2, ls="none",
                            color=styles[method]["color"])
            title = _title(titles.get(dataset, dataset))
            ax.set(xlabel="unlabeled rows", ylabel="training time (s)")
            if not rows["fit_time"].where(rows["status"] == "ok").gt(0).any():
                # Nothing to put on log axes: say so rather than draw (or fail on) empty log scales.
                ax.set_title(f"{title}\n(no finished run)")
                ax.text(0.5, 0.5, "every point failed or\nwas stopped (see results.csv)", ha="center",
                        va="center", transform=ax.transAxes, fontsize=8)
                ax.set_yticks([])
                continue
            ax.set(xscale="log", yscale="log", title=title)
            size_ticks(ax, table.loc[table["dataset"] == dataset, "n_unlabeled"].dropna())
        handles, names = [], []
        for ax in axes:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
        handles.append(plt.Line2D([], [], marker="x", ls=":", color="black", mew=2))
        names.append("stopped: memory budget exceeded")
        handles.append(plt.Line2D([], [], marker=UNFINISHED["failed"], ls="none", color="black"))
        names.append("failed (bottom edge)")
        fig.legend(handles, names, loc="lower center", ncol=min(len(names), 4), bbox_to_anchor=(0.5, 1.0),
                   frameon=False)
        fig.tight_layout()
        save(fig, paths)


def auc_boxplot(table, datasets, labels, paths, titles=None):
    """Figure 3: box plots of the unlabeled rows' ordinal AUC per dataset and method.

    Uses the rows of the common comparison size; every trial is also drawn as
    a dot, since boxes over a few trials hide little.

    Parameters
    ----------
    table : pandas.DataFrame
    datasets : list of str
    labels : dict
        Method -> display name, in display order.
    paths : list of str
    titles : dict, optional
        Dataset -> panel title (default: its name).
    """
    titles = titles or {}
    styles = method_styles(list(labels))
    rows = table[table["comparison"].astype(bool) & (table["status"] == "ok")]
    with plt.rc_context(STYLE):
        fig, axes = _grid(len(datasets), 4, width=3.2)
        for ax, dataset in zip(axes, datasets):
            per = rows[rows["dataset"] == dataset]
            data = [per.loc[per["method"] == m, "auc"].to_numpy() for m in labels]
            positions = np.arange(len(labels))
            present = [i for i, values in enumerate(data) if len(values)]
            if not present:
                ax.set_title(f"{_title(titles.get(dataset, dataset))}\n(no finished run)")
                continue
            boxes = ax.boxplot([data[i] for i in present], positions=positions[present], widths=0.6,
                               patch_artist=True, medianprops={"color": "black"}, showfliers=False)
            for patch, i in zip(boxes["boxes"], present):
                patch.set(facecolor=styles[list(labels)[i]]["color"], alpha=0.45)
            for i in present:
                jitter = np.linspace(-0.12, 0.12, len(data[i])) if len(data[i]) > 1 else np.zeros(1)
                ax.plot(i + jitter, data[i], ls="none", marker=".", ms=4, color="black")
            n_unlabeled = per["n_unlabeled"].max()
            n_trials = per.groupby("method")["trial"].nunique()
            trials = f", {n_trials.min()}-{n_trials.max()} trials" if n_trials.min() != n_trials.max() else \
                f", {n_trials.max()} trials"
            ax.set_title(f"{_title(titles.get(dataset, dataset))}\n{int(n_unlabeled)} unlabeled{trials}")
            ax.set_xticks(positions, list(labels.values()), rotation=35, ha="right")
            ax.set_ylabel("ordinal AUC (unlabeled rows)")
        fig.tight_layout()
        save(fig, paths)


def figure_job(smk):
    """Snakemake job of rules ``figure_time``, ``figure_auc`` and ``auc_table``, chosen by the rule's name.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    setup_logging(smk.log[0])
    if smk.rule == "publish_results":  # a byte copy: the committed table is the run's own
        with atomic_path(smk.output[0]) as tmp:
            tmp.write_bytes(Path(smk.input.table).read_bytes())
        return
    table = one_draw(read_results(smk.input.table))
    labels = smk.params.labels
    titles = smk.params.get("titles") or {}
    if smk.rule == "figure_time":
        time_vs_unlabeled(table, smk.params.datasets, labels, smk.output, titles)
    elif smk.rule == "figure_auc":
        auc_boxplot(table, smk.params.datasets, labels, smk.output, titles)
    else:
        summary = auc_summary(table, smk.params.reference, list(labels))
        with atomic_path(smk.output.csv) as tmp:
            summary.to_csv(tmp, index=False)
        with atomic_path(smk.output.md) as tmp:
            tmp.write_text(summary_markdown(summary, smk.params.reference, labels,
                                            roles=smk.params.get("roles"), titles=titles))
