"""The kernel width on the data's scale, and the warnings a reader needs about fitted kernels and tuning.

The paper's grid for the kernel width (``2^-3 .. 2^3`` on features "normalized
in advance") is garbled. Two readings are available (``protocol.kernel_width``):

``literal``
    ``gamma`` is used as given: ``k(x, x') = exp(-gamma ||x - x'||^2)``.
``median``
    ``gamma`` is relative to the data: the estimator gets ``gamma / m``, with
    ``m`` the median squared distance between the trial's labeled rows
    (``gamma = 2^k`` gives ``2^k / median ||x - x'||^2``). The labeled rows
    are in every fit of a trial (tuning folds aside), so tuning and training
    use the same scale whatever the unlabeled size.

A kernel is *degenerate* when its mean off-diagonal value on those rows is
below :data:`DEGENERATE_LOW` (every row its own island: scores carry no
ranking information) or above :data:`DEGENERATE_HIGH` (every row alike).

A tuned value on the edge of its grid is on a *search limit* (a wider search
might do better), on a *natural bound*, the parameter's own domain bound
(:data:`NATURAL_BOUNDS`: a trade-off of 0 or 1), which no search can pass, or
*settled*: on the edge of a widened search whose last round moved the best
cross-validated AUC by less than its declared ``widen_tolerance``
(:func:`settled_edges`), so that widening no longer paid. :func:`edge_kind`
tells the three apart.
"""

from __future__ import annotations

import math
import re

import numpy as np

from qs3orao.validation import SHARED_PARAMS

__all__ = ["KERNEL_WIDTHS", "DEGENERATE_LOW", "DEGENERATE_HIGH", "MAX_ROWS", "pairwise_sq_distances",
           "median_sq_distance", "gamma_scale", "absolute_params", "mean_off_diagonal", "degenerate_kernel",
           "grid_edges", "settled_edges", "NATURAL_BOUNDS", "edge_kind", "warning_kinds"]

KERNEL_WIDTHS = ("literal", "median")
DEGENERATE_LOW = 1e-3
DEGENERATE_HIGH = 0.999
#: Rows the median and the mean off-diagonal are computed on (a seeded subsample beyond it).
MAX_ROWS = 1000


