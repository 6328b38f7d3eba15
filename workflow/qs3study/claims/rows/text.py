"""Text helpers shared by the ledger's rows: number sets, cell names, class counts."""

from __future__ import annotations

from ..studies import PAPER_SCHEDULE

__all__ = ["FIGURES", "number_set", "integer_range", "primary_cells", "cell_name", "index_cell_name", "class_counts"]

#: Where the theory figures the rows cite are written.
FIGURES = "figures/theory"


def number_set(values):
    """``{0, 1}`` for ``[0.0, 1.0]``."""
    return "{" + ", ".join(f"{x:g}" for x in values) + "}"


def integer_range(values):
    """``4..40`` for a run of consecutive integers, else the set; ``none`` when empty."""
    values = list(values)
    if not values:
        return "none"
    if values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}..{values[-1]}"
    return "{" + ", ".join(str(x) for x in values) + "}"


def primary_cells(summary):
    """The summary's cells of the primary study: the smallest batch under the paper's schedule."""
    return summary[(summary["batch_size"] == summary["batch_size"].min()) & (summary["schedule"] == PAPER_SCHEDULE)]


def cell_name(r):
    """``A, lam = 0.5, theta*lam = 1.5`` for a summary row."""
    return f"{r['instance']}, lam = {r['lam']:g}, theta*lam = {r['theta_lam']:g}"


def index_cell_name(index):
    """:func:`cell_name` of an ``(instance, lam, theta_lam)`` index."""
    return cell_name(dict(zip(("instance", "lam", "theta_lam"), index)))


def class_counts(series):
    """``exceeded 3, respected 5``: each class with its count, sorted by class."""
    return ", ".join(f"{k} {n}" for k, n in sorted(series.value_counts().to_dict().items()))
