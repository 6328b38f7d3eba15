"""Figures of the claims ledger (matplotlib with the Agg backend)."""

from __future__ import annotations

import numpy as np

from qs3study.files import save_figure
from qs3study.theory.coefficients import in_lemma2_domain, lemma2_grid
from qs3orao.thresholds import threshold_loss

from .rows.complexity import MEMORY_VS_T
from .rows.text import class_counts
from .studies import PAPER_SCHEDULE
from .summary import bootstrap_mean_interval

__all__ = ["save", "convergence_figure", "slopes_figure", "bounds_figure", "huber_figure", "rate_figure",
           "transient_figure", "lemma2_figure", "thresholds_figure", "complexity_figure"]

_ERROR_LABEL = "mean over x of |f_t(x) - f*(x)|^2"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, stem):
    """Write ``stem.png`` and ``stem.pdf`` (atomically) and close the figure."""
    for ext in ("png", "pdf"):
        save_figure(fig, f"{stem}.{ext}", dpi=130, bbox_inches="tight",
                    metadata={"CreationDate": None} if ext == "pdf" else None)
    _pyplot().close(fig)


def _primary(records):
    return records[(records["batch_size"] == records["batch_size"].min()) & (records["schedule"] == PAPER_SCHEDULE)]


def convergence_figure(records, instance, criteria):
    """Mean error against t (log-log) per lambda, one line per theta*lambda, with bootstrap bands."""
    plt = _pyplot()
    rows = _primary(records)
    rows = rows[rows["instance"] == instance]
    lambdas = sorted(rows["lam"].unique())
    cols = 3
    nrows = int(np.ceil(len(lambdas) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.3 * nrows), squeeze=False, sharex=True)
    colours = plt.get_cmap("viridis")
    products = sorted(rows["theta_lam"].unique())
    for ax, lam in zip(axes.ravel(), lambdas):
        for k, c in enumerate(products):
            group = rows[(rows["lam"] == lam) & (rows["theta_lam"] == c)]
            pivot = group.pivot(index="seed", columns="t", values="error_mean")
            t = pivot.columns.to_numpy()
            with np.errstate(invalid="ignore", over="ignore"):
                mean = pivot.to_numpy().mean(axis=0)
            low, high = bootstrap_mean_interval(pivot.to_numpy(), n_boot=criteria["bootstrap"],
                                                confidence=criteria["confidence"], seed=criteria["bootstrap_seed"])
            colour = colours(k / max(1, len(products) - 1))
            style = "-" if in_lemma2_domain(c) else ":"
            ax.loglog(t, mean, style, color=colour, label=f"theta*lam = {c:g}" + ("" if in_lemma2_domain(c) else " (outside)"))
            finite = np.isfinite(high)
            ax.fill_between(t[finite], low[finite], high[finite], color=colour, alpha=0.2, lw=0)
        t_ref = np.array([t[0], t[-1]], dtype=float)
        ax.loglog(t_ref, t_ref[0] / t_ref, "k--", lw=0.8, label="slope -1")
        ax.set_title(f"instance {instance}, lambda = {lam:g}", fontsize=9)
        ax.set_xlabel("iteration t")
        ax.set_ylabel(_ERROR_LABEL, fontsize=8)
    for ax in axes.ravel()[len(lambdas):]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=6, loc="best")
    fig.suptitle(f"Convergence to f* (batch 1, step theta/t; bands: {criteria['confidence']:.0%} bootstrap CI "
                 "of the mean over seeds; dotted: theta*lambda outside the stated range)", fontsize=10)
    fig.tight_layout()
    return fig