def pairwise_sq_distances(X, *, seed, max_rows=MAX_ROWS):
    """Squared distances ``||x_i - x_j||^2`` of every pair ``i < j`` of (a seeded subsample of) ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, d), n >= 2
    seed : int
        Seed of the subsample when ``n > max_rows``.
    max_rows : int, default=MAX_ROWS

    Returns
    -------
    ndarray of shape (m * (m - 1) / 2,)
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a matrix with at least 2 rows, got shape {X.shape}")
    if X.shape[0] > max_rows:
        X = X[np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))]
    norms = np.einsum("ij,ij->i", X, X)
    sq = np.maximum(norms[:, None] + norms[None, :] - 2.0 * X @ X.T, 0.0)
    return sq[np.triu_indices(X.shape[0], k=1)]


def median_sq_distance(X, *, seed, max_rows=MAX_ROWS):
    """Median of :func:`pairwise_sq_distances`; ValueError if it is zero (all rows alike)."""
    median = float(np.median(pairwise_sq_distances(X, seed=seed, max_rows=max_rows)))
    if median <= 0:
        raise ValueError("the median squared distance between rows is 0 (most rows are identical); "
                         "the kernel width cannot be set on the data's scale")
    return median


def gamma_scale(kernel_width, X, *, seed):
    """The factor ``gamma`` is multiplied by: 1 (``literal``) or ``1 / median ||x - x'||^2`` (``median``).

    Parameters
    ----------
    kernel_width : {"literal", "median"}
    X : ndarray
        The rows the scale is computed on (the trial's labeled rows).
    seed : int
    """
    if kernel_width not in KERNEL_WIDTHS:
        raise ValueError(f"kernel_width must be one of {KERNEL_WIDTHS}, got {kernel_width!r}")
    return 1.0 if kernel_width == "literal" else 1.0 / median_sq_distance(X, seed=seed)


def absolute_params(params, scale):
    """``params`` with ``gamma`` (when present) multiplied by ``scale``; other values unchanged."""
    if "gamma" not in params:
        return dict(params)
    return {**params, "gamma": float(params["gamma"]) * scale}


def mean_off_diagonal(X, gamma, *, seed, max_rows=MAX_ROWS):
    """Mean of ``exp(-gamma ||x_i - x_j||^2)`` over the pairs ``i < j`` of (a subsample of) ``X``."""
    return float(np.mean(np.exp(-gamma * pairwise_sq_distances(X, seed=seed, max_rows=max_rows))))


def degenerate_kernel(mean, *, low=DEGENERATE_LOW, high=DEGENERATE_HIGH):
    """A warning text when the mean off-diagonal kernel value ``mean`` is outside ``[low, high]``, else None."""
    if mean < low:
        return (f"degenerate kernel: mean off-diagonal value {mean:.3g} < {low:g} "
                f"(gamma too large for the data's scale; scores carry little ranking information)")
    if mean > high:
        return f"degenerate kernel: mean off-diagonal value {mean:.6g} > {high:g} (gamma too small; rows look alike)"
    return None


def grid_edges(best_params, grid):
    """Warnings for every tuned value on the edge (smallest or largest value) of its grid.

    Parameters
    ----------
    best_params : dict
        Tuned values; a list value (per-split weights) is checked element by element.
    grid : dict
        Parameter -> the values searched. Grids of fewer than 3 values have no interior and are skipped.

    Returns
    -------
    list of str
    """
    warnings = []
    for name, values in grid.items():
        if name not in best_params or len(values) < 3:
            continue
        low, high = min(values), max(values)
        chosen = np.atleast_1d(np.asarray(best_params[name], dtype=np.float64))
        for j, value in enumerate(chosen):
            if value in (low, high):
                where = f"{name}[{j}]" if chosen.size > 1 else name
                warnings.append(f"grid edge: {where} = {value:g} is the {'smallest' if value == low else 'largest'} "
                                f"value of its grid ({low:g} .. {high:g})")
    return warnings


#: Parameter -> its own domain ``(low, high)``: a tuned value there is on a natural bound, not on a search limit.
NATURAL_BOUNDS = {**SHARED_PARAMS, "l2_regularization": (0.0, math.inf)}
_EDGE = re.compile(r"grid edge: (?P<name>\w+)(?:\[\d+\])? = (?P<value>\S+) is the (?:smallest|largest) value")
#: What :func:`settled_edges` appends to a warning, and :func:`edge_kind` reads.
SETTLED = "widening settled"


def settled_edges(warnings, names, gain, tolerance):
    """``warnings`` with each search-limit hit of a widened parameter marked *settled*.

    Parameters
    ----------
    warnings : list of str
        :func:`grid_edges` warnings of one search.
    names : collection of str
        The widened parameters (the search's ``grid_range``); only their hits are marked.
    gain : float
        The last round's gain in best cross-validated AUC over the rounds before it.
    tolerance : float
        The search's ``widen_tolerance``; ``gain`` must be below it.

    Returns
    -------
    list of str
    """
    if not gain < tolerance:
        raise ValueError(f"gain must be below the widen_tolerance {tolerance:g} for the hits to be settled, got {gain:g}")
    marked = []
    for warning in warnings:
        match = _EDGE.search(warning)
        if match is not None and match["name"] in names and edge_kind(warning) == "search limit":
            warning += (f" ({SETTLED}: the last round moved the best CV AUC by {gain:+.4g}, less than "
                        f"widen_tolerance {tolerance:g})")
        marked.append(warning)
    return marked


def edge_kind(warning):
    """``"natural bound"``, ``"settled"``, ``"search limit"`` or None (not a :func:`grid_edges` warning) for one warning.

    Examples
    --------
    >>> edge_kind("grid edge: tradeoff[1] = 1 is the largest value of its grid (0 .. 1)")
    'natural bound'
    >>> edge_kind("grid edge: gamma = 64 is the largest value of its grid (0.125 .. 64)")
    'search limit'
    >>> edge_kind("grid edge: gamma = 64 is the largest value of its grid (0.125 .. 64) (widening settled: ...)")
    'settled'
    """
    match = _EDGE.search(warning)
    if match is None:
        return None
    bounds = NATURAL_BOUNDS.get(match["name"])
    if bounds is not None and float(match["value"]) in bounds:
        return "natural bound"
    return "settled" if f"({SETTLED}:" in warning else "search limit"


def warning_kinds(warnings):
    """The kinds of warning in one row's ``warnings`` text (``"; "``-joined, as results.csv holds them).

    Returns
    -------
    set of str
        The row's edge hits counted once, at their most telling kind: ``"search limit"`` if some
        tuned value is on a search limit, else ``"settled"`` if some is on the edge of a widening
        that settled, else ``"natural bound"`` if some is on a natural bound; and ``"other"`` for
        any other warning (a degenerate kernel, a warning of the fit, a fallback).
    """
    kinds = {edge_kind(part) or "other" for part in warnings.split("; ") if part}
    for kind, weaker in (("search limit", ("settled", "natural bound")), ("settled", ("natural bound",))):
        if kind in kinds:
            kinds.difference_update(weaker)
    return kinds
