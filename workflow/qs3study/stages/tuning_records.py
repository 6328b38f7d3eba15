"""What the tuning records say beyond the tuned values: grid-edge hits per method, and the signal screen.

Both read the JSON records of the ``tune`` jobs (:func:`qs3study.stages.tuning.tune_job`):

- :func:`edge_table` counts, per dataset and method, the tuned values that sit on
  an edge of what was searched (after any widening, ``grid_range``), by kind
  (:func:`qs3study.kernel_width.edge_kind`), so a reader sees where a method may
  not have had its best chance;
- :func:`signal_screen` applies the fixed-level signal screen declared before the
  run (``claims.signal_level``): a dataset on which no method's cross-validated AUC
  on the labeled rows reaches the level is listed with its numbers, and is left
  out of the empirical claims. Being a maximum over methods and grid points, that
  score passes signal-free data above 0.5; the permutation screen
  (:func:`qs3study.stages.data_checks.permutation_screen_table`) sets its level by a null.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from qs3study.kernel_width import edge_kind

__all__ = ["read_records", "edge_table", "edge_markdown", "signal_screen", "SCREENED_COLUMNS", "tuning_summary_job"]

SCREENED_COLUMNS = ["dataset", "screen", "expected", "status", "reason", "best_cv_auc", "best_method"]
"""Columns of ``screened_datasets.csv``; ``screen`` is ``loading`` (a ``screen:`` entry), ``level``
(:func:`signal_screen`) or ``permutation`` (:func:`qs3study.stages.data_checks.permutation_screen_table`)."""


def read_records(paths):
    """The tuning records at ``paths`` (JSON files), as a list of dicts."""
    return [json.loads(Path(path).read_text()) for path in paths]


def edge_table(records):
    """Edge hits per (dataset, method) of the tuning records.

    Returns
    -------
    pandas.DataFrame
        ``dataset, method, trial_seed, status, n_edge_hits, n_natural_bound, n_settled, rounds, edges,
        best_params, best_cv_auc``; ``n_natural_bound`` counts the hits at a parameter's own domain
        bound, ``n_settled`` those of a widening that settled (its last round gained less than its
        ``widen_tolerance``; :func:`qs3study.kernel_width.edge_kind`), the others are on a search
        limit; ``rounds`` is the number of widened-search rounds (1 for a fixed grid).
    """
    rows = [{"dataset": r["dataset"], "method": r["method"], "trial_seed": r["seed"], "status": r["status"],
             "n_edge_hits": len(r.get("grid_edges", [])),
             **{f"n_{kind.replace(' ', '_')}": sum(edge_kind(edge) == kind for edge in r.get("grid_edges", []))
                for kind in ("natural bound", "settled")},
             "rounds": max(len(r.get("rounds", [])), 1),
             "edges": "; ".join(r.get("grid_edges", [])), "best_params": json.dumps(r.get("best_params", {}),
                                                                                  sort_keys=True),
             "best_cv_auc": r.get("best_score")} for r in records]
    columns = ["dataset", "method", "trial_seed", "status", "n_edge_hits", "n_natural_bound", "n_settled", "rounds",
               "edges", "best_params", "best_cv_auc"]
    return pd.DataFrame(rows, columns=columns).sort_values(["dataset", "method"], kind="stable")


def edge_markdown(table, labels=None):
    """Edge hits as a markdown table: datasets by rows, methods by columns, ``limit + settled + natural (rounds)`` per cell."""
    labels = labels or {}
    methods = list(dict.fromkeys(table["method"]))
    lines = ["| dataset | " + " | ".join(labels.get(m, m) for m in methods) + " |", "|" + "---|" * (len(methods) + 1)]
    for dataset, rows in table.groupby("dataset", sort=False):
        rows = rows.groupby("method").agg(hits=("n_edge_hits", "sum"), settled=("n_settled", "sum"),
                                          natural=("n_natural_bound", "sum"), rounds=("rounds", "max"))
        cells = [f"{int(rows.loc[m, 'hits'] - rows.loc[m, 'settled'] - rows.loc[m, 'natural'])} + "
                 f"{int(rows.loc[m, 'settled'])} + {int(rows.loc[m, 'natural'])} ({int(rows.loc[m, 'rounds'])})"
                 if m in rows.index else "n/a" for m in methods]
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    lines += ["", "Tuned values on an edge of the values searched (per-split weights counted one by one), as "
                  "a + s + b: a on a search limit, where a wider search might do better, s settled, on the edge of "
                  "a widened search whose last round moved the best CV AUC by less than the declared "
                  "widen_tolerance (widening no longer paid), b on a natural bound, the parameter's own domain "
                  "bound (a trade-off of 0 or 1, an L2 penalty of 0), which no search can pass; in brackets the "
                  "rounds of the widened search (1: the configured grid alone). A search-limit hit that remains "
                  "after widening sits on the configuration's declared limit (grid_range); the values, and each "
                  "settled hit's last gain, are in grid_edges.csv."]
    return "\n".join(lines) + "\n"


def signal_screen(records, level):
    """Datasets on which no method's cross-validated AUC on the labeled rows reaches ``level``.

    Parameters
    ----------
    records : list of dict
        Tuning records (of the trial each dataset's screen reads).
    level : float
        The declared level.

    Returns
    -------
    pandas.DataFrame
        One row per dataset with :data:`SCREENED_COLUMNS`; ``status`` is ``no_signal``
        (screened out of the claims) or ``signal`` (counted), ``reason`` gives every method's score.
    """
    by_dataset = {}
    for record in records:
        if record.get("best_score") is not None:
            by_dataset.setdefault(record["dataset"], {})[record["method"]] = float(record["best_score"])
    rows = []
    for dataset, scores in sorted(by_dataset.items()):
        best_method = max(scores, key=scores.get)
        best = scores[best_method]
        listed = ", ".join(f"{m} {s:.4f}" for m, s in sorted(scores.items(), key=lambda item: -item[1]))
        rows.append({"dataset": dataset, "screen": "level", "expected": f"signal screen: some method's CV AUC >= {level:g}",
                     "status": "no_signal" if best < level else "signal",
                     "reason": f"best cross-validated AUC on the labeled rows {best:.4f} ({best_method}) "
                               f"{'<' if best < level else '>='} {level:g}; every method: {listed}",
                     "best_cv_auc": best, "best_method": best_method})
    return pd.DataFrame(rows, columns=SCREENED_COLUMNS)


def tuning_summary_job(smk):
    """Snakemake job of rule ``tuning_summary``: ``grid_edges.csv`` and ``grid_edges.md`` from the tuning records.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    from qs3study.files import atomic_path
    from qs3study.runtime import setup_logging

    log = setup_logging(smk.log[0])
    table = edge_table(read_records(smk.input.records))
    log.info("edge hits per method:\n%s", table.groupby("method")["n_edge_hits"].sum().to_string())
    with atomic_path(smk.output.csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(smk.output.md) as tmp:
        Path(tmp).write_text(edge_markdown(table, smk.params.get("labels")))
