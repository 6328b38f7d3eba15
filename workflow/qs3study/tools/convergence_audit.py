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

For a QS3ORAO fit whose parameters give its step offset (``step_offset`` a number or ``"auto"``,
with ``lam`` and ``tradeoff``), it also reads the warm-up ``t0`` of the step ``theta / (t + t0)``
(:func:`qs3orao.schedule.resolve_step_offset`): a fit that stopped within ``t0`` iterations ran every
step within a factor 2 of its first, the stability limit, and one whose ``t0`` outlasts a cap cannot
leave that phase under it, whatever the criterion reads.

    python -m qs3study.tools.convergence_audit figures/reproduction-best/results.csv \\
        --out figures/reproduction-best

``--trials 0 1`` audits those trials only: the population a pilot declared, where its run fitted more.

writes ``convergence_audit.csv`` (per column and draw, and over all draws as ``all``),
``convergence_audit_warmup.csv`` (per column: the warm-up counts of :func:`warmup_table`),
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

from qs3orao.schedule import AUTO_DATA, resolve_step_offset
from qs3orao.validation import check_tradeoff
from qs3study.claims.verdicts import bar_verdict
from qs3study.datasets import sha256_file
from qs3study.files import read_columns, refuse_foreign_files, write_with_record
from qs3study.provenance import run_manifest
from qs3study.stages.tables import one_draw, read_results, tuning_draws
from qs3study.tools.decomposition import (MARGIN, add_margin_argument, converged_off_minimiser, minimisers,
                                          resolve_margin)

__all__ = ["BAR", "CONFIDENCE", "ALL_DRAWS", "CAP_MULTIPLES", "warmup", "audit_fits", "trials_only",
           "summarise", "warmup_table", "convergence_markdown", "main"]

#: The share of a column's comparison fits that should meet its criterion (the refit pilots' bar).
BAR = 0.95
CONFIDENCE = 0.95
#: The ``tuning_draw`` of the summary rows over every draw.
ALL_DRAWS = "all"
READ_COLUMNS = ("dataset", "method", "size", "trial", "comparison", "status", "auc", "converged", "n_iter_fitted",
                "params", "n_classes")
#: Multiples of a fit's iteration cap at which the audit counts the fits whose warm-up outlasts the cap.
CAP_MULTIPLES = (1, 4, 16, 64)
RECORD = "convergence_audit.json"


def _params(params):
    try:
        parsed = json.loads(params)
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def warmup(params, n_classes):
    """The offset ``t0`` of a QS3ORAO fit's step ``theta / (t + t0)``, from its recorded parameters.

    Parameters
    ----------
    params : dict
        The fit's parameters (``params`` of results.csv, parsed).
    n_classes : float
        The fit's number of classes (one split fewer).

    Returns
    -------
    float
        ``t0``; NaN where the parameters do not give ``lam``, ``tradeoff`` and a ``step_offset`` that
        needs no data (``"auto-data"`` is resolved from the training rows).

    Examples
    --------
    >>> warmup({"lam": 0.05, "theta": 30.0, "tradeoff": 0.5, "step_offset": "auto"}, 4)
    181.0
    """
    offset = params.get("step_offset")
    if not {"lam", "tradeoff"} <= params.keys() or offset is None or offset == AUTO_DATA or not n_classes > 1:
        return np.nan
    lam = float(params["lam"])
    theta = params.get("theta") or 1.5 / lam
    weights = check_tradeoff(params["tradeoff"], int(n_classes) - 1)
    return resolve_step_offset(offset, theta=float(theta), lam=lam, tradeoff=weights)


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
        ``dataset, method, tuning_draw, trial, status, converged, n_iter_fitted, max_iter, warmup, lam, auc,
        minimiser_auc, gap, off_minimiser``; ``lam`` is the fit's regularisation and ``max_iter`` its
        iteration cap (from ``params``, NaN without one), ``warmup`` its step offset (:func:`warmup`),
        ``converged`` is False for a fit that did not finish, ``gap`` is the minimiser's
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
            params = [_params(text) for text in rows["params"]]
            fits.insert(fits.columns.get_loc("auc"), "max_iter", [float(p.get("max_iter", np.nan)) for p in params])
            fits.insert(fits.columns.get_loc("auc"), "warmup",
                        [warmup(p, k) for p, k in zip(params, rows["n_classes"], strict=True)])
            fits.insert(fits.columns.get_loc("auc"), "lam", [float(p.get("lam", np.nan)) for p in params])
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


def trials_only(table, trials):
    """The rows of ``table`` at ``trials``.

    Raises
    ------
    ValueError
        If a trial of ``trials`` has no row in ``table``.
    """
    missing = sorted(set(trials) - set(table["trial"].astype(int)))
    if missing:
        raise ValueError(f"the table has no trial {', '.join(map(str, missing))} (its trials: "
                         f"{', '.join(map(str, sorted(table['trial'].astype(int).unique())))})")
    return table[table["trial"].astype(int).isin(trials)]


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


def _fewest_reaching(n, bar):
    """The fewest converged fits of ``n`` whose share reaches ``bar``, by :func:`bar_verdict`'s rule ``k / n >= bar``."""
    return next(k for k in range(n + 1) if k / n >= bar)


