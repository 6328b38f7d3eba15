"""Time at equal accuracy in a run's results: each method's fit time and whether it reaches a target AUC.

Read from a results table of the pipeline (the scale study's ``results.csv``; the columns of
:mod:`qs3study.stages.tables`), per dataset and number of unlabeled rows, over the fits that
finished (status ``ok``):

* the target is the mean AUC of the best exact baseline at that size (M-PNU-AUC or M-SAMULT,
  whichever is higher); where neither ran, the highest mean AUC any method reaches, and the
  table says so (``target_kind``);
* every method gets its median fit time, its mean AUC, and whether that mean reaches the target
  within :data:`TARGET_TOLERANCE` or falls short by how much.

:mod:`qs3study.perf.time_to_accuracy` measures something else: on generated problems, the time
each method needs to come close to the exact ``f*``, searching each method's size knob. Here
nothing is refitted: each method is read at the setting the run tuned.
"""

from __future__ import annotations

import pandas as pd

from qs3study.stages.figures import STYLE, size_ticks, method_styles, save

__all__ = ["TARGET_TOLERANCE", "EXACT", "COLUMNS", "time_at_accuracy", "plot_time_at_accuracy"]

#: How far below the target a mean AUC may be and still reach it: about the spread over trials of the exact
#: baselines' AUC (their standard deviation over the comparison trials of the paper-protocol reproduction has
#: median 0.0054 across datasets), so a method counts as short only by more than the trial-to-trial noise.
TARGET_TOLERANCE = 0.005
#: The exact baselines whose best mean AUC sets the target.
EXACT = ("m-pnu-auc", "m-samult")
COLUMNS = ["dataset", "n_unlabeled", "method", "trials", "median_fit_time", "mean_auc", "target_auc",
           "target_method", "target_kind", "reached", "shortfall"]
PANELS_PER_ROW = 3
_READ = ("dataset", "method", "n_unlabeled", "trial", "status", "fit_time", "auc")


def time_at_accuracy(table, *, tolerance=TARGET_TOLERANCE):
    """Per (dataset, unlabeled rows, method): median fit time, mean AUC and whether it reaches the target.

    Parameters
    ----------
    table : pandas.DataFrame
        A results table of one tuning draw (:func:`qs3study.stages.tables.one_draw`).
    tolerance : float
        A method reaches the target when ``mean_auc >= target_auc - tolerance``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`, sorted by dataset, size and method. ``target_kind`` is
        ``"best exact baseline"`` or ``"highest of any method (no exact baseline ran)"``;
        ``shortfall`` is ``max(0, target_auc - mean_auc)``.

    Raises
    ------
    ValueError
        If columns are missing, ``tolerance`` is negative, no fit finished, or a (dataset, method,
        size, trial) has several rows (several tuning draws).
    """
    missing = [c for c in _READ if c not in table]
    if missing:
        raise ValueError(f"the results table has no {', '.join(missing)}")
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    ok = table[(table["status"] == "ok") & table["n_unlabeled"].notna()]
    if ok.empty:
        raise ValueError("no fit of the results table finished (status ok)")
    keys = ["dataset", "method", "n_unlabeled", "trial"]
    if ok.duplicated(keys).any():
        raise ValueError("the results table has several rows for one (dataset, method, size, trial): read one "
                         "tuning draw (qs3study.stages.tables.one_draw)")
    stats = (ok.groupby(["dataset", "n_unlabeled", "method"])
             .agg(trials=("trial", "size"), median_fit_time=("fit_time", "median"), mean_auc=("auc", "mean"))
             .reset_index())
    rows = []
    for (dataset, size), cell in stats.groupby(["dataset", "n_unlabeled"], sort=True):
        exact = cell[cell["method"].isin(EXACT)].dropna(subset=["mean_auc"])
        source, kind = (exact, "best exact baseline") if not exact.empty else \
            (cell.dropna(subset=["mean_auc"]), "highest of any method (no exact baseline ran)")
        if source.empty:
            raise ValueError(f"{dataset} at {size:.0f} unlabeled rows: no finished fit has an AUC")
        best = source.loc[source["mean_auc"].idxmax()]
        for r in cell.itertuples():
            rows.append({"dataset": dataset, "n_unlabeled": int(size), "method": r.method, "trials": int(r.trials),
                         "median_fit_time": float(r.median_fit_time), "mean_auc": float(r.mean_auc),
                         "target_auc": float(best["mean_auc"]), "target_method": best["method"],
                         "target_kind": kind, "reached": bool(r.mean_auc >= best["mean_auc"] - tolerance),
                         "shortfall": float(max(0.0, best["mean_auc"] - r.mean_auc))})
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(["dataset", "n_unlabeled", "method"], ignore_index=True)


def plot_time_at_accuracy(frame, paths, tolerance=TARGET_TOLERANCE):
    """Median fit time against unlabeled rows, log-log, one panel per dataset and one line per method.

    A marker is filled where the method's mean AUC reaches the target, hollow where it falls short.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`time_at_accuracy`'s table.
    paths : list of path-like
        Where to save the figure (format from the extension).
    tolerance : float
        The tolerance ``frame`` was computed with (named in the caption).
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    if frame.empty:
        raise ValueError("the time-at-accuracy table is empty: nothing to draw")
    datasets = sorted(frame["dataset"].unique())
    styles = method_styles(sorted(frame["method"].unique()))
    with plt.rc_context(STYLE):
        ncols = min(PANELS_PER_ROW, len(datasets))
        nrows = -(-len(datasets) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), squeeze=False)
        for ax in axes.flat[len(datasets):]:
            ax.set_visible(False)
        for ax, dataset in zip(axes.flat, datasets):
            own = frame[frame["dataset"] == dataset]
            for method, rows in own.groupby("method", sort=True):
                rows = rows.sort_values("n_unlabeled")
                style = styles[method]
                ax.plot(rows["n_unlabeled"], rows["median_fit_time"], color=style["color"], linewidth=1)
                for reached, part in rows.groupby("reached"):
                    ax.scatter(part["n_unlabeled"], part["median_fit_time"], marker=style["marker"], s=22,
                               edgecolors=style["color"], facecolors=style["color"] if reached else "none", zorder=3)
            ax.set(xscale="log", yscale="log", title=dataset, xlabel="unlabeled rows")
            size_ticks(ax, own["n_unlabeled"])
        for ax in axes[:, 0]:
            ax.set_ylabel("median fit time (s)")
        handles = [Line2D([], [], color=s["color"], marker=s["marker"], label=m) for m, s in styles.items()]
        handles += [Line2D([], [], color="grey", marker="o", linestyle="", label="reaches the target AUC"),
                    Line2D([], [], color="grey", marker="o", markerfacecolor="none", linestyle="",
                           label="short of the target AUC")]
        fig.tight_layout(rect=(0, 0.04 / nrows, 1, 1))
        fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
        fig.text(0.01, 0.0, f"Target per dataset and size: mean AUC of the best exact baseline (M-PNU-AUC or "
                              f"M-SAMULT; where neither ran, the highest of any method); reached within "
                              f"{tolerance}.", fontsize=6)
        save(fig, paths)
