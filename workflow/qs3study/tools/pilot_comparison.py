"""A pipeline pilot's fits beside the published run's: the harness check and what the change moved.

A pipeline pilot (``workflow/config/pilots/``) reruns some columns of a published protocol with a
declared change, on the same data, splits and CV seeds. This pairs each of its comparison fits with
the published fit of the same dataset, column, tuning draw and trial (:func:`pair_fits`):

- ``same_values``: the fit's parameters equal the published fit's, ``max_iter`` aside;
- the harness check: such a fit whose published twin met its criterion within the pilot's cap must
  reproduce its ``n_iter_fitted``, ``converged`` flag and AUC (to :data:`AUC_DIGITS`), since a larger
  cap does not act on a fit that stopped before it; one that does not makes the pilot "not reproduced";
- ``auc_change``: the pilot's AUC minus the published one, on the same split;
- ``minimiser_change``: the same for the exact minimiser each run trained the column's values with
  (its ``tuned_by``), which is what a changed search costs the objective, free of the optimiser.

    python -m qs3study.tools.pilot_comparison figures/reproduction-best/results.csv \\
        figures/lam-floor-pilot/results.csv --out figures/lam-floor-pilot

writes ``pilot_comparison_fits.csv`` (one row per pair), ``pilot_comparison.csv`` (per column),
``pilot_comparison.md`` and the record ``pilot_comparison.json``. The converged counts and their
verdict against the bar are :mod:`qs3study.tools.convergence_audit`'s, on the pilot's table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from qs3study.datasets import sha256_file
from qs3study.files import read_columns, refuse_foreign_files, write_with_record
from qs3study.provenance import run_manifest
from qs3study.stages.tables import read_results
from qs3study.tools.convergence_audit import READ_COLUMNS as AUDIT_COLUMNS
from qs3study.tools.convergence_audit import audit_fits
from qs3study.tools.decomposition import minimisers

__all__ = ["AUC_DIGITS", "KEY", "pair_fits", "summarise", "harness_verdict", "comparison_markdown", "main"]

#: How closely a harness fit's AUC must reproduce the published one.
AUC_DIGITS = 1e-9
#: What pairs a pilot fit with its published twin.
KEY = ["dataset", "method", "tuning_draw", "trial"]
READ_COLUMNS = (*AUDIT_COLUMNS, "tuning_draw", "fit_time")
RECORD = "pilot_comparison.json"


def _fits(table, manifest):
    """:func:`audit_fits` of ``table`` with each fit's parameters (``max_iter`` aside) and fit time."""
    fits = audit_fits(table, minimisers(manifest))
    rows = table[table["comparison"].astype(bool)]
    params = [json.dumps({k: v for k, v in json.loads(text).items() if k != "max_iter"}, sort_keys=True)
              if isinstance(text, str) else None for text in rows["params"]]
    extra = rows[KEY].assign(values=params, fit_time=rows["fit_time"].to_numpy())
    return fits.merge(extra, on=KEY, how="left", validate="one_to_one")


def pair_fits(published, pilot, published_manifest=None, pilot_manifest=None):
    """One row per pilot comparison fit of a column with a convergence criterion, beside its published twin.

    Parameters
    ----------
    published, pilot : pandas.DataFrame
        The two results tables (``read_results``).
    published_manifest, pilot_manifest : dict, optional
        Their runs' manifests, whose ``tuned_by`` name each column's exact minimiser.

    Returns
    -------
    pandas.DataFrame
        ``dataset, method, tuning_draw, trial, same_values, harness, reproduced, published_converged,
        converged, published_n_iter, n_iter_fitted, max_iter, published_lam, lam, published_auc, auc,
        auc_change, published_minimiser_auc, minimiser_auc, minimiser_change, published_fit_time,
        fit_time``; ``harness`` marks the fits the harness check reads, ``reproduced`` is NaN elsewhere.

    Raises
    ------
    ValueError
        If a pilot fit has no published twin.
    """
    mine, theirs = _fits(pilot, pilot_manifest), _fits(published, published_manifest)
    pairs = mine.merge(theirs, on=KEY, how="left", suffixes=("", "_published"), indicator=True,
                       validate="one_to_one")
    lonely = pairs[pairs["_merge"] == "left_only"]
    if len(lonely):
        first = lonely.iloc[0]
        raise ValueError(f"{len(lonely)} pilot fits have no published twin (first: {first['dataset']}, "
                         f"{first['method']}, draw {first['tuning_draw']}, trial {first['trial']}): not the "
                         "protocol the pilot overlays?")
    same = pairs["values"].notna() & pairs["values"].eq(pairs["values_published"])
    harness = (same & pairs["converged_published"].astype(bool)
               & (pairs["n_iter_fitted_published"] <= pairs["max_iter"]))
    reproduced = (pairs["n_iter_fitted"].eq(pairs["n_iter_fitted_published"])
                  & pairs["converged"].eq(pairs["converged_published"])
                  & ((pairs["auc"] - pairs["auc_published"]).abs() <= AUC_DIGITS))
    return pd.DataFrame({
        **{column: pairs[column] for column in KEY},
        "same_values": same, "harness": harness, "reproduced": reproduced.astype(object).where(harness),
        "published_converged": pairs["converged_published"].astype(bool), "converged": pairs["converged"],
        "published_n_iter": pairs["n_iter_fitted_published"], "n_iter_fitted": pairs["n_iter_fitted"],
        "max_iter": pairs["max_iter"], "published_lam": pairs["lam_published"], "lam": pairs["lam"],
        "published_auc": pairs["auc_published"], "auc": pairs["auc"], "auc_change": pairs["auc"] - pairs["auc_published"],
        "published_minimiser_auc": pairs["minimiser_auc_published"], "minimiser_auc": pairs["minimiser_auc"],
        "minimiser_change": pairs["minimiser_auc"] - pairs["minimiser_auc_published"],
        "published_fit_time": pairs["fit_time_published"], "fit_time": pairs["fit_time"]})


