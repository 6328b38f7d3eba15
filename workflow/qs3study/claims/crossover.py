"""Evidence for claims 8c and 8d from the cells where QS3ORAO and the exact baselines both ran.

8c ("QS3ORAO is faster beyond about 10,000 unlabeled rows") is read where the
exact baselines actually ran, with at least ``min_trials`` paired trials per
(dataset, size): never from cells where they stopped at the memory budget.
Beside the verdict, each (dataset, baseline) gets its crossover size: the
bracket of measured sizes and a log-log interpolated point with a bootstrap
interval (:func:`crossover_size`). 8d ("the exact baselines run out of memory
on the larger sets") is read through the baselines' memory estimates against a
declared budget, once the estimate has been validated against the measured
peaks where they ran, so that it can also be read at a paper-like budget and at
the datasets' full sizes; beside that extrapolation, its evidence gives the
refusals the run measured (:func:`measured_refusals`).

Both functions take a results table (the columns of ``qs3study.stages.tables``) and
return ``{"verdict", "evidence", ...}``; :mod:`qs3study.claims.empirical`
computes claims 8c and 8d with them.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

__all__ = ["BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "log_log_crossing", "crossover_size", "crossover_evidence",
           "machine_memory_mb", "recorded_machine_mb", "measured_refusals", "refusals_text", "memory_evidence"]

OURS = "qs3orao"
EXACT = ("m-samult", "m-pnu-auc")
#: Resamples and seed of the crossover's bootstrap over trials (fixed, so that a ledger rebuild reproduces it).
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
#: A refusal's kind by its status: only the memory budget bears on 8d.
REFUSAL_KINDS = {"out_of_memory_budget": "memory budget", "beyond_pool": "pool too small", "failed": "failed"}
REFUSAL_COLUMNS = ("dataset", "method", "n_unlabeled", "status", "peak_memory_mb", "memory_estimate_mb",
                   "memory_budget_mb")


def _paired_ratios(table, method, *, ours=OURS):
    """Per (dataset, n_unlabeled): ``fit_time(method) / fit_time(ours)`` on the trials where both are ok."""
    ok = table[table["status"] == "ok"]
    a = ok[ok["method"] == method].set_index(["dataset", "n_unlabeled", "trial"])["fit_time"]
    b = ok[ok["method"] == ours].set_index(["dataset", "n_unlabeled", "trial"])["fit_time"]
    both = a.to_frame("theirs").join(b.to_frame("ours"), how="inner")
    return (both["theirs"] / both["ours"]).groupby(level=["dataset", "n_unlabeled"]).apply(list)


def log_log_crossing(sizes, log_ratios):
    """Where a log ratio that grows with size last crosses 0, interpolated linearly in ``log(size)``.

    Parameters
    ----------
    sizes : sequence of float
        Increasing sizes.
    log_ratios : sequence of float
        ``log(baseline time / QS3ORAO time)`` at each size: positive where QS3ORAO is faster.

    Returns
    -------
    position : {"below", "between", "above"}
        ``"below"`` when the ratio is positive at every size (the crossing is below the smallest),
        ``"above"`` when it is not positive at the largest (above the largest), else ``"between"``.
    value : float
        The interpolated size for ``"between"``, nan otherwise: never extrapolated.

    Examples
    --------
    >>> position, value = log_log_crossing([1000, 4000], [-1.0, 1.0])
    >>> position, round(value)
    ('between', 2000)
    """
    sizes, log_ratios = np.asarray(sizes, dtype=float), np.asarray(log_ratios, dtype=float)
    if sizes.size == 0 or not np.isfinite(log_ratios).all():
        raise ValueError(f"log_log_crossing needs at least one size and finite log ratios, got {log_ratios}")
    if log_ratios[-1] <= 0:
        return "above", np.nan
    slower = np.flatnonzero(log_ratios <= 0)
    if slower.size == 0:
        return "below", np.nan
    lo = slower[-1]
    share = -log_ratios[lo] / (log_ratios[lo + 1] - log_ratios[lo])
    return "between", float(np.exp(np.log(sizes[lo]) + share * (np.log(sizes[lo + 1]) - np.log(sizes[lo]))))


def _cell_class(ratios, min_trials):
    if ratios.size < min_trials:
        return "too few trials"
    if (ratios > 1.0).all():
        return "faster"
    if (ratios < 1.0).all():
        return "slower"
    return "mixed"


def _place(position, value, sizes):
    if position == "below":
        return f"below the smallest measured size ({sizes[0]:,})"
    if position == "above":
        return f"above the largest measured size ({sizes[-1]:,})"
    return f"{value:,.0f}"


def crossover_size(ratios, *, min_trials, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED, level=0.95):
    """The crossover size of one (dataset, baseline): bracket, point estimate and bootstrap interval.

    Only sizes with at least ``min_trials`` paired trials (decided cells) count.

    * Bracket: ``low``, the largest size whose cell is not "faster", and ``high``, the smallest size
      from which every decided cell is "faster" (None where there is no such size).
    * Point: where the median paired ratio (baseline / QS3ORAO fit time) crosses 1, interpolated
      log-log between the two sizes around its last crossing (:func:`log_log_crossing`). It lies in
      the bracket unless a "mixed" cell's median is on the other side of 1.
    * Interval: the ``level`` quantiles of the point over ``resamples`` bootstrap resamples, each
      drawing every size's paired ratios with replacement (trials within the size).

    Nothing is extrapolated: a crossing below the smallest or above the largest measured size is
    reported as such (``position`` ``"below"`` or ``"above"``, and in the interval's text).

    Parameters
    ----------
    ratios : dict
        Size -> sequence of paired ratios (one per trial).
    min_trials : int
    resamples : int
    seed : int
    level : float

    Returns
    -------
    dict
        ``sizes`` (decided, increasing), ``low``, ``high``, ``position``, ``estimate`` (nan unless
        ``position == "between"``), ``interval`` (two strings), ``text``.
    """
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"resamples must be >= 1 and level in (0, 1), got {resamples} and {level}")
    decided = {int(n): np.asarray(r, dtype=float) for n, r in sorted(ratios.items())
               if np.asarray(r).size >= min_trials}
    if any((r <= 0).any() or not np.isfinite(r).all() for r in decided.values()):
        raise ValueError("paired time ratios must be finite and positive")
    sizes = list(decided)
    if not sizes:
        return {"sizes": [], "low": None, "high": None, "position": None, "estimate": np.nan, "interval": None,
                "text": f"no size with >= {min_trials} paired trials"}
    classes = [_cell_class(r, min_trials) for r in decided.values()]
    not_faster = [n for n, c in zip(sizes, classes) if c != "faster"]
    low = not_faster[-1] if not_faster else None
    high = next((n for n in sizes if low is None or n > low), None)
    position, estimate = log_log_crossing(sizes, [np.log(np.median(r)) for r in decided.values()])
    rng = np.random.default_rng(seed)
    medians = np.column_stack([np.median(r[rng.integers(0, r.size, size=(resamples, r.size))], axis=1)
                               for r in decided.values()])
    order = {"below": -np.inf, "above": np.inf}
    points = []
    for row in np.log(medians):
        where, value = log_log_crossing(sizes, row)
        points.append(order.get(where, value))
    tail = (1 - level) / 2
    bounds = np.quantile(points, [tail, 1 - tail], method="inverted_cdf")
    interval = tuple(_place("below" if b == -np.inf else "above" if b == np.inf else "between", b, sizes)
                     for b in bounds)
    bracket = ("faster at every measured size" if low is None else
               f"not faster at the largest measured size ({low:,})" if high is None else
               f"not faster at {low:,}, faster at every measured size from {high:,}")
    text = (f"{bracket}; median ratio crosses 1 {'at ' if position == 'between' else ''}"
            f"{_place(position, estimate, sizes)} ({level:.0%} interval {interval[0]} .. {interval[1]}; bootstrap "
            f"over trials within each size, {resamples} resamples, seed {seed})")
    return {"sizes": sizes, "low": low, "high": high, "position": position, "estimate": estimate,
            "interval": interval, "text": text}


def crossover_evidence(table, *, beyond, min_trials, exact=EXACT, resamples=BOOTSTRAP_RESAMPLES,
                       seed=BOOTSTRAP_SEED):
    """8c from the cells where both ran.

    A (dataset, size, baseline) cell is "faster" when QS3ORAO's fit time is below
    the baseline's in every paired trial, "slower" when above in every one, else
    "mixed"; with fewer than ``min_trials`` paired trials it is "too few trials".
    The crossover of a (dataset, baseline) is the smallest size from which every
    decided cell is "faster", given with its bracket, point estimate and bootstrap
    interval (:func:`crossover_size`, ``resamples`` and ``seed``).

    Returns
    -------
    dict
        ``verdict``: holds when every cell at ``>= beyond`` unlabeled rows is
        faster (and there is one per baseline), fails when one of them is
        slower, else inconclusive; ``evidence``; ``cells`` (list of dict);
        ``crossovers`` (list of dict: ``dataset``, ``baseline`` and the keys of
        :func:`crossover_size`).
    """
    cells, crossovers = [], []
    for method in exact:
        paired = _paired_ratios(table, method)
        for (dataset, size), ratios in paired.items():
            ratios = np.asarray(ratios, dtype=float)
            cells.append({"dataset": dataset, "n_unlabeled": int(size), "baseline": method, "trials": int(ratios.size),
                          "median_ratio": float(np.median(ratios)), "class": _cell_class(ratios, min_trials)})
        for dataset in sorted(paired.index.unique("dataset")):
            found = crossover_size(paired.loc[dataset].to_dict(), min_trials=min_trials, resamples=resamples,
                                   seed=seed)
            crossovers.append({"dataset": dataset, "baseline": method, **found})
    large = [c for c in cells if c["n_unlabeled"] >= beyond]
    covered = {c["baseline"] for c in large if c["class"] != "too few trials"}
    if any(c["class"] == "slower" for c in large):
        verdict = "fails"
    elif large and all(c["class"] == "faster" for c in large) and covered == set(exact):
        verdict = "holds"
    else:
        verdict = "inconclusive"
    listed = "; ".join(f"{c['dataset']}/{c['baseline']} at {c['n_unlabeled']}: {c['class']} "
                       f"(median ratio {c['median_ratio']:.3g}, {c['trials']} trials)" for c in cells) or "none"
    named = "; ".join(f"{c['dataset']}/{c['baseline']}: "
                      + ("none" if c["high"] is None else f"from {c['high']}") + f" ({c['text']})" for c in crossovers)
    return {"verdict": verdict, "cells": cells, "crossovers": crossovers,
            "evidence": f"{len(large)} of the {len(cells)} (dataset, size, baseline) cells where both ran have >= "
                        f"{beyond:g} unlabeled rows (criterion: every such cell faster, >= {min_trials} paired "
                        f"trials each, both baselines covered; ratio = baseline / QS3ORAO fit time). Cells where "
                        f"both ran: {listed}. Crossover (every larger decided size faster): {named or 'none'}."}


def machine_memory_mb():
    """This machine's physical memory in MiB (``os.sysconf``).

    Raises
    ------
    ValueError
        Where the system does not report it: pass the machine's memory explicitly instead.
    """
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (ValueError, OSError, AttributeError) as error:
        raise ValueError(f"this system does not report its physical memory ({error}): pass machine_mb") from None


def _requested_rows(table):
    """Unlabeled rows per row of ``table``: ``n_unlabeled``, else the requested size token (``inf`` for "all")."""
    rows = table["n_unlabeled"].astype(float)
    if "size" in table:
        token = table["size"].astype(str).replace("all", "inf")
        rows = rows.fillna(pd.to_numeric(token, errors="coerce"))
    return rows


def measured_refusals(table, *, exact=EXACT):
    """Per (dataset, exact baseline): the largest size it ran and the first it did not, with why.

    Parameters
    ----------
    table : pandas.DataFrame
        A results table (the columns :data:`REFUSAL_COLUMNS`; ``size`` names the requested size of rows with no
        ``n_unlabeled``, as a pool too small leaves them).

    Returns
    -------
    list of dict
        ``dataset, baseline``; ``largest_ran`` (the largest size at which every trial is ok, None if
        none) and ``peak_mb`` (the largest measured peak there); ``first_refused`` (the smallest size
        at which some trial is not ok, None if none), ``kinds`` (its refusals' kinds, see
        :data:`REFUSAL_KINDS`), and for a memory refusal ``estimate_mb`` and ``budget_mb`` (the
        largest recorded at that size); ``first_memory_refusal`` (the smallest size refused for
        memory, None if none).
    """
    missing = [c for c in REFUSAL_COLUMNS if c not in table]
    if missing:
        raise ValueError(f"the results table has no {', '.join(missing)} (measured refusals need them)")
    rows = table[table["method"].isin(exact)].assign(_rows=lambda t: _requested_rows(t))
    if rows["_rows"].isna().any():
        raise ValueError(f"{int(rows['_rows'].isna().sum())} rows of the exact baselines have neither "
                         f"n_unlabeled nor a size token (a number or 'all')")
    unknown = sorted(set(rows["status"]) - {"ok", *REFUSAL_KINDS})
    if unknown:
        raise ValueError(f"status {unknown} is none of ok, {', '.join(REFUSAL_KINDS)}")
    out = []
    for (dataset, method), own in rows.groupby(["dataset", "method"], sort=True):
        by_size = own.groupby("_rows")["status"]
        ran = [n for n, s in by_size if (s == "ok").all()]
        refused = [n for n, s in by_size if (s != "ok").any()]
        memory = [n for n, s in by_size if (s == "out_of_memory_budget").any()]
        record = {"dataset": dataset, "baseline": method, "largest_ran": max(ran) if ran else None, "peak_mb": None,
                  "first_refused": min(refused) if refused else None, "kinds": [], "estimate_mb": None,
                  "budget_mb": None, "first_memory_refusal": min(memory) if memory else None}
        if ran:
            record["peak_mb"] = float(own.loc[own["_rows"] == record["largest_ran"], "peak_memory_mb"].max())
        if refused:
            at = own[(own["_rows"] == record["first_refused"]) & (own["status"] != "ok")]
            record["kinds"] = sorted({REFUSAL_KINDS[s] for s in at["status"]})
        if memory:
            at = own[(own["_rows"] == record["first_memory_refusal"]) & (own["status"] == "out_of_memory_budget")]
            record["estimate_mb"] = float(at["memory_estimate_mb"].max())
            record["budget_mb"] = float(at["memory_budget_mb"].max())
        out.append(record)
    return out


def recorded_machine_mb(manifest):
    """The memory (MiB) of the machine a run measured on, as its manifest records it (``machine.memory_gib``).

    The ledger and the reports read a committed run on other machines: the machine its refusals
    are read against is the run's own (:func:`qs3study.provenance.run_manifest`).

    Returns
    -------
    float or None
        None when there is no manifest or it records no machine memory.
    """
    memory_gib = ((manifest or {}).get("machine") or {}).get("memory_gib")
    return None if memory_gib is None else float(memory_gib) * 1024


def _rows_text(n):
    return "the whole pool" if n == np.inf else f"{n:,.0f}"


def refusals_text(refusals, *, machine_mb):
    """The measured refusals of :func:`measured_refusals` in words, each memory estimate against ``machine_mb``.

    ``machine_mb`` None: the run recorded no machine memory, and the text says so.
    """
    parts = []
    for r in refusals:
        ran = (f"ran up to {_rows_text(r['largest_ran'])} unlabeled rows (measured peak {r['peak_mb']:,.0f} MiB)"
               if r["largest_ran"] is not None else "ran at no size")
        refused = (f"first not run at {_rows_text(r['first_refused'])} ({', '.join(r['kinds'])})"
                   if r["first_refused"] is not None else "refused no size")
        memory = ""
        if r["first_memory_refusal"] is not None:
            est, budget = r["estimate_mb"], r["budget_mb"]
            machine = ("the machine's memory not recorded" if machine_mb is None else
                       f"the machine's {machine_mb:,.0f} MiB ({'above' if est > machine_mb else 'within'} "
                       f"the machine's memory)")
            memory = (f"; first memory refusal at {_rows_text(r['first_memory_refusal'])}: its estimate "
                      f"{est:,.0f} MiB against the budget {budget:,.0f} MiB and {machine}")
        parts.append(f"{r['dataset']}/{r['baseline']}: {ran}, {refused}{memory}")
    return "; ".join(parts) or "no exact baseline in the table"


def memory_evidence(table, *, estimate, budget_mb, paper_budget_mb, full_sizes, large_rows, tolerance,
                    exact=EXACT, machine_mb=None):
    """8d through the memory estimate, validated against the measured peaks, and the measured refusals.

    The verdicts come from the estimate read at the full sizes; the refusals the run measured
    (:func:`measured_refusals`) are added to the evidence beside it.

    Parameters
    ----------
    table : pandas.DataFrame
        Needs ``memory_estimate_mb``, ``rss_before_fit_mb`` and ``peak_memory_mb`` of the exact
        baselines' ok fits. The estimate counts what a fit allocates, the peak is the process's
        (interpreter and data included), so the estimate predicts the peak as
        ``rss_before_fit_mb + memory_estimate_mb``.
    estimate : callable
        ``estimate(method, dataset, n_rows) -> MB``, the baseline's own memory estimate.
    budget_mb, paper_budget_mb : float
        The run's declared budget and a paper-like one (the paper's machine).
    full_sizes : dict
        Dataset name to its full number of rows (the registry's upstream size).
    large_rows : int
        "The larger sets": datasets with at least this many rows.
    tolerance : float
        The estimate is validated when ``1/tolerance <= measured / estimated <= tolerance`` at every ok fit.
    machine_mb : float, optional
        The memory (MiB) of the machine the run measured on, which the refusals' estimates are
        read against (:func:`recorded_machine_mb`); None: not recorded, and the evidence says so.

    Returns
    -------
    dict
        ``verdict`` (at the declared budget; inconclusive when the estimate is not
        validated or no set is large), ``paper_verdict`` (the same at
        ``paper_budget_mb``), ``evidence``.
    """
    ok = table[table["method"].isin(exact) & (table["status"] == "ok")].dropna(
        subset=["memory_estimate_mb", "rss_before_fit_mb", "peak_memory_mb"])
    ratio = (ok["peak_memory_mb"] / (ok["rss_before_fit_mb"] + ok["memory_estimate_mb"])).to_numpy(dtype=float)
    validated = bool(ratio.size) and bool(((ratio >= 1.0 / tolerance) & (ratio <= tolerance)).all())
    large = {name: rows for name, rows in full_sizes.items() if rows >= large_rows}
    needs = {(name, method): float(estimate(method, name, rows)) for name, rows in large.items() for method in exact}

    def verdict(budget):
        if not validated or not needs:
            return "inconclusive"
        return "holds" if all(mb > budget for mb in needs.values()) else "fails"

    check = (f"measured / predicted peak (RSS before the fit + estimate) at {ratio.size} fits: "
             f"{ratio.min():.2f}..{ratio.max():.2f}"
             if ratio.size else "no fit to validate the estimate against")
    return {"verdict": verdict(budget_mb), "paper_verdict": verdict(paper_budget_mb),
            "evidence": f"estimate {'validated' if validated else 'NOT validated'} (criterion within x{tolerance:g}; "
                        f"{check}); estimated need at the full sizes of the {len(large)} sets with >= {large_rows} "
                        f"rows: " + ", ".join(f"{n}/{m}: {mb:,.0f} MB" for (n, m), mb in sorted(needs.items()))
                        + f"; above the declared budget {budget_mb:,.0f} MB in "
                        f"{sum(mb > budget_mb for mb in needs.values())}/{len(needs)}, above a paper-like "
                        f"{paper_budget_mb:,.0f} MB in {sum(mb > paper_budget_mb for mb in needs.values())}/{len(needs)}. "
                        f"Measured refusals (only a memory refusal bears on the claim): "
                        f"{refusals_text(measured_refusals(table, exact=exact), machine_mb=machine_mb)}."}
