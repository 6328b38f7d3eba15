"""Evidence for claims 8c and 8d from the cells where QS3ORAO and the exact baselines both ran.

8c ("QS3ORAO is faster beyond about 10,000 unlabeled rows") is read where the
exact baselines actually ran, with at least ``min_trials`` paired trials per
(dataset, size): never from cells where they stopped at the memory budget. 8d
("the exact baselines run out of memory on the larger sets") is read through
the baselines' memory estimates against a declared budget, once the estimate
has been validated against the measured peaks where they ran, so that it can
also be read at a paper-like budget and at the datasets' full sizes.

Both functions take a results table (the columns of ``qs3study.stages.tables``) and
return ``{"verdict", "evidence", ...}``; :mod:`qs3study.claims.empirical`
computes claims 8c and 8d with them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["crossover_evidence", "memory_evidence"]

OURS = "qs3orao"
EXACT = ("m-samult", "m-pnu-auc")


def _paired_ratios(table, method, *, ours=OURS):
    """Per (dataset, n_unlabeled): ``fit_time(method) / fit_time(ours)`` on the trials where both are ok."""
    ok = table[table["status"] == "ok"]
    a = ok[ok["method"] == method].set_index(["dataset", "n_unlabeled", "trial"])["fit_time"]
    b = ok[ok["method"] == ours].set_index(["dataset", "n_unlabeled", "trial"])["fit_time"]
    both = a.to_frame("theirs").join(b.to_frame("ours"), how="inner")
    return (both["theirs"] / both["ours"]).groupby(level=["dataset", "n_unlabeled"]).apply(list)


def crossover_evidence(table, *, beyond, min_trials, exact=EXACT):
    """8c from the cells where both ran.

    A (dataset, size, baseline) cell is "faster" when QS3ORAO's fit time is below
    the baseline's in every paired trial, "slower" when above in every one, else
    "mixed"; with fewer than ``min_trials`` paired trials it is "too few trials".
    The crossover of a (dataset, baseline) is the smallest size from which every
    decided cell is "faster".

    Returns
    -------
    dict
        ``verdict``: holds when every cell at ``>= beyond`` unlabeled rows is
        faster (and there is one per baseline), fails when one of them is
        slower, else inconclusive; ``evidence``; ``cells`` (list of dict).
    """
    cells = []
    for method in exact:
        for (dataset, size), ratios in _paired_ratios(table, method).items():
            ratios = np.asarray(ratios, dtype=float)
            if ratios.size < min_trials:
                label = "too few trials"
            elif (ratios > 1.0).all():
                label = "faster"
            elif (ratios < 1.0).all():
                label = "slower"
            else:
                label = "mixed"
            cells.append({"dataset": dataset, "n_unlabeled": int(size), "baseline": method, "trials": int(ratios.size),
                          "median_ratio": float(np.median(ratios)), "class": label})
    large = [c for c in cells if c["n_unlabeled"] >= beyond]
    covered = {c["baseline"] for c in large if c["class"] != "too few trials"}
    if any(c["class"] == "slower" for c in large):
        verdict = "fails"
    elif large and all(c["class"] == "faster" for c in large) and covered == set(exact):
        verdict = "holds"
    else:
        verdict = "inconclusive"
    crossovers = []
    for method in exact:
        for dataset in sorted({c["dataset"] for c in cells if c["baseline"] == method}):
            own = sorted((c for c in cells if c["baseline"] == method and c["dataset"] == dataset),
                         key=lambda c: c["n_unlabeled"])
            decided = [c for c in own if c["class"] != "too few trials"]
            start = next((c["n_unlabeled"] for k, c in enumerate(decided)
                          if all(d["class"] == "faster" for d in decided[k:])), None)
            crossovers.append(f"{dataset}/{method}: " + (f"from {start}" if start is not None else "none"))
    listed = "; ".join(f"{c['dataset']}/{c['baseline']} at {c['n_unlabeled']}: {c['class']} "
                       f"(median ratio {c['median_ratio']:.3g}, {c['trials']} trials)" for c in cells) or "none"
    return {"verdict": verdict, "cells": cells,
            "evidence": f"{len(large)} of the {len(cells)} (dataset, size, baseline) cells where both ran have >= "
                        f"{beyond:g} unlabeled rows (criterion: every such cell faster, >= {min_trials} paired "
                        f"trials each, both baselines covered; ratio = baseline / QS3ORAO fit time). Cells where "
                        f"both ran: {listed}. Crossover (every larger decided size faster): "
                        f"{', '.join(crossovers) or 'none'}."}


def memory_evidence(table, *, estimate, budget_mb, paper_budget_mb, full_sizes, large_rows, tolerance,
                    exact=EXACT):
    """8d through the memory estimate, validated against the measured peaks.

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
                        f"{paper_budget_mb:,.0f} MB in {sum(mb > paper_budget_mb for mb in needs.values())}/{len(needs)}."}
