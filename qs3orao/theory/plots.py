"""Figures of the claims ledger (matplotlib, imported lazily: a workflow dependency)."""

from __future__ import annotations

import os

import numpy as np

from .coefficients import in_lemma2_domain, lemma2_grid
from .convergence import ERRORS, FIT_FROM_FRACTION
from ..thresholds import threshold_loss

__all__ = ["save", "convergence_figure", "slopes_figure", "lemma2_figure", "thresholds_figure",
           "complexity_figure"]

_LABELS = {"f_error": "mean |f_t(x) - f*(x)|^2", "fh_error": "mean |f_t(x) - h_t(x)|^2",
           "h_error": "||h_t - f*||^2 (paper's h)", "g_error": "||g_t - f*||^2 (kernel SGD)"}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, stem):
    """Write ``stem.png`` and ``stem.pdf`` and close the figure."""
    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    for ext in ("png", "pdf"):
        fig.savefig(f"{stem}.{ext}", dpi=130, bbox_inches="tight")
    _pyplot().close(fig)


def convergence_figure(records, summary, bounds):
    """Error against t (log-log), one panel per theta*lambda, with fitted slopes and the Theorem 1 bound.

    ``bounds`` maps product to ``(t, theorem bound)`` arrays (NaN where undefined).
    """
    plt = _pyplot()
    products = sorted(records["product"].unique())
    cols = min(4, len(products))
    rows = int(np.ceil(len(products) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), sharex=True, squeeze=False)
    for ax, product in zip(axes.ravel(), products):
        group = records[records["product"] == product]
        mean = group.groupby("t")[list(ERRORS)].mean()
        row = summary.set_index("product").loc[product]
        for name in ERRORS:
            ax.loglog(mean.index, mean[name], label=f"{_LABELS[name]} ({row[f'{name}_slope']:.2f})")
        t, bound = bounds[product]
        if np.isfinite(bound).any():
            ax.loglog(t, bound, "k--", lw=1, label="Theorem 1 bound")
        ax.axvline(FIT_FROM_FRACTION * mean.index.max(), color="0.7", lw=0.8)
        status = "in stated range" if row["in_domain"] else "outside stated range"
        ax.set_title(f"theta*lambda = {product:g} ({status})", fontsize=9)
        ax.legend(fontsize=6)
        ax.set_xlabel("t")
    for ax in axes.ravel()[len(products):]:
        ax.axis("off")
    fig.suptitle("Convergence to f* (fitted slopes in parentheses; fit right of the grey line)")
    return fig


def slopes_figure(summary):
    """Fitted slope (95% CI) against theta*lambda, with the stated range shaded and -min(1, 2c) for reference."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    c = summary["product"].to_numpy()
    for offset, name in zip((-0.02, 0.0, 0.02, 0.04), ERRORS):
        slope = summary[f"{name}_slope"].to_numpy()
        err = np.vstack([slope - summary[f"{name}_low"], summary[f"{name}_high"] - slope])
        ax.errorbar(c * (1 + offset), slope, yerr=err, fmt="o", ms=4, capsize=2, label=_LABELS[name])
    grid = np.geomspace(c.min(), c.max(), 200)
    ax.plot(grid, -np.minimum(1.0, 2.0 * grid), "k:", label="-min(1, 2c) (SGD theory)")
    ax.axhline(-1.0, color="k", lw=0.8)
    ax.axvspan(1.0, 2.0, color="green", alpha=0.1, label="(1, 2): stated range")
    for value in c:
        if in_lemma2_domain(value) and value >= 2:
            ax.axvline(value, color="green", alpha=0.3)
    diverged = summary[summary["diverged"]]
    if len(diverged):
        ax.plot(diverged["product"], np.zeros(len(diverged)), "rx", ms=10, label="diverged")
    ax.set_xscale("log")
    ax.set_xticks(c, [f"{value:g}" for value in c])
    ax.minorticks_off()
    ax.set_xlabel("theta * lambda")
    ax.set_ylabel("log-log slope of error vs t")
    ax.legend(fontsize=7)
    return fig


def lemma2_figure(products, t_values):
    """Heat map of ``max_i |a_t^i| / (theta / t)`` over (theta*lambda, t); Lemma 2 claims <= 1 in its range."""
    plt = _pyplot()
    from matplotlib.colors import LogNorm

    ratio = lemma2_grid(products, t_values)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    mesh = ax.pcolormesh(t_values, products, ratio, norm=LogNorm(vmin=0.1, vmax=max(10.0, ratio.max())),
                         cmap="RdBu_r", shading="nearest")
    ax.contour(t_values, products, ratio, levels=[1.0 + 1e-9], colors="k", linewidths=0.8)
    fig.colorbar(mesh, ax=ax, label="max_i |a_t^i| / (theta / t)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("t")
    ax.set_ylabel("theta * lambda")
    ax.set_title("Lemma 2 ratio (black contour: ratio = 1)")
    return fig


def thresholds_figure(examples):
    """``e_j(b)`` for a few instances: each is ``(title, scores, codes, k, loss)``."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(examples), figsize=(4 * len(examples), 3.2), squeeze=False)
    for ax, (title, scores, codes, k, loss) in zip(axes.ravel(), examples):
        scores, codes = np.asarray(scores, dtype=float), np.asarray(codes)
        b = np.linspace(scores.min() - 3, scores.max() + 3, 600)
        for j in range(k - 1):
            # e_j(b): the all-threshold loss with only threshold j free and the others far away.
            values = [threshold_loss(np.r_[np.full(j, -1e6), v, np.full(k - 2 - j, 1e6)], scores, codes, loss)
                      for v in b]
            ax.plot(b, np.asarray(values) - min(values), label=f"e_{j + 1}(b)")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("b")
        ax.legend(fontsize=7)
    return fig


def complexity_figure(records, exponents):
    """Measured cost against size (log-log), one line per sweep, with fitted exponents."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, group in records.groupby("sweep"):
        ax = axes[0] if group["quantity"].iloc[0] == "seconds" else axes[1]
        ax.loglog(group["size"], group["value"], "o-", label=f"{name} (p = {exponents[name][0]:.2f})")
    axes[0].set_ylabel("seconds")
    axes[1].set_ylabel("peak traced memory (MB)")
    for ax in axes:
        ax.set_xlabel("size (t or n)")
        ax.legend(fontsize=7)
    return fig