def summarise(pairs):
    """Per column: the pairs, the harness check's counts, converged counts and the mean changes.

    Returns
    -------
    pandas.DataFrame
        ``method, fits, same_values, harness, reproduced, published_converged, converged, mean_auc_change,
        mean_minimiser_change, published_fit_hours, fit_hours``.
    """
    rows = [{"method": method, "fits": len(group), "same_values": int(group["same_values"].sum()),
             "harness": int(group["harness"].sum()), "reproduced": int(group["reproduced"].eq(True).sum()),
             "published_converged": int(group["published_converged"].sum()),
             "converged": int(group["converged"].sum()), "mean_auc_change": group["auc_change"].mean(),
             "mean_minimiser_change": group["minimiser_change"].mean(),
             "published_fit_hours": group["published_fit_time"].sum() / 3600,
             "fit_hours": group["fit_time"].sum() / 3600}
            for method, group in pairs.groupby("method", sort=True)]
    return pd.DataFrame(rows)


def harness_verdict(summary):
    """``"reproduced"`` when every harness fit reproduced, ``"not reproduced"`` when one did not.

    Raises
    ------
    ValueError
        If no fit qualifies for the check: a pilot with nothing to reproduce has no harness.
    """
    if not summary["harness"].sum():
        raise ValueError("no pilot fit has its published values and a published fit that converged within its "
                         "cap: the harness check has nothing to reproduce")
    return "reproduced" if summary["reproduced"].eq(summary["harness"]).all() else "not reproduced"


def _number(value, digits=4):
    return "—" if pd.isna(value) else f"{value:+.{digits}f}"


def _power(lam):
    return "—" if pd.isna(lam) else f"2^{np.log2(lam):g}"


def comparison_markdown(summary, pairs):
    """The per-column table, the harness verdict and the fits whose values changed."""
    verdict = harness_verdict(summary)
    lines = ["# The pilot beside the published run", "",
             f"Harness check: **{verdict}** ({int(summary['reproduced'].sum())} of {int(summary['harness'].sum())} "
             "fits with the published values that converged within the pilot's cap reproduce the published "
             f"iterations, flag and AUC to {AUC_DIGITS:g}).", "",
             "| column | fits | same values | converged (published) | mean AUC change | mean f* change | "
             "fit time, h (published) |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.method} | {r.fits} | {r.same_values} | {r.converged} ({r.published_converged}) | "
              f"{_number(r.mean_auc_change)} | {_number(r.mean_minimiser_change)} | {r.fit_hours:.2f} "
              f"({r.published_fit_hours:.2f}) |" for r in summary.itertuples()]
    changed = pairs[~pairs["same_values"]]
    lines += ["", "## Fits whose values changed", "",
              "| column | dataset | draw | lam (published) | converged (published) | AUC change | f* change |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.method} | {r.dataset} | {r.tuning_draw} | {_power(r.lam)} ({_power(r.published_lam)}) | "
              f"{r.converged} ({r.published_converged}) | {_number(r.auc_change)} | {_number(r.minimiser_change)} |"
              for r in changed.itertuples()]
    lines += ["", "Changes are the pilot's value minus the published one on the same split; f* is the exact minimiser "
                  "each run trained the column's values with (its `tuned_by`). Fit time is summed over the column's "
                  "fits, on whatever machine each run had: a cost, not a speed comparison."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Command-line entry point: write the comparison into ``--out`` with its record; refuse foreign files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("published", type=Path, help="results.csv of the published run")
    parser.add_argument("pilot", type=Path, help="results.csv of the pilot run")
    parser.add_argument("--out", type=Path, required=True, help="the pilot's figures folder")
    args = parser.parse_args(argv)
    try:
        inputs = {str(path): sha256_file(path) for path in (args.published, args.pilot)}
        published, pilot = (read_columns(path, READ_COLUMNS, reader=read_results)
                            for path in (args.published, args.pilot))
        pairs = pair_fits(published, pilot, run_manifest(args.published), run_manifest(args.pilot))
        summary = summarise(pairs)
        markdown = comparison_markdown(summary, pairs)
        contents = {"pilot_comparison_fits.csv": pairs.to_csv(index=False).encode(),
                    "pilot_comparison.csv": summary.to_csv(index=False).encode(),
                    "pilot_comparison.md": markdown.encode()}
        refuse_foreign_files(args.out, [*contents, RECORD], RECORD, contents)
    except (ValueError, OSError) as error:
        print(f"pilot_comparison: {error}", file=sys.stderr)
        return 1
    write_with_record(args.out, contents, RECORD, {"inputs": inputs, "harness": harness_verdict(summary)})
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