def slopes_figure(summary, criteria, *, floor=3.0):
    """Slope of the mean error (bootstrap CI) against lambda, per theta*lambda and instance.

    The axis shows ``floor`` below the target slope; steeper slopes (cells still
    leaving a transient) are drawn as triangles on the lower edge, so the cells
    near the target stay readable.
    """
    plt = _pyplot()
    rows = _primary(summary)
    instances = sorted(rows["instance"].unique())
    fig, axes = plt.subplots(1, len(instances), figsize=(6.5 * len(instances), 4.2), squeeze=False, sharey=True)
    colours = plt.get_cmap("viridis")
    products = sorted(rows["theta_lam"].unique())
    bottom = criteria["rate_target"] - floor
    finite = rows["error_mean_slope"][np.isfinite(rows["error_mean_slope"])]
    top = max(criteria["rate_target"] + criteria["rate_tolerance"], float(rows["error_mean_high"].max())
              if np.isfinite(rows["error_mean_high"]).any() else 0.0) + 0.2
    for ax, instance in zip(axes.ravel(), instances):
        for k, c in enumerate(products):
            r = rows[(rows["instance"] == instance) & (rows["theta_lam"] == c)].sort_values("lam")
            shift = 1.0 + 0.04 * (k - len(products) / 2)
            slope = r["error_mean_slope"].to_numpy()
            colour = colours(k / max(1, len(products) - 1))
            shown = slope >= bottom
            err = np.vstack([slope - r["error_mean_low"], r["error_mean_high"] - slope])[:, shown]
            ax.errorbar(r["lam"].to_numpy()[shown] * shift, slope[shown], yerr=err,
                        fmt="o" if in_lemma2_domain(c) else "x", ms=4, capsize=2, color=colour,
                        label=f"theta*lam = {c:g}")
            below = slope < bottom
            ax.plot(r["lam"].to_numpy()[below] * shift, np.full(below.sum(), bottom), "v", color=colour, ms=6,
                    clip_on=False)
        missing = rows[(rows["instance"] == instance) & ~np.isfinite(rows["error_mean_slope"])]
        steep = rows[(rows["instance"] == instance) & (rows["error_mean_slope"] < bottom)]
        ax.axhline(criteria["rate_target"], color="k", lw=0.8)
        ax.axhline(criteria["rate_target"] + criteria["rate_tolerance"], color="k", lw=0.8, ls="--",
                   label="criterion: CI upper end below")
        ax.set_ylim(bottom, top)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("lambda")
        ax.set_ylabel("slope of log mean error vs log t")
        note = f"triangles: {len(steep)} slopes below {bottom:g}"
        if len(steep):
            note += f" (down to {steep['error_mean_slope'].min():.3g})"
        if len(missing):
            note += f"; {len(missing)} cells without a finite slope (not drawn)"
        ax.set_title(f"instance {instance}\n{note}", fontsize=9)
    axes.ravel()[0].legend(fontsize=7)
    if finite.empty:
        axes.ravel()[0].text(0.5, 0.5, "no finite slope", transform=axes.ravel()[0].transAxes, ha="center")
    return fig


def bounds_figure(summary, *, fixed="M fixed at f*"):
    """Theorem 1: largest measured/bound ratio (lower CI end of the mean error) over lambda x theta*lambda."""
    plt = _pyplot()
    from matplotlib.colors import LogNorm

    rows = _primary(summary)
    instances = sorted(rows["instance"].unique())
    fig, axes = plt.subplots(1, len(instances), figsize=(6 * len(instances), 4.2), squeeze=False)
    for ax, instance in zip(axes.ravel(), instances):
        r = rows[rows["instance"] == instance]
        table = r.pivot(index="theta_lam", columns="lam", values="theorem1_max_ratio")
        values = table.to_numpy(dtype=float)
        shown = np.where(np.isfinite(values), values, np.nan)
        mesh = ax.imshow(np.clip(shown, 1e-3, 1e300), origin="lower", aspect="auto", cmap="RdBu_r",
                         norm=LogNorm(vmin=1e-3, vmax=1e3))
        for (i, j), value in np.ndenumerate(values):
            label = "inf" if np.isinf(value) else ("-" if np.isnan(value) else f"{value:.0e}")
            dark = not np.isfinite(value) or abs(np.log10(max(value, 1e-300))) > 1.5
            ax.text(j, i, label, ha="center", va="center", fontsize=7,
                    color="w" if dark and not np.isnan(value) else "k")
        ax.set_xticks(range(table.shape[1]), [f"{x:g}" for x in table.columns], rotation=45)
        ax.set_yticks(range(table.shape[0]), [f"{y:g}" + (" *" if in_lemma2_domain(y) else "") for y in table.index])
        ax.set_xlabel("lambda")
        ax.set_ylabel("theta * lambda (* = stated range)")
        ax.set_title(f"instance {instance}: max_t measured / Theorem 1 bound\n({fixed}; '-': bound undefined)",
                     fontsize=9)
        fig.colorbar(mesh, ax=ax, label="ratio (> 1: bound exceeded)")
    fig.tight_layout()
    return fig


