"""QS3ORAO's gap to the best exact baseline, split into optimisation, floor, grid and objective.

Reads the results tables of the two protocols (the paper's and the best-effort
one: same datasets, splits and trials) and, for one protocol ``P``, per dataset
and per trial ``t`` (comparison rows that finished in both tables)::

    total        = B_P - Q_P           the best exact baseline's AUC minus QS3ORAO's
    optimisation = M_P - Q_P           what QS3ORAO's optimiser loses to the minimiser it trained with
    floor        = F_P - M_P           what that minimiser's narrower search costs f* (0 where M is f*)
    grid         = F_best - F_P        what the best-effort protocol gains f* (0 in the best-effort protocol)
    objective    = B_P - F_best        the rest: what the objective itself loses, tuned well

so ``total = optimisation + floor + grid + objective`` trial by trial. ``Q`` is
QS3ORAO (label ``qs3orao``), ``F`` the exact minimiser f* of its objective (label
``qs3orao-exact``), ``M`` the exact minimiser whose tuned values QS3ORAO trained
with (the run's ``tuned_by``, e.g. f* with ``lam`` kept above a floor; f* itself
where the run declares none), ``B`` the exact baseline (M-PNU-AUC, M-SAMULT,
SVOREX) with the highest mean AUC on the dataset in protocol ``P``. The grid part
is everything the best-effort protocol changes for f* (which has no step schedule
and no class priors): its grids and, on a dataset whose features it scales
differently (``feature_scaling``), that scaling as well. A dataset whose two runs
did not use the same data and split (:func:`unpaired_datasets`) is left out, with
why.

    python -m qs3study.tools.decomposition figures/reproduction-paper/results.csv \\
        figures/reproduction-best/results.csv --protocol paper --out figures/reproduction-paper
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.registry import METHODS as REGISTRY

from qs3study.claims.empirical import DEFAULT_CRITERIA
from qs3study.datasets import sha256_file
from qs3study.files import read_columns, refuse_foreign_files, write_with_record
from qs3study.provenance import run_manifest
from qs3study.stages.tables import comparison_auc, finished_comparison, one_draw, read_results

__all__ = ["OURS", "EXACT_REFERENCE", "BASELINES", "PARTS", "PROTOCOLS", "minimisers", "unpaired_datasets",
           "trial_decomposition", "converged_off_minimiser", "add_margin_argument", "resolve_margin", "summarise",
           "decomposition_markdown", "main"]

OURS = "qs3orao"
EXACT_REFERENCE = "qs3orao-exact"
BASELINES = tuple(m.name for m in REGISTRY.values() if m.role == "paper" and m.name != OURS)
"""The paper's exact baselines (its methods other than QS3ORAO, by the registry's roles)."""
PARTS = ("optimisation", "floor", "grid", "objective")
PROTOCOLS = ("paper", "best")
#: The columns of a results table the decomposition reads.
READ_COLUMNS = ("dataset", "method", "trial", "comparison", "status", "auc", "n_labeled", "n_unlabeled", "converged")
#: The AUC distance below the exact minimiser it trained with past which a QS3ORAO fit marked converged is counted
#: off it, unless the run's configuration or ``--margin`` says otherwise: 8f's non-inferiority margin.
MARGIN = DEFAULT_CRITERIA["non_inferiority_margin"]
#: The decomposition's record in its output folder: the files it wrote there (it overwrites no other).
RECORD = "decomposition.json"


def minimisers(manifest):
    """Column -> the exact minimiser whose tuned values it trained with (the configuration's ``tuned_by``)."""
    methods = (manifest or {}).get("config", {}).get("methods", {})
    return {name: entry["tuned_by"] for name, entry in methods.items() if (entry or {}).get("tuned_by")}


def add_margin_argument(parser):
    """Add ``--margin``: the AUC distance below its minimiser past which a converged fit is counted off it."""
    parser.add_argument("--margin", type=float,
                        help="AUC distance below its exact minimiser past which a converged fit is counted off it (default: 8f's "
                             f"non-inferiority margin, the run's claims.non_inferiority_margin, else {MARGIN:g})")


def resolve_margin(parser, given, manifest):
    """The margin given on the command line (refused unless a positive AUC distance), else the run's, else :data:`MARGIN`."""
    if given is not None:
        if not (np.isfinite(given) and given > 0):
            parser.error(f"--margin must be a positive AUC distance, got {given}")
        return given
    return (manifest or {}).get("config", {}).get("claims", {}).get("non_inferiority_margin", MARGIN)


def _sizes(sizes):
    return ", ".join(f"{labeled:,.0f} labeled and {unlabeled:,.0f} unlabeled rows"
                     for labeled, unlabeled in sorted(sizes)) or "none"


def unpaired_datasets(paper, best, manifests=(None, None)):
    """The datasets whose trials cannot be paired across the two runs, with why.

    A trial pairs only on the same data and split: the same (labeled, unlabeled) sizes over all
    rows of the dataset in both tables (a split that keeps groups apart changes the unlabeled
    pool, the largest size) and, where both runs' manifests are given, the same prepared labels
    and features. The features may differ only where the two configurations scale them
    differently (``feature_scaling``), the one preparation difference the best-effort protocol
    declares. The tables and manifests do not record the splits themselves, so a split changed
    at unchanged sizes goes unseen.

    Parameters
    ----------
    paper, best : pandas.DataFrame
        The tidy results tables of the two protocols, every row with ``n_labeled, n_unlabeled``.
    manifests : tuple of (dict or None)
        The two runs' manifests (:func:`qs3study.provenance.run_manifest`), paper first.

    Returns
    -------
    dict
        ``dataset -> reason``, sorted by dataset.
    """
    sizes = [{dataset: set(zip(rows["n_labeled"], rows["n_unlabeled"]))
              for dataset, rows in table.dropna(subset=["n_labeled", "n_unlabeled"]).groupby("dataset")}
             for table in (paper, best)]
    reasons = {dataset: f"the runs' sizes differ, so their splits do: {_sizes(sizes[0][dataset] - sizes[1][dataset])} "
                        f"in the paper protocol's only, {_sizes(sizes[1][dataset] - sizes[0][dataset])} in the "
                        "best-effort one's only"
               for dataset in sizes[0].keys() & sizes[1].keys() if sizes[0][dataset] != sizes[1][dataset]}
    if all(manifests):
        data = [manifest.get("data", {}) for manifest in manifests]
        for dataset in data[0].keys() & data[1].keys():
            scaling = {manifest["config"].get("datasets", {}).get(dataset, {}).get("feature_scaling")
                       for manifest in manifests}
            if data[0][dataset].get("y_sha256") != data[1][dataset].get("y_sha256"):
                reasons.setdefault(dataset, "prepared labels differ (y.npy checksums in the manifests)")
            elif data[0][dataset].get("X_sha256") != data[1][dataset].get("X_sha256") and len(scaling) == 1:
                reasons.setdefault(dataset, "prepared features differ (X.npy checksums in the manifests) under "
                                            "the same feature_scaling")
    return dict(sorted(reasons.items()))


def trial_decomposition(paper, best, protocol, leave_out=(), minimiser=EXACT_REFERENCE):
    """The decomposition per (dataset, trial) for ``protocol`` (``"paper"`` or ``"best"``).

    Parameters
    ----------
    paper, best : pandas.DataFrame
        The tidy results tables of the two protocols.
    protocol : {"paper", "best"}
    leave_out : collection of str
        Datasets not to pair (:func:`unpaired_datasets`).
    minimiser : str
        The label, in ``protocol``'s table, of the exact minimiser whose tuned values QS3ORAO trained
        with (the run's ``tuned_by``, :func:`minimisers`); f* itself by default, whose floor part is 0.

    Returns
    -------
    pandas.DataFrame
        ``dataset, trial, baseline, ours, minimiser, minimiser_auc, f_star, f_star_best, baseline_auc,
        total``, :data:`PARTS` and ``ours_converged`` (QS3ORAO's ``converged``: True, False, or NaN for a
        fit without a criterion); only trials where all values exist.

    Raises
    ------
    ValueError
        If the two tables are the same, one lacks QS3ORAO, f* or the minimiser at the comparison size,
        or no trial has all values.
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if paper.equals(best):
        raise ValueError("the paper and best-effort tables are the same table: give each protocol's results.csv")
    kept = [table[~table["dataset"].isin(leave_out)] for table in (paper, best)]
    own, other = (comparison_auc(table) for table in kept)
    ours = finished_comparison(kept[PROTOCOLS.index(protocol)])
    ours = ours[ours["method"] == OURS].set_index(["dataset", "trial"])
    marked = ours["converged"] if "converged" in ours else pd.Series(np.nan, index=ours.index)
    if protocol == "best":
        own, other = other, own
    f_best = (other if protocol == "paper" else own).get(EXACT_REFERENCE)
    needed = [m for m in dict.fromkeys((OURS, EXACT_REFERENCE, minimiser)) if m not in own]
    if needed or f_best is None:
        raise ValueError(f"the {protocol} table lacks {needed or [EXACT_REFERENCE]} at the comparison size")
    rows = []
    for dataset, per in own.groupby(level="dataset"):
        candidates = per[[m for m in BASELINES if m in per]].mean().dropna()
        if candidates.empty:
            continue
        baseline = candidates.idxmax()
        joined = pd.concat({"ours": per[OURS], "minimiser_auc": per[minimiser], "f_star": per[EXACT_REFERENCE],
                            "baseline_auc": per[baseline], "f_star_best": f_best}, axis=1, join="inner").dropna()
        for (name, trial), r in joined.iterrows():
            rows.append({"dataset": name, "trial": int(trial), "baseline": baseline, "ours": r["ours"],
                         "minimiser": minimiser, "minimiser_auc": r["minimiser_auc"], "f_star": r["f_star"],
                         "f_star_best": r["f_star_best"], "baseline_auc": r["baseline_auc"],
                         "total": r["baseline_auc"] - r["ours"], "optimisation": r["minimiser_auc"] - r["ours"],
                         "floor": r["f_star"] - r["minimiser_auc"], "grid": r["f_star_best"] - r["f_star"],
                         "objective": r["baseline_auc"] - r["f_star_best"],
                         "ours_converged": marked.get((name, trial), np.nan)})
    if not rows:
        raise ValueError(f"no trial of the {protocol} table ({', '.join(map(str, own.index.unique('dataset')))}) "
                         f"has QS3ORAO, {', '.join(dict.fromkeys((EXACT_REFERENCE, minimiser)))} and a baseline "
                         "finished and f* of the best-effort protocol in the other table "
                         f"({', '.join(map(str, f_best.index.unique('dataset')))}) for the same dataset and trial")
    columns = ["dataset", "trial", "baseline", "ours", "minimiser", "minimiser_auc", "f_star", "f_star_best",
               "baseline_auc", "total", *PARTS, "ours_converged"]
    return pd.DataFrame(rows, columns=columns)


def converged_off_minimiser(converged, gap, margin):
    """Which fits are marked converged yet lie more than ``margin`` AUC below their exact minimiser (``gap`` = it - fit)."""
    return converged.astype(bool) & (gap > margin)


def summarise(trials, margin=MARGIN):
    """Per dataset: mean and standard deviation over trials of the total and each part, and the converged fits.

    ``n_converged`` counts the trials whose QS3ORAO fit met its stated criterion (``ours_converged``),
    ``n_converged_off`` those of them whose AUC is more than ``margin`` below that of the minimiser they
    trained with (``minimiser``) on the same split.
    """
    if trials.empty:
        return pd.DataFrame(columns=["dataset", "baseline", "n_trials"])
    values = ["total", *PARTS]
    grouped = trials.groupby("dataset", sort=True)
    out = grouped[values].agg(["mean", "std"])
    out.columns = [f"{name}_{stat}" for name, stat in out.columns]
    out.insert(0, "n_trials", grouped.size())
    out.insert(0, "minimiser", grouped["minimiser"].first())
    out.insert(0, "baseline", grouped["baseline"].first())
    converged = trials["ours_converged"].eq(True)
    out["n_converged"] = converged.groupby(trials["dataset"]).sum()
    out["n_converged_off"] = converged_off_minimiser(converged, trials["optimisation"], margin).groupby(
        trials["dataset"]).sum()
    return out.reset_index()


def decomposition_markdown(summary, protocol, left_out=None, unchecked=(), margin=MARGIN):
    """The per-dataset table as markdown (mean ± SD over paired trials), then what was left out or not checked.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise`.
    protocol : {"paper", "best"}
    left_out : dict, optional
        ``dataset -> reason`` (:func:`unpaired_datasets`).
    unchecked : sequence of str
        The results tables without a manifest beside them, whose prepared data could not be compared.
    margin : float
        The AUC distance to the minimiser M that ``n_converged_off`` counts past (:func:`summarise`).
    """
    criterion = "n_converged" in summary and summary["n_converged"].gt(0).any()
    lines = ["| dataset | best exact baseline | trials | total gap | optimisation (M − QS3ORAO) | floor (f* − M) | "
             "grid (best-effort f* − paper f*) | objective (rest) |" + (" converged (off M) |" if criterion else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if criterion else "")]
    for r in summary.itertuples():
        cells = [f"{getattr(r, f'{v}_mean'):+.4f} ± {getattr(r, f'{v}_std'):.4f}" for v in ("total", *PARTS)]
        if criterion:
            cells.append(f"{r.n_converged} ({r.n_converged_off})")
        lines.append(f"| {r.dataset} | {r.baseline} | {r.n_trials} | " + " | ".join(cells) + " |")
    minimiser = ", ".join(f"`{m}`" for m in dict.fromkeys(summary.get("minimiser", [EXACT_REFERENCE])))
    lines += ["", f"Protocol: {protocol}. Per trial, total = B − QS3ORAO = (M − QS3ORAO) + (f* − M) + "
                  "(f*_best − f*) + (B − f*_best), with B the exact baseline of highest mean AUC in this protocol, "
                  "f* the exact minimiser of QS3ORAO's objective tuned in this protocol, M the exact minimiser "
                  f"whose tuned values QS3ORAO trained with ({minimiser}, the run's tuned_by; f* itself where it "
                  f"is `{EXACT_REFERENCE}`, whose floor part is 0), f*_best the f* of the best-effort protocol "
                  "(same split); mean ± SD over the trials finished in both tables. Positive: QS3ORAO behind. The "
                  "floor part is what M's narrower search (a lam kept above a floor) costs f*. The grid part is all the best-effort protocol changes for f*: its grids and, on a "
                  "dataset whose features it scales differently (feature_scaling), that scaling too. In the "
                  "best-effort protocol the grid part is 0 by construction."]
    if criterion:
        lines += ["", f"Converged: the trials whose QS3ORAO fit met its stated criterion (column `converged` of "
                      f"results.csv); in parentheses, those of them more than {margin:g} AUC (8f's non-inferiority "
                      "margin) below M on the same split. The criterion reads the training risk's change per "
                      "doubling of the iterations, not the distance to M: a fit whose risk falls slowly meets it "
                      "far from M."]
    if left_out:
        lines += ["", "Left out, not the same data or split in both runs:", "",
                  *(f"- {dataset}: {reason}." for dataset, reason in left_out.items())]
    if unchecked:
        lines += ["", f"Prepared data not compared: no manifest beside {', '.join(unchecked)}."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    """Command-line entry point: write ``decomposition.csv``, ``decomposition_trials.csv`` and ``decomposition.md``.

    They go into ``--out`` with the record :data:`RECORD` of the files written and the sha256 of each input
    table; a file of those names that the decomposition did not write (per its record, or unless it holds
    the same bytes) is never overwritten.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paper", type=Path, help="results.csv of the paper protocol")
    parser.add_argument("best", type=Path, help="results.csv of the best-effort protocol")
    parser.add_argument("--protocol", choices=PROTOCOLS, required=True, help="whose gap is decomposed")
    parser.add_argument("--out", type=Path, required=True, help="folder of that protocol's figures")
    add_margin_argument(parser)
    args = parser.parse_args(argv)
    try:
        inputs = {str(path): sha256_file(path) for path in (args.paper, args.best)}
        tables = [one_draw(read_columns(path, READ_COLUMNS, reader=read_results)) for path in (args.paper, args.best)]
        manifests = (run_manifest(args.paper), run_manifest(args.best))
        unchecked = [str(path) for path, manifest in zip((args.paper, args.best), manifests) if manifest is None]
        # the best-effort decomposition reads the best-effort table alone (its grid part is 0)
        left_out = unpaired_datasets(*tables, manifests) if args.protocol == "paper" else {}
        manifest = manifests[PROTOCOLS.index(args.protocol)]
        minimiser = minimisers(manifest).get(OURS, EXACT_REFERENCE)
        trials = trial_decomposition(*tables, args.protocol, leave_out=left_out, minimiser=minimiser)
        margin = resolve_margin(parser, args.margin, manifest)
        summary = summarise(trials, margin)
        markdown = decomposition_markdown(summary, args.protocol, left_out, unchecked, margin)
        contents = {"decomposition_trials.csv": trials.to_csv(index=False).encode(),
                    "decomposition.csv": summary.to_csv(index=False).encode(),
                    "decomposition.md": markdown.encode()}
        refuse_foreign_files(args.out, [*contents, RECORD], RECORD, contents)
    except (ValueError, OSError) as error:
        print(f"decomposition: {error}", file=sys.stderr)
        return 1
    write_with_record(args.out, contents, RECORD, {"protocol": args.protocol, "inputs": inputs, "margin": margin,
                                                   "minimiser": minimiser, "left_out": left_out})
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