def warmup_table(fits, *, bar=BAR, multiples=CAP_MULTIPLES):
    """Per column, over every draw: the fits that ended in their step's warm-up, and those a larger cap leaves in it.

    Parameters
    ----------
    fits : pandas.DataFrame
        From :func:`audit_fits`, after :func:`summarise` (which fills ``off_minimiser``).
    bar : float
        The converged share the audit asks for; ``allowed`` is how many unconverged fits it leaves room for.
    multiples : tuple of int
        Multiples ``m`` of each fit's cap: ``unconverged_x{m}`` counts the unconverged fits whose warm-up
        ``t0`` is at least ``m`` times their cap.

    Returns
    -------
    pandas.DataFrame
        ``method, fits, with_warmup, in_warmup, in_warmup_converged, in_warmup_off, past_warmup_converged,
        past_warmup_off, allowed, unconverged_x{m}...``; a fit is in its warm-up when it stopped within
        ``t0`` iterations. Columns whose fits record no warm-up are left out.
    """
    rows = []
    for method, group in fits.groupby("method", sort=True):
        known = group[group["warmup"].notna()]
        if known.empty:
            continue
        inside = known["n_iter_fitted"] <= known["warmup"]
        unconverged = ~known["converged"]
        row = {"method": method, "fits": len(group), "with_warmup": len(known), "in_warmup": int(inside.sum()),
               "in_warmup_converged": int((inside & known["converged"]).sum()),
               "in_warmup_off": int((inside & known["off_minimiser"]).sum()),
               "past_warmup_converged": int((~inside & known["converged"]).sum()),
               "past_warmup_off": int((~inside & known["off_minimiser"]).sum()),
               "allowed": len(group) - _fewest_reaching(len(group), bar)}
        for multiple in multiples:
            row[f"unconverged_x{multiple}"] = int((unconverged & (known["warmup"] >= multiple * known["max_iter"])).sum())
        rows.append(row)
    columns = ["method", "fits", "with_warmup", "in_warmup", "in_warmup_converged", "in_warmup_off",
               "past_warmup_converged", "past_warmup_off", "allowed", *(f"unconverged_x{m}" for m in multiples)]
    return pd.DataFrame(rows, columns=columns)


def _warmup_section(table, multiples=CAP_MULTIPLES):
    if table.empty:
        return []
    caps = " | ".join(f"{m} x cap" for m in multiples)
    lines = ["## The step's warm-up", "",
             "Under `step_offset=\"auto\"` the step `theta / (t + t0)` stays within a factor 2 of its first value, "
             "the stability limit, for `t0` iterations (`qs3orao.schedule`). In warm-up: the fits that stopped within "
             "their `t0`.", "",
             "| column | fits | in warm-up | of them converged | of those, off f* | past it, converged | "
             "of those, off f* |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.method} | {r.with_warmup} of {r.fits} | {r.in_warmup} | {r.in_warmup_converged} | "
                     f"{r.in_warmup_off} | {r.past_warmup_converged} | {r.past_warmup_off} |")
    lines += ["", "Unconverged fits whose `t0` is at least a multiple of their iteration cap: a cap raised that far "
              "still ends them in their warm-up. The bar leaves room for the number of unconverged fits under "
              "\"allowed\".", "",
              f"| column | allowed | {caps} |", "|---|---|" + "---|" * len(multiples)]
    for r in table.to_dict("records"):
        lines.append(f"| {r['method']} | {r['allowed']} | "
                     + " | ".join(str(r[f"unconverged_x{m}"]) for m in multiples) + " |")
    return [*lines, ""]


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
    """The audit as markdown: each column by tuning draw against the bar, then by dataset, lam and warm-up."""
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
              *_warmup_section(warmup_table(fits, bar=bar)),
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
    parser.add_argument("--trials", type=int, nargs="+", help="audit these trials only (default: every trial)")
    add_margin_argument(parser)
    args = parser.parse_args(argv)
    try:
        inputs = {str(args.results): sha256_file(args.results)}
        table = read_columns(args.results, READ_COLUMNS, reader=read_results)
        if args.trials is not None:
            table = trials_only(table, args.trials)
        manifest = run_manifest(args.results)
        margin = resolve_margin(parser, args.margin, manifest)
        fits = audit_fits(table, minimisers(manifest))
        summary = summarise(fits, margin=margin)
        markdown = convergence_markdown(summary, fits, margin=margin)
        contents = {"convergence_audit.csv": summary.to_csv(index=False).encode(),
                    "convergence_audit_warmup.csv": warmup_table(fits).to_csv(index=False).encode(),
                    "convergence_audit_fits.csv": fits.to_csv(index=False).encode(),
                    "convergence_audit.md": markdown.encode()}
        refuse_foreign_files(args.out, [*contents, RECORD], RECORD, contents)
    except (ValueError, OSError) as error:
        print(f"convergence_audit: {error}", file=sys.stderr)
        return 1
    write_with_record(args.out, contents, RECORD, {"inputs": inputs, "margin": margin, "bar": BAR,
                                                   "confidence": CONFIDENCE, "manifest": manifest is not None,
                                                   "trials": args.trials})
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