def huber_figure(summary, delta):
    """Theorem 1 with the Huberised loss (row H6): :func:`bounds_figure` titled with the row's power and classes."""
    rows = _primary(summary)
    inside = rows[rows["in_domain"]]
    power = inside["theorem1_power"].to_numpy(dtype=float)
    power = power[np.isfinite(power)]
    fig = bounds_figure(summary, fixed=f"Huberised loss, delta = {delta:g}, M = 2 delta")
    reach = (f"bound at T / error of f = 0: {power.min():.3g}..{power.max():.3g} ({int((power < 1).sum())}/"
             f"{power.size} below 1)" if power.size else "no finite bound")
    fig.suptitle(f"Row H6 over the {len(inside)} cells in the stated range: {class_counts(inside['theorem1_class'])}; "
                 f"{reach}", fontsize=9)
    fig.tight_layout()
    return fig


def rate_figure(rates, spec):
    """Design v2's rate study: each cell's slope with its TOST interval, coloured by class, and the margin."""
    plt = _pyplot()
    criteria = spec["criteria"]
    instances = sorted(rates["instance"].unique())
    fig, axes = plt.subplots(1, len(instances), figsize=(6.5 * len(instances), 4.2), squeeze=False, sharey=True)
    classes = sorted(rates["rate_class"].unique())
    colours = {name: plt.get_cmap("tab10")(k) for k, name in enumerate(classes)}
    products = sorted(rates["theta_lam"].unique())
    target, margin = criteria["rate_target"], criteria["margin"]
    for ax, instance in zip(axes.ravel(), instances):
        cells = rates[rates["instance"] == instance]
        for k, c in enumerate(products):
            shift = 1.0 + 0.05 * (k - len(products) / 2)
            for name in classes:
                r = cells[(cells["theta_lam"] == c) & (cells["rate_class"] == name)]
                r = r[np.isfinite(r["slope"])]
                ax.errorbar(r["lam"] * shift, r["slope"], yerr=np.vstack([r["slope"] - r["low"], r["high"] - r["slope"]]),
                            fmt="o" if in_lemma2_domain(c) else "x", ms=4, capsize=2, color=colours[name],
                            label=name if k == 0 and instance == instances[0] else None)
        ax.axhline(target, color="k", lw=0.8, label="slope -1" if instance == instances[0] else None)
        ax.axhspan(target - margin, target + margin, color="0.85", zorder=0,
                   label=f"equivalence margin -1 +- {margin:g}" if instance == instances[0] else None)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("lambda")
        ax.set_ylabel("fitted slope of log mean error vs log t")
        ax.set_title(f"instance {instance} (x: theta*lambda outside the stated range)", fontsize=9)
    axes.ravel()[0].legend(fontsize=7)
    inside = rates[rates["in_domain"]]
    fig.suptitle(f"Rate study (design v2), {len(inside)} cells in the stated range: "
                 f"{class_counts(inside['rate_class'])}; bars: the 1 - 2 alpha interval the TOST reads", fontsize=9)
    fig.tight_layout()
    return fig


def transient_figure(summary, criteria):
    """Measured against predicted peak amplification, log-log, with the criterion's band."""
    plt = _pyplot()
    rows = _primary(summary)
    fig, ax = plt.subplots(figsize=(6, 5))
    ceiling = np.finfo(float).max
    predicted = rows["predicted_peak"].to_numpy()
    measured = np.minimum(rows["measured_peak"].to_numpy(), ceiling)
    sc = ax.scatter(predicted, measured, c=np.log2(rows["lam"]), cmap="viridis", s=18,
                    marker="o")
    fig.colorbar(sc, ax=ax, label="log2 lambda")
    grid = np.geomspace(1.0, max(predicted.max(), 10.0), 50)
    ax.plot(grid, grid, "k-", lw=0.8, label="measured = predicted")
    band = 10.0 ** criteria["transient_decades"]
    ax.fill_between(grid, grid / band, grid * band, color="0.8", alpha=0.5,
                    label=f"+- {criteria['transient_decades']:g} decades")
    ax.axvline(criteria["transient_min"], color="k", ls=":", lw=0.8, label="criterion applies to the right")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted peak: max_t prod_j (1 - eta_j (lam + h))^2")
    ax.set_ylabel("measured peak: max_t mean error / error of f = 0")
    left = int((~np.isfinite(rows["measured_peak"].to_numpy())).sum())
    ax.set_title("Transient of the step theta/t (batch 1"
                 + (f"; {left} runs left the floats, drawn at the top)" if left else ")"), fontsize=9)
    ax.legend(fontsize=7)
    return fig


