"""A refit pilot: a committed run's QS3ORAO comparison fits refitted with only a candidate's parameters changed.

The design (a YAML file, fixed before the run, such as ``workflow/config/step-offset-pilot.yaml`` or
``workflow/config/iteration-cap-pilot.yaml``) names a committed run's ``results.csv``, the QS3ORAO
columns, the tuning draw, the trials and the candidate parameters. Every selected fit is refitted on
the same rows, seed and tuned values (:func:`qs3study.stages.training.fit_and_score`, the pipeline's
own trial) with the candidate's parameters, and the trials of ``reproduce_trials`` once more
unchanged, as a check of the harness: they must give the committed iteration count, convergence flag
and AUC. ``tuning_draw`` is one draw or a list of them. Optional keys: ``stopped_at`` keeps only the
fits whose committed iteration count it is; ``reference`` maps each column to the method of its
exact minimiser in the same table (f*, on the same split), and ``margin`` is the AUC distance below
it at which a converged fit counts as off its minimiser; ``decision`` is ``bar`` (the default: both
columns at the converged-fit bar), ``reference`` (fewer converged fits off their minimiser than
committed) or ``measurement`` (the design adopts nothing, whatever the pilot finds; its verdicts are
reported, not decided on). Each fit is written to ``--work`` (default ``results/<design name>``) as it finishes (an
interrupted pilot goes on where it stopped, and a work folder left by another design or another
commit is refused); then ``--out`` gets ``fits.csv`` (one row per refit beside its committed
values), ``summary.csv`` and ``summary.md`` (converged fits per column with a Clopper-Pearson
interval, the verdict against the design's bar, the AUC change) and the record ``pilot_record.json``
(the design, the inputs' sha256, the code's commit and the package versions).

    python -m qs3study.tools.refit_pilot workflow/config/step-offset-pilot.yaml \\
        --data results/data --out figures/step-offset-pilot --jobs 2
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import yaml

from qs3study.claims.verdicts import bar_verdict
from qs3study.datasets import sha256_file
from qs3study.datasets.registry import get_spec
from qs3study.files import read_json, refuse_foreign_files, write_json, write_with_record
from qs3study.provenance import git_state
from qs3study.runtime import limit_threads, package_versions
from qs3study.stages.tables import read_results
from qs3study.stages.training import fit_and_score
from qs3study.tools.decomposition import converged_off_minimiser

__all__ = ["RECORD", "CANDIDATE", "COMMITTED", "DECISIONS", "read_design", "pilot_tasks", "refit", "summarise",
           "adopted", "summary_markdown", "main"]

RECORD = "pilot_record.json"
WORK_STAMP = "pilot_work.json"
OUTPUTS = ("fits.csv", "summary.csv", "summary.md")
CANDIDATE, COMMITTED = "candidate", "committed"
_DESIGN_KEYS = {"name", "results", "methods", "tuning_draw", "trials", "candidate", "reproduce_trials", "n_labeled",
                "bar", "auc_tolerance", "confidence"}
_OPTIONAL_KEYS = {"stopped_at": None, "reference": None, "margin": None, "decision": "bar"}
DECISIONS = ("bar", "reference", "measurement")
_AUC_DIGITS = 1e-9
_REPOSITORY = Path(__file__).resolve().parents[3]


def read_design(path):
    """The pilot's design: every required key present, no unknown one, the optional ones filled with their defaults.

    Raises
    ------
    ValueError
        Naming the missing or unknown keys, or a ``decision`` that is not one of :data:`DECISIONS` or
        that reads a ``reference`` and ``margin`` the design does not give.
    """
    design = yaml.safe_load(Path(path).read_text())
    missing, unknown = _DESIGN_KEYS - set(design), set(design) - _DESIGN_KEYS - set(_OPTIONAL_KEYS)
    if missing or unknown:
        raise ValueError(f"{path}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}")
    design = {**_OPTIONAL_KEYS, **design}
    if design["decision"] not in DECISIONS:
        raise ValueError(f"{path}: decision must be one of {DECISIONS}, got {design['decision']!r}")
    if (design["reference"] is None) != (design["margin"] is None):
        raise ValueError(f"{path}: reference and margin are given together or not at all")
    if design["decision"] == "reference" and design["reference"] is None:
        raise ValueError(f"{path}: decision 'reference' needs a reference and a margin")
    return design


def _draws(design):
    draw = design["tuning_draw"]
    return list(draw) if isinstance(draw, list) else [draw]


def pilot_tasks(results, design):
    """The refits the design asks for: ``(variant, committed row)`` pairs, candidate refits first.

    Parameters
    ----------
    results : DataFrame
        The committed run's results table.
    design : dict
        From :func:`read_design`.

    Each row carries ``reference_auc``, its exact minimiser's AUC on the same split, when the design
    names a ``reference``. With ``stopped_at``, the population is checked complete before it is cut
    to the fits that stopped there.

    Raises
    ------
    ValueError
        When a selected (dataset, method, tuning draw, trial) has no committed fit, or no reference.
    """
    valid = results["comparison"].astype(bool) & (results["status"] == "ok") & results["tuning_draw"].isin(_draws(design))
    chosen = results[valid & results["method"].isin(design["methods"])]
    tasks = []
    for variant, trials in ((CANDIDATE, design["trials"]), (COMMITTED, design["reproduce_trials"])):
        rows = chosen[chosen["trial"].isin(trials)].sort_values(["dataset", "method", "tuning_draw", "trial"])
        expected = rows["dataset"].nunique() * len(design["methods"]) * len(_draws(design)) * len(trials)
        if len(rows) != expected:
            raise ValueError(f"{len(rows)} committed fits for the {variant} refits, {expected} expected "
                             f"(every dataset x {design['methods']} x tuning draws {_draws(design)} x trials {trials})")
        if design["stopped_at"] is not None:
            rows = rows[rows["n_iter_fitted"] == design["stopped_at"]]
        tasks += [(variant, row) for row in rows.to_dict("records")]
    if design["reference"] is not None:
        keys = ["dataset", "tuning_draw", "trial"]
        for method, reference in design["reference"].items():
            found = results[valid & (results["method"] == reference)].set_index(keys)["auc"]
            for _, row in tasks:
                if row["method"] == method:
                    key = tuple(row[k] for k in keys)
                    if key not in found.index:
                        raise ValueError(f"no {reference} fit for {row['dataset']} tuning draw {row['tuning_draw']} "
                                         f"trial {row['trial']}, the reference of its {method} fit")
                    row["reference_auc"] = float(found.loc[key])
    return tasks


def _task_name(variant, row):
    return f"{row['dataset']}.{row['method']}.d{row['tuning_draw']}.t{row['trial']}.{variant}"


def refit(variant, row, design, data):
    """Refit one committed fit (the candidate's parameters, or unchanged) and return its result record.

    A fit that raises (a diverging one, for example) is recorded ``failed`` with the error.
    """
    params = json.loads(row["params"])
    if variant == CANDIDATE:
        params.update(design["candidate"])
    spec = {"method": row["base_method"], "params": params, "memory_budget_mb": row["memory_budget_mb"]}
    record = {"seed": int(row["seed"]), "size": str(row["size"]), "warnings": [], "params": params}
    folder = Path(data, row["dataset"])
    log = logging.getLogger(f"refit_pilot.{_task_name(variant, row)}")
    with limit_threads(1):
        try:
            fit_and_score(folder / "X.npy", folder / "y.npy", spec, {}, record, log, n_labeled=design["n_labeled"],
                          kernel_width=row["kernel_width"], group_column=get_spec(row["dataset"]).group_column)
        except Exception as error:  # noqa: BLE001 - a failed refit is a result of the pilot
            record.update(status="failed", reason=" ".join(f"{type(error).__name__}: {error}".split()))
    return {"dataset": row["dataset"], "method": row["method"], "tuning_draw": int(row["tuning_draw"]),
            "trial": int(row["trial"]), "variant": variant,
            **{key: str(params.get(key)) for key in design["candidate"]}, "status": record["status"],
            "reason": record.get("reason", ""), "n_iter_fitted": record.get("n_iter_fitted"),
            "converged": record.get("converged"), "auc": record.get("auc"), "fit_time": record.get("fit_time"),
            "committed_n_iter": row["n_iter_fitted"], "committed_converged": bool(row["converged"]),
            "committed_auc": row["auc"], "reference_auc": row.get("reference_auc"),
            "warnings": " | ".join(record["warnings"])}


def _run_task(args):
    variant, row, design, data, path = args
    write_json(path, refit(variant, row, design, data))
    return path


def claim_work_folder(work, stamp):
    """Make ``work`` the folder of the refits that ``stamp`` (the design and the code's git state) describes.

    Raises
    ------
    ValueError
        When ``work`` holds the refits of another stamp: resuming there would mix them into this pilot.
    """
    path = Path(work, WORK_STAMP)
    if path.exists():
        found = read_json(path)
        if found != stamp:
            changed = sorted(key for key in {*found, *stamp} if found.get(key) != stamp.get(key))
            raise ValueError(f"{work} holds the refits of another pilot ({', '.join(changed)} differ): "
                             f"choose another --work folder or empty this one")
    else:
        write_json(path, stamp)


def run_pilot(tasks, design, data, work, jobs, stamp):
    """Every task's record, refitting those not yet in ``work`` on ``jobs`` processes (progress on stderr).

    ``stamp`` (see :func:`claim_work_folder`) is checked against the folder before anything is reused.
    """
    work = Path(work)
    claim_work_folder(work, stamp)
    paths = [work / f"{_task_name(variant, row)}.json" for variant, row in tasks]
    todo = [(variant, row, design, data, path) for (variant, row), path in zip(tasks, paths) if not path.exists()]
    print(f"{len(tasks) - len(todo)} of {len(tasks)} refits already in {work}; {len(todo)} to run", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for done, path in enumerate(pool.map(_run_task, todo), 1):
            print(f"[{done}/{len(todo)}] {path.stem}", file=sys.stderr, flush=True)
    return pd.DataFrame([read_json(path) for path in paths])


def reproduction_failures(fits):
    """The unchanged refits that do not give their committed iterations, flag and AUC (to 1e-9)."""
    check = fits[fits["variant"] == COMMITTED]
    same = ((check["status"] == "ok") & (check["n_iter_fitted"] == check["committed_n_iter"])
            & (check["converged"].astype(bool) == check["committed_converged"])
            & ((check["auc"] - check["committed_auc"]).abs() <= _AUC_DIGITS))
    return check[~same]


def summarise(fits, design):
    """Per column: the candidate's converged fits with their interval and verdict, the committed ones, the AUC change.

    Verdicts: ``reaches the bar`` (share >= bar), ``below the bar`` (the interval's upper end < bar),
    else ``inconclusive``; all ``not reproduced`` when the harness check failed. With a ``reference``,
    also the converged fits off their minimiser
    (:func:`qs3study.tools.decomposition.converged_off_minimiser`), candidate and committed, and
    the mean AUC distance to it.
    """
    reproduced = reproduction_failures(fits).empty
    rows = []
    for method, group in fits[fits["variant"] == CANDIDATE].groupby("method", sort=True):
        n = len(group)
        is_converged = group["status"].eq("ok") & group["converged"].eq(True)
        converged = int(is_converged.sum())
        low, high, verdict = bar_verdict(converged, n, bar=design["bar"], confidence=design["confidence"])
        if not reproduced:
            verdict = "not reproduced"
        change = (group["auc"] - group["committed_auc"]).mean()
        if design["reference"] is not None:
            gap = group["reference_auc"] - group["auc"]
            committed_gap = group["reference_auc"] - group["committed_auc"]
            reference = {"off_reference": int(converged_off_minimiser(is_converged, gap, design["margin"]).sum()),
                         "committed_off_reference": int(converged_off_minimiser(
                             group["committed_converged"], committed_gap, design["margin"]).sum()),
                         "mean_reference_gap": gap.mean(), "committed_mean_reference_gap": committed_gap.mean()}
        else:
            reference = {}
        rows.append({"method": method, "fits": n, "converged": converged, "share": converged / n, "interval_low": low,
                     "interval_high": high, "verdict": verdict,
                     "committed_converged": int(group["committed_converged"].sum()),
                     "failed": int(group["status"].ne("ok").sum()), "mean_auc_change": change,
                     "no_worse": bool(change >= -design["auc_tolerance"]),
                     "median_iterations": float(group["n_iter_fitted"].median()),
                     "committed_median_iterations": float(group["committed_n_iter"].median()), **reference})
    return pd.DataFrame(rows)


def adopted(summary, design):
    """The design's decision on the summary: whether the candidate is adopted for the next rerun.

    Both rules need every column without a failed fit and no worse in AUC. ``bar``: every column
    reaches the bar. ``reference``: the harness check reproduced and, summed over the columns, fewer
    converged fits lie off their minimiser than in the committed run. ``measurement`` adopts nothing.
    """
    if design["decision"] == "measurement" or summary.empty or not (summary["failed"].eq(0).all() and summary["no_worse"].all()):
        return False
    if design["decision"] == "bar":
        return bool(summary["verdict"].eq("reaches the bar").all())
    return bool(summary["verdict"].ne("not reproduced").all()
                and summary["off_reference"].sum() < summary["committed_off_reference"].sum())


def summary_markdown(fits, summary, design):
    """The pilot's report: the harness check, the verdict per column, the decision and the fits by dataset."""
    failures = reproduction_failures(fits)
    checked = int((fits["variant"] == COMMITTED).sum())
    candidate = ", ".join(f"{key} = {value}" for key, value in design["candidate"].items())
    stopped = "" if design["stopped_at"] is None else f" that stopped at {design['stopped_at']:,} iterations"
    lines = [f"# Refit pilot {design['name']} ({candidate})", "",
             f"Design: `{design['name']}`; fits of `{design['results']}`, tuning draws {_draws(design)}, "
             f"trials {design['trials']}{stopped}, refitted with {candidate} and nothing else changed.", "",
             "## Harness check", "",
             (f"{checked} committed fits refitted unchanged: all give their committed iterations, convergence flag "
              f"and AUC (to 1e-9)." if failures.empty else
              f"{len(failures)} of {checked} committed fits refitted unchanged differ from the committed run "
              f"({', '.join(failures.apply(lambda r: f'{r.dataset} {r.method} trial {r.trial}', axis=1))}): "
              f"no verdict."), "",
             f"## Converged fits (bar {design['bar']:.0%}, Clopper-Pearson {design['confidence']:.0%} interval)", "",
             "| column | converged (candidate) | interval | verdict | converged (committed) | failed | "
             "median iterations (committed) | mean AUC change | no worse |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in summary.itertuples():
        lines.append(f"| {row.method} | {row.converged} of {row.fits} ({row.share:.0%}) | "
                     f"{row.interval_low:.2f}-{row.interval_high:.2f} | {row.verdict} | {row.committed_converged} of "
                     f"{row.fits} | {row.failed} | {row.median_iterations:,.0f} ({row.committed_median_iterations:,.0f}) "
                     f"| {row.mean_auc_change:+.4f} | {'yes' if row.no_worse else 'no'} |")
    if design["reference"] is not None:
        lines += ["", f"## Against the exact minimiser (converged fits more than {design['margin']} AUC below it)", "",
                  "| column | reference | converged off it (candidate / committed) | mean AUC below it "
                  "(candidate / committed) |", "|---|---|---|---|"]
        for row in summary.itertuples():
            lines.append(f"| {row.method} | {design['reference'][row.method]} | {row.off_reference} / "
                         f"{row.committed_off_reference} of {row.fits} | {row.mean_reference_gap:+.4f} / "
                         f"{row.committed_mean_reference_gap:+.4f} |")
    unmet = {"bar": "it does not bring both columns to the bar without a failed fit and without losing accuracy.",
             "reference": "it does not leave fewer converged fits off their exact minimiser without a failed fit "
                          "and without losing accuracy.",
             "measurement": "the design is a measurement, which adopts nothing whatever it finds."}[design["decision"]]
    lines += ["", "Decision (declared in the design): the candidate is "
              + ("adopted for the next best-effort rerun." if adopted(summary, design) else f"not adopted: {unmet}"),
              "", "## By dataset", "",
              "| dataset | column | converged (candidate / committed) | mean AUC (candidate / committed"
              + (" / minimiser" if design["reference"] is not None else "") + ") | failed |",
              "|---|---|---|---|---|"]
    per = fits[fits["variant"] == CANDIDATE].groupby(["dataset", "method"], sort=True)
    for (dataset, method), group in per:
        minimiser = "" if design["reference"] is None else f" / {group['reference_auc'].mean():.4f}"
        lines.append(f"| {dataset} | {method} | {int(group['converged'].eq(True).sum())} / "
                     f"{int(group['committed_converged'].sum())} of {len(group)} | {group['auc'].mean():.4f} / "
                     f"{group['committed_auc'].mean():.4f}{minimiser} | {int(group['status'].ne('ok').sum())} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("design", help="the pilot's design (YAML)")
    parser.add_argument("--data", required=True, help="folder of the prepared arrays, <dataset>/X.npy and y.npy")
    parser.add_argument("--out", required=True, help="folder of the pilot's outputs")
    parser.add_argument("--work", help="folder of the finished refits (default: results/<design name>)")
    parser.add_argument("--jobs", type=int, default=1, help="processes, one thread each")
    args = parser.parse_args(argv)
    design = read_design(args.design)
    refuse_foreign_files(args.out, OUTPUTS, RECORD)
    tasks = pilot_tasks(read_results(design["results"]), design)
    code = git_state(_REPOSITORY)
    work = args.work or Path("results", design["name"])
    fits = run_pilot(tasks, design, args.data, work, args.jobs, {"design": design, "git": code})
    summary = summarise(fits, design)
    contents = {"fits.csv": fits.to_csv(index=False).encode(), "summary.csv": summary.to_csv(index=False).encode(),
                "summary.md": summary_markdown(fits, summary, design).encode()}
    data = {f"{dataset}/{name}": sha256_file(Path(args.data, dataset, name))
            for dataset in sorted({row["dataset"] for _, row in tasks}) for name in ("X.npy", "y.npy")}
    write_with_record(args.out, contents, RECORD, {
        "command": " ".join(["python -m qs3study.tools.refit_pilot", *(argv or sys.argv[1:])]),
        "design": args.design, "design_content": design, "data": str(args.data), "git": code,
        "versions": package_versions(),
        "inputs": {design["results"]: sha256_file(design["results"]), **data}})
    print(contents["summary.md"].decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
