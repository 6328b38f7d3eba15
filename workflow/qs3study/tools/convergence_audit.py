"""Which comparison fits met their stated convergence criterion, at every tuning draw, and how far from f* they ended.

Reads one protocol's results table. The columns audited are the methods whose comparison fits
carry a convergence flag (``converged`` True or False: a stated criterion, such as
:class:`baselines.converged.ConvergedQS3ORAO`'s). Per column and tuning draw it counts the fits
that met the criterion, with the share's Clopper-Pearson interval and its verdict against the bar
(:func:`qs3study.claims.verdicts.bar_verdict`); a fit that did not finish counts as not converged.
Where the run's manifest says the column trained with the values tuned for an exact minimiser
(``tuned_by``, the same objective on the same split), it also counts the fits marked converged that
lie more than ``margin`` AUC below that minimiser
(:func:`qs3study.tools.decomposition.converged_off_minimiser`): the criterion reads the training
risk's change per doubling of the iterations, not the distance to the minimiser.

    python -m qs3study.tools.convergence_audit figures/reproduction-best/results.csv \\
        --out figures/reproduction-best

writes ``convergence_audit.csv`` (per column and draw, and over all draws as ``all``),
``convergence_audit_fits.csv`` (one row per fit), ``convergence_audit.md`` and the record
``convergence_audit.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from qs3study.claims.verdicts import bar_verdict
from qs3study.datasets import sha256_file
from qs3study.files import read_columns, refuse_foreign_files, write_with_record
from qs3study.provenance import run_manifest
from qs3study.stages.tables import one_draw, read_results, tuning_draws
from qs3study.tools.decomposition import MARGIN, add_margin_argument, converged_off_minimiser, resolve_margin

__all__ = ["BAR", "CONFIDENCE", "ALL_DRAWS", "minimisers", "audit_fits", "summarise", "convergence_markdown", "main"]

#: The share of a column's comparison fits that should meet its criterion (the refit pilots' bar).
BAR = 0.95
CONFIDENCE = 0.95
#: The ``tuning_draw`` of the summary rows over every draw.
ALL_DRAWS = "all"
READ_COLUMNS = ("dataset", "method", "size", "trial", "comparison", "status", "auc", "converged", "n_iter_fitted",
                "params")
RECORD = "convergence_audit.json"


def minimisers(manifest):
    """Column -> the exact minimiser whose tuned values it trained with (the configuration's ``tuned_by``)."""
    methods = (manifest or {}).get("config", {}).get("methods", {})
    return {name: entry["tuned_by"] for name, entry in methods.items() if (entry or {}).get("tuned_by")}


def _lam(params):
    try:
        return float(json.loads(params).get("lam", np.nan))
    except (TypeError, ValueError, AttributeError):
        return np.nan


def audit_fits(table, minimiser=None):
    """One row per comparison fit of every column with a convergence criterion, at every tuning draw.

    Parameters
    ----------
    table : pandas.DataFrame
        A tidy results table (``read_results``).
    minimiser : dict, optional
        Column -> the method label of its exact minimiser in the same table (:func:`minimisers`).

    Returns
    -------
    pandas.DataFrame
        ``dataset, method, tuning_draw, trial, status, converged, n_iter_fitted, lam, auc, minimiser_auc, gap,
        off_minimiser``; ``lam`` is the fit's regularisation (from ``params``, NaN without one), ``converged`` is False for a fit that did not finish, ``gap`` is the minimiser's
        AUC minus the fit's on the same split (NaN without a minimiser), and ``off_minimiser`` is filled
        in by :func:`summarise`'s margin.

    Raises
    ------
    ValueError
        If no comparison fit carries a convergence flag.
    """
    minimiser = minimiser or {}
    comparison = table[table["comparison"].astype(bool)]
    flagged = comparison.loc[comparison["converged"].notna(), "method"].unique()
    if not len(flagged):
        raise ValueError("no comparison fit of the table carries a convergence flag (column converged): its "
                         "methods have no stated criterion to audit")
    parts = []
    for draw in tuning_draws(table):
        drawn = one_draw(table, draw)
        drawn = drawn[drawn["comparison"].astype(bool)]
        reference = drawn[drawn["status"] == "ok"].pivot_table(index=["dataset", "trial"], columns="method",
                                                                values="auc")
        own = drawn[drawn["method"].isin(flagged)]
        if "tuning_draw" in own:  # a column tuned once is audited at its own draw only
            own = own[own["tuning_draw"] == draw]
        for method, rows in own.groupby("method", sort=True):
            fits = rows[["dataset", "method", "trial", "status", "converged", "n_iter_fitted", "auc"]].copy()
            fits.insert(2, "tuning_draw", draw)
            fits["converged"] = fits["status"].eq("ok") & fits["converged"].eq(True)
            fits.insert(fits.columns.get_loc("auc"), "lam", [_lam(params) for params in rows["params"]])
            label = minimiser.get(method)
            if label in reference:
                index = pd.MultiIndex.from_frame(fits[["dataset", "trial"]])
                fits["minimiser_auc"] = reference[label].reindex(index).to_numpy()
            else:
                fits["minimiser_auc"] = np.nan
            fits["gap"] = fits["minimiser_auc"] - fits["auc"]
            parts.append(fits)
    fits = pd.concat(parts, ignore_index=True).sort_values(["method", "tuning_draw", "dataset", "trial"])
    return fits.reset_index(drop=True)


def summarise(fits, *, bar=BAR, confidence=CONFIDENCE, margin=MARGIN):
    """Per column and tuning draw, then over all draws: the converged fits against the bar and off f*.

    Fills ``fits["off_minimiser"]`` (a fit marked converged more than ``margin`` below its minimiser).

    Returns
    -------
    pandas.DataFrame
        ``method, tuning_draw, fits, converged, share, interval_low, interval_high, verdict, unconverged,
        failed, with_minimiser, off_minimiser, mean_gap``; ``tuning_draw`` is :data:`ALL_DRAWS` on each
        column's row over every draw.
    """
    fits["off_minimiser"] = converged_off_minimiser(fits["converged"], fits["gap"], margin)
    rows = []
    for method, per_method in fits.groupby("method", sort=True):
        groups = [*per_method.groupby("tuning_draw", sort=True), (ALL_DRAWS, per_method)]
        for draw, group in groups:
            converged = int(group["converged"].sum())
            failed = int(group["status"].ne("ok").sum())
            low, high, verdict = bar_verdict(converged, len(group), bar=bar, confidence=confidence)
            rows.append({"method": method, "tuning_draw": draw, "fits": len(group), "converged": converged,
                         "share": converged / len(group), "interval_low": low, "interval_high": high,
                         "verdict": verdict, "unconverged": len(group) - converged - failed, "failed": failed,
                         "with_minimiser": int(group["gap"].notna().sum()),
                         "off_minimiser": int(group["off_minimiser"].sum()), "mean_gap": group["gap"].mean()})
    return pd.DataFrame(rows)


def _by_dataset(fits):
    rows = []
    for (method, dataset), group in fits.groupby(["method", "dataset"], sort=True):
        per_draw = group.groupby("tuning_draw")["converged"].sum()
        rows.append(f"| {method} | {dataset} | {' / '.join(str(int(k)) for k in per_draw)} | "
                    f"{int(group['converged'].sum())} of {len(group)} | {int(group['off_minimiser'].sum())} | "
                    + ("—" if group["gap"].isna().all() else f"{group['gap'].mean():+.4f}") + " |")
    return rows


def _by_lam(fits):
    """Per column and tuned ``lam`` (as a power of two): fits and converged fits."""
    rows = []
    exponent = np.log2(fits["lam"]).round()
    for (method, power), group in fits.groupby([fits["method"], exponent], sort=True, dropna=False):
        shown = "—" if np.isnan(power) else f"2^{power:.0f}"
        rows.append(f"| {method} | {shown} | {int(group['converged'].sum())} of {len(group)} |")
    return rows


def convergence_markdown(summary, fits, *, bar=BAR, confidence=CONFIDENCE, margin=MARGIN):
    """The audit as markdown: each column by tuning draw against the bar, then by dataset."""
    lines = ["# Converged comparison fits", "",
             f"| column | tuning draw | converged | {confidence:.0%} interval | against the bar ({bar:.0%}) | "
             "unconverged | failed | converged, off f* | mean AUC below f* |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        gap = "—" if r.with_minimiser == 0 else f"{r.mean_gap:+.4f}"
        off = "—" if r.with_minimiser == 0 else str(r.off_minimiser)
        lines.append(f"| {r.method} | {r.tuning_draw} | {r.converged} of {r.fits} ({r.share:.0%}) | "
                     f"{r.interval_low:.2f}-{r.interval_high:.2f} | {r.verdict} | {r.unconverged} | {r.failed} | "
                     f"{off} | {gap} |")
    lines += ["", "## By dataset", "",
              "| column | dataset | converged per draw | converged | converged, off f* | mean AUC below f* |",
              "|---|---|---|---|---|---|", *_by_dataset(fits), "",
              "## By the tuned lam", "",
              "Under `step_offset=\"auto\"` the step stays near its stability limit for about 1.5 h_bar / lam "
              "iterations (`qs3orao.schedule`): how the converged fits spread over the regularisation they were "
              "tuned to (— where a fit records none).", "",
              "| column | lam | converged |", "|---|---|---|", *_by_lam(fits), "",
              f"Converged: the comparison fits that met their stated criterion (column `converged` of results.csv; a "
              f"fit that did not finish counts as not converged), with the share's Clopper-Pearson interval. "
              f"Off f*: those of them more than {margin:g} AUC below the exact minimiser whose tuned values they "
              "trained with (the run's `tuned_by`), on the same split; — where a column has none. The criterion "
              "reads the training risk's change per doubling of the iterations, not the distance to f*."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Command-line entry point: write the audit's tables and markdown into ``--out``, with its record.

    A file of those names that the audit did not write (per its record :data:`RECORD`, or unless it holds
    the same bytes) is never overwritten.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="results.csv of one protocol's run")
    parser.add_argument("--out", type=Path, required=True, help="folder of that protocol's figures")
    add_margin_argument(parser)
    args = parser.parse_args(argv)
    try:
        inputs = {str(args.results): sha256_file(args.results)}
        table = read_columns(args.results, READ_COLUMNS, reader=read_results)
        manifest = run_manifest(args.results)
        margin = resolve_margin(parser, args.margin, manifest)
        fits = audit_fits(table, minimisers(manifest))
        summary = summarise(fits, margin=margin)
        markdown = convergence_markdown(summary, fits, margin=margin)
        contents = {"convergence_audit.csv": summary.to_csv(index=False).encode(),
                    "convergence_audit_fits.csv": fits.to_csv(index=False).encode(),
                    "convergence_audit.md": markdown.encode()}
        refuse_foreign_files(args.out, [*contents, RECORD], RECORD, contents)
    except (ValueError, OSError) as error:
        print(f"convergence_audit: {error}", file=sys.stderr)
        return 1
    write_with_record(args.out, contents, RECORD, {"inputs": inputs, "margin": margin, "bar": BAR,
                                                   "confidence": CONFIDENCE, "manifest": manifest is not None})
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