def lemma2_figure(products, t_values):
    """Heat map of ``max_i |a_t^i| / (theta / t)`` with Lemma 2's domain marked."""
    plt = _pyplot()
    from matplotlib.colors import LogNorm

    ratio = lemma2_grid(products, t_values)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    top = max(10.0, ratio.max())
    # symmetric on the log scale, so that white is the lemma's bound, 1
    mesh = ax.pcolormesh(t_values, products, ratio, norm=LogNorm(vmin=1.0 / top, vmax=top), cmap="RdBu_r",
                         shading="nearest")
    ax.contour(t_values, products, ratio, levels=[1.0 + 1e-9], colors="k", linewidths=0.8)
    fig.colorbar(mesh, ax=ax, label="max_i |a_t^i| / (theta / t)  (Lemma 2 claims <= 1)")
    ax.axhspan(1.0, 2.0, facecolor="none", edgecolor="green", hatch="//", lw=0.0, label="domain: (1, 2)")
    integers = [c for c in products if c == int(c) and c >= 1]
    ax.scatter(np.full(len(integers), t_values[0]), integers, marker=">", color="green", s=12,
               label="domain: integer theta*lambda")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("theta * lambda")
    ax.set_title("Lemma 2 ratio (black contour: ratio = 1)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def thresholds_figure(examples):
    """``e_j(b) - min_b e_j(b)`` for a few instances: each is ``(title, scores, codes, k, loss)``."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(examples), figsize=(4 * len(examples), 3.3), squeeze=False)
    for ax, (title, scores, codes, k, loss) in zip(axes.ravel(), examples):
        scores, codes = np.asarray(scores, dtype=float), np.asarray(codes)
        b = np.linspace(scores.min() - 3, scores.max() + 3, 600)
        for j in range(k - 1):
            # e_j(b): the all-threshold loss with only threshold j free and the others far away.
            values = [threshold_loss(np.r_[np.full(j, -1e6), v, np.full(k - 2 - j, 1e6)], scores, codes, loss)
                      for v in b]
            ax.plot(b, np.asarray(values) - min(values), label=f"e_{j + 1}(b) - min e_{j + 1}")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("threshold b")
        ax.set_ylabel("e_j(b) - min_b e_j(b)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


#: Axis label of each measured quantity of the complexity sweeps ("seconds": wall clock, as older tidy data hold it).
_QUANTITY_LABELS = {"cpu_seconds": "CPU seconds", "seconds": "seconds", "peak_mb": "peak traced memory (MB)",
                    "operations": "operations counted"}


def complexity_figure(records, exponents, *, sizes, growth):
    """Measured cost against size (log-log), one panel per sweep, with every repeat and what row 7 reads.

    ``exponents`` maps each sweep to ``(slope, low, high)`` fitted at its ``sizes`` largest sizes (the fit
    row 7's verdict reads); ``growth`` is the engine's memory against t as a linear slope and interval
    (MiB per iteration), which row 7 reads for that sweep instead of an exponent.
    """
    plt = _pyplot()
    from matplotlib.ticker import LogLocator, NullFormatter

    sweeps = list(dict.fromkeys(records["sweep"]))
    cols = 4
    nrows = int(np.ceil(len(sweeps) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 3.2 * nrows), squeeze=False)
    for ax, name in zip(axes.ravel(), sweeps):
        group = records[records["sweep"] == name]
        ax.loglog(group["size"], group["value"], "o", ms=3, color="0.5", label="repeats")
        medians = group.groupby("size")["value"].median()
        ax.loglog(medians.index, medians.to_numpy(), "-", color="C0", label="median")
        if name == MEMORY_VS_T:
            slope, low, high = (x * 2**20 for x in growth)
            ax.set_title(f"{name}\n{slope:.4g} bytes per iteration [{low:.4g}, {high:.4g}] (linear)", fontsize=8)
        else:
            slope, low, high = exponents[name]
            ax.set_title(f"{name}\np = {slope:.2f} [{low:.2f}, {high:.2f}] (largest {sizes} sizes)", fontsize=8)
        ax.set_xlabel(f"size {group['size_name'].iloc[0]}")
        ax.set_ylabel(_QUANTITY_LABELS[group["quantity"].iloc[0]])
        ax.xaxis.set_major_locator(LogLocator(base=10, numticks=4))
        # a y range under a decade keeps its (minor) tick labels; x shows decades only, so labels never overlap
        ax.xaxis.set_minor_formatter(NullFormatter())
    for ax in axes.ravel()[len(sweeps):]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    return fig
