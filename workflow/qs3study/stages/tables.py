"""The tidy results table and the AUC summary computed from it.

One row per (dataset, method, unlabeled size, trial, tuning draw): the trials' result files
(:func:`qs3study.stages.training.train_job`). ``tuning_draw`` is 0 for the study's single
tuning, and 1, 2, ... for the comparison-size rows of the methods ``tuning.draw_methods`` trains
again at the values of a search drawn again (``tuning.draws``); a table written before the
column existed reads as draw 0 throughout. Every reader of one table per run reads draw 0
(:func:`one_draw`); the empirical claims read each draw. Columns listed in
:data:`MEASUREMENT_COLUMNS` are measurements of the machine (times, memory, and the
machine session and speed they were measured in);
every other column is a deterministic function of the configuration and the
code, and is reproduced bit for bit by a rerun. ``converged`` is True or False
for a fit with a stated convergence criterion (whether it met it before its
iteration limit) and empty for the others, and in tables written before the
column existed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from qs3study.files import atomic_path
from qs3study.kernel_width import warning_kinds
from qs3study.runtime import setup_logging

KEY_COLUMNS = ["dataset", "method", "size", "trial", "tuning_draw"]
COLUMNS = [
    "dataset", "method", "base_method", "trial", "seed", "size", "comparison", "n_labeled", "n_unlabeled",
    "n_features", "n_classes", "status", "reason", "auc", "auc_splits", "mae", "accuracy", "constant_mae",
    "constant_accuracy", "params", "tuned", "tuning_status", "tuning_draw",
    "kernel_width", "gamma_scale", "gamma_absolute", "kernel_mean_offdiag", "warnings", "n_iter_fitted", "converged",
    "memory_budget_mb",
    "memory_estimate_mb", "fit_time", "predict_time", "peak_memory_mb", "rss_before_fit_mb", "trial_wall_s",
    "job_cpu_s", "machine_session", "calibration_s", "versions",
]
MEASUREMENT_COLUMNS = ["fit_time", "predict_time", "peak_memory_mb", "rss_before_fit_mb", "trial_wall_s", "job_cpu_s",
                       "machine_session", "calibration_s"]
STATUSES = ("ok", "out_of_memory_budget", "failed", "beyond_pool")


def _size_order(token):
    return math.inf if token == "all" else int(token)


def build_results(result_paths, comparison_sizes):
    """Assemble the tidy results table.

    Parameters
    ----------
    result_paths : list of path-like
        The trials' JSON result files written by :func:`qs3study.stages.training.train_job`.
    comparison_sizes : dict
        Dataset -> size token of its AUC comparison (marks ``comparison`` rows).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`, sorted by dataset, method, size, trial.
    """
    rows = []
    for result_path in result_paths:
        record = json.loads(Path(result_path).read_text())
        record["comparison"] = record["size"] == comparison_sizes[record["dataset"]]
        record["params"] = json.dumps(record["params"], sort_keys=True)
        record["versions"] = json.dumps(record["versions"], sort_keys=True)
        record["warnings"] = "; ".join(record.get("warnings", []))
        rows.append(record)
    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    order = table["size"].map(_size_order)
    table = table.assign(_order=order).sort_values(["dataset", "method", "_order", "trial"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)


#: Columns that a results table written before they existed is given on reading: (column, the column it
#: follows, the column it precedes, its fill, its dtype); ``None`` where the position is given by the other.
_LATER_COLUMNS = (("converged", "n_iter_fitted", None, np.nan, object),
                  ("tuning_draw", "tuning_status", None, 0, "int64"),
                  ("machine_session", None, "versions", np.nan, object),
                  ("calibration_s", None, "versions", np.nan, float))


def read_results(path):
    """Read the results CSV back with the dtypes :func:`build_results` produced.

    A table written before a column existed gets it: ``converged``, ``machine_session`` and ``calibration_s``
    empty, ``tuning_draw`` 0 (one tuning).
    """
    text = ("reason", "size", "status", "warnings", "kernel_width", "machine_session")
    table = pd.read_csv(path, dtype={c: str for c in text if c != "status"}, keep_default_na=False,
                        na_values={c: [""] for c in COLUMNS if c not in text})
    for column, after, before, fill, dtype in _LATER_COLUMNS:
        if column not in table:
            if after in table:
                where = table.columns.get_loc(after) + 1
            else:
                where = table.columns.get_loc(before) if before in table else len(table.columns)
            table.insert(where, column, pd.Series(fill, index=table.index, dtype=dtype))
    return table


def tuning_draws(table):
    """The tuning draws of ``table``, sorted (``[0]`` for a table without the column).

    Raises
    ------
    ValueError
        If some row has no draw.
    """
    if "tuning_draw" not in table:
        return [0]
    if table["tuning_draw"].isna().any():
        raise ValueError(f"{int(table['tuning_draw'].isna().sum())} rows of the results table have no tuning_draw")
    return sorted(int(d) for d in table["tuning_draw"].unique())


def one_draw(table, draw=0):
    """The rows of ``table`` as trained at tuning draw ``draw``: one row per (dataset, method, size, trial).

    A (dataset, method, size) trained at ``draw`` gives that draw's rows; any other gives its draw-0
    rows (a method tuned once, or a size the draws do not cover). Draw 0 is the study's single tuning.

    Raises
    ------
    ValueError
        If ``draw`` is not one of :func:`tuning_draws`.
    """
    draws = tuning_draws(table)
    if draw not in draws:
        raise ValueError(f"draw must be one of the table's tuning draws {draws}, got {draw!r}")
    if len(draws) == 1:  # the table of a run tuned once, as it is
        return table
    cell = ["dataset", "method", "size"]
    at_draw = table["tuning_draw"] == draw
    drawn = pd.MultiIndex.from_frame(table.loc[at_draw, cell].drop_duplicates())
    keep = at_draw | ((table["tuning_draw"] == 0) & ~pd.MultiIndex.from_frame(table[cell]).isin(drawn))
    return table[keep]


def unconverged(table):
    """Boolean mask of the rows of ``table`` whose fit reached its iteration limit unconverged (``converged`` False)."""
    if "converged" not in table:
        return pd.Series(False, index=table.index)
    return table["converged"].eq(False)


def finished_comparison(table):
    """The rows of ``table`` at the comparison size whose fit finished (``status == "ok"``)."""
    return table[table["comparison"].astype(bool) & (table["status"] == "ok")]


def comparison_auc(table):
    """AUC of the finished comparison rows: index ``(dataset, trial)``, one column per method label."""
    return finished_comparison(table).pivot_table(index=["dataset", "trial"], columns="method", values="auc")


def paired_tests(reference, other):
    """Paired two-sided tests of equal mean AUC across trials.

    Returns
    -------
    dict
        ``p_ttest`` (paired t-test), ``p_wilcoxon`` (Wilcoxon signed-rank,
        exact for small samples) and ``n_pairs``; NaN p-values when fewer than
        two pairs or no difference at all.
    """
    from scipy import stats

    pairs = pd.concat([reference, other], axis=1, join="inner").dropna()
    n = len(pairs)
    result = {"n_pairs": n, "p_ttest": np.nan, "p_wilcoxon": np.nan}
    if n < 2:
        return result
    diff = pairs.iloc[:, 0] - pairs.iloc[:, 1]
    if np.all(diff == 0):
        return result
    if diff.std(ddof=1) > 0:
        result["p_ttest"] = float(stats.ttest_rel(pairs.iloc[:, 0], pairs.iloc[:, 1]).pvalue)
    result["p_wilcoxon"] = float(stats.wilcoxon(pairs.iloc[:, 0], pairs.iloc[:, 1]).pvalue)
    return result


def holm(p_values):
    """Holm's step-down adjustment of ``p_values`` (family-wise error control); NaN entries stay NaN.

    The adjusted value of the ``i``-th smallest of ``m`` p-values is
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``; rejecting where it is below
    ``alpha`` controls the family-wise error rate at ``alpha``.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(2).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    order = finite[np.argsort(p[finite], kind="stable")]
    m = order.size
    running = 0.0
    for i, index in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[index]))
        adjusted[index] = running
    return adjusted


def auc_summary(table, reference, methods):
    """Mean and standard deviation of the unlabeled AUC per dataset and method, with paired tests.

    Uses the ``comparison`` rows with status ``ok``. Each method is tested
    against ``reference`` on the trials where both ran (same seed, same split).

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table.
    reference : str
        Method label every other method is compared with.
    methods : list of str
        Method labels, in display order.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, method): ``n_unlabeled``, ``n_trials``,
        ``auc_mean``, ``auc_std``, ``mae_mean``, ``accuracy_mean`` (the predicted labels),
        ``constant_mae``, ``constant_accuracy`` (the constant prediction of the labeled rows'
        majority class, on the same trials), ``best`` (highest mean AUC of the dataset),
        ``diff_vs_reference`` (mean of reference minus method), ``p_ttest``, ``p_holm`` (the t-test's p-value, Holm-adjusted
        over every test of the table), ``p_wilcoxon``, ``n_pairs``, ``not_ok``
        (trials that did not finish, by status) and ``n_warnings`` (finished
        trials with a warning: degenerate kernel, tuned value on a grid edge), split into
        ``n_search_limit`` (a tuned value on a search limit), ``n_settled`` (else a tuned value on the
        edge of a widening that settled), ``n_natural_bound`` (tuned values on the edge only at a
        parameter's natural bound) and ``n_other_warnings`` (any other warning;
        :func:`qs3study.kernel_width.warning_kinds`), and ``n_unconverged`` (finished trials whose fit
        reached its iteration limit without meeting its convergence criterion, :func:`unconverged`).
    """
    comparison = table[table["comparison"].astype(bool)]
    rows = []
    for dataset, per_dataset in comparison.groupby("dataset", sort=False):
        ok = per_dataset[per_dataset["status"] == "ok"]
        constant = {name: np.nan for name in ("constant_mae", "constant_accuracy")}
        if "constant_mae" in per_dataset:  # the same split, hence the same value, for every method of a trial
            known = per_dataset.dropna(subset=["constant_mae"]).groupby("trial")[list(constant)].first()
            constant = {name: known[name].mean() if len(known) else np.nan for name in constant}
        auc = ok.pivot_table(index="trial", columns="method", values="auc")
        for method in methods:
            runs = per_dataset[per_dataset["method"] == method]
            values = auc[method].dropna() if method in auc else pd.Series(dtype=float)
            row = {"dataset": dataset, "method": method,
                   "n_unlabeled": int(runs["n_unlabeled"].max()) if runs["n_unlabeled"].notna().any() else None,
                   "n_trials": len(values), "auc_mean": values.mean() if len(values) else np.nan,
                   "auc_std": values.std(ddof=1) if len(values) > 1 else np.nan,
                   **{f"{name}_mean": ok.loc[ok["method"] == method, name].mean() for name in ("mae", "accuracy")},
                   **constant,
                   "not_ok": ", ".join(f"{s}: {n}" for s, n in runs.loc[runs["status"] != "ok", "status"]
                                       .value_counts().sort_index().items()),
                   **_warning_counts(runs),
                   "n_unconverged": int(unconverged(runs)[runs["status"] == "ok"].sum())}
            if method != reference and reference in auc and len(values):
                ref = auc[reference].dropna()
                joined = pd.concat([ref, values], axis=1, join="inner")
                row["diff_vs_reference"] = float((joined.iloc[:, 0] - joined.iloc[:, 1]).mean())
                row.update(paired_tests(ref, values))
            rows.append(row)
    columns = ["dataset", "method", "n_unlabeled", "n_trials", "auc_mean", "auc_std", "mae_mean", "accuracy_mean",
               "constant_mae", "constant_accuracy", "best", "diff_vs_reference", "p_ttest", "p_holm", "p_wilcoxon",
               "n_pairs", "not_ok", "n_warnings", "n_search_limit", "n_settled", "n_natural_bound", "n_other_warnings",
               "n_unconverged"]
    summary = pd.DataFrame(rows).reindex(columns=columns)
    summary["p_holm"] = holm(summary["p_ttest"])
    top = summary.groupby("dataset", sort=False)["auc_mean"].transform("max")
    summary["best"] = summary["auc_mean"].notna() & (summary["auc_mean"] == top)
    return summary


def _warning_counts(runs):
    """Finished trials of ``runs`` with a warning, and by kind (:func:`qs3study.kernel_width.warning_kinds`)."""
    texts = runs.loc[runs["status"] == "ok", "warnings"].fillna("") if "warnings" in runs else pd.Series(dtype=str)
    kinds = [warning_kinds(text) for text in texts]
    return {"n_warnings": int((texts != "").sum()),
            **{column: sum(kind in found for found in kinds) for column, kind in WARNING_COLUMNS.items()}}


def _unfinished(not_ok):
    """Number of trials in an ``not_ok`` entry of :func:`auc_summary` ("failed: 1, out_of_memory_budget: 2")."""
    return sum(int(part.rsplit(": ", 1)[1]) for part in not_ok.split(", ")) if not_ok else 0


def _cell(row, reference, alpha):
    if row["n_trials"] == 0:
        return f"n/a ({row['not_ok']})" if row["not_ok"] else "n/a"
    text = f"{row['auc_mean']:.4f} ± {row['auc_std']:.4f}" if row["n_trials"] > 1 else f"{row['auc_mean']:.4f}"
    if row.get("best"):
        text = f"**{text}**"
    if row["not_ok"]:
        total = row["n_trials"] + _unfinished(row["not_ok"])
        text += f" [{row['n_trials']} of {total} trials finished; {row['not_ok']}]"
    if row["method"] != reference and not np.isnan(row.get("p_holm", np.nan)):
        mark = ""
        if row["p_holm"] < alpha:
            mark = " ▲" if row["diff_vs_reference"] > 0 else " ▼"
        text += f" (p={row['p_holm']:.3g}{mark})"
    for column, kind in WARNING_COLUMNS.items():
        if row.get(column, 0):
            text += f" [{int(row[column])} {WARNING_MARKS[kind]}]"
    if row.get("n_unconverged", 0):
        text += f" [{int(row['n_unconverged'])} unconverged]"
    if not np.isnan(row.get("mae_mean", np.nan)):
        text += f"; MAE {row['mae_mean']:.3f}, acc. {row['accuracy_mean']:.3f}"
    return text


def _constant_cell(rows):
    """The constant-prediction reference of a dataset: mean MAE and accuracy over the trials that ran."""
    mae, acc = rows["constant_mae"].iloc[0], rows["constant_accuracy"].iloc[0]
    return "n/a" if np.isnan(mae) else f"0.5 (by definition); MAE {mae:.3f}, acc. {acc:.3f}"


ROLE_MARKS = {"paper": "", "alternative": " †", "reference": " ‡"}
#: Column of :func:`auc_summary` -> the kind of warning it counts (:func:`qs3study.kernel_width.warning_kinds`).
WARNING_COLUMNS = {"n_search_limit": "search limit", "n_settled": "settled", "n_natural_bound": "natural bound",
                   "n_other_warnings": "other"}
WARNING_MARKS = {"search limit": "on a search limit", "settled": "on a settled edge", "natural bound": "on a natural bound",
                 "other": "warned"}


def summary_markdown(summary, reference, labels, alpha=0.05, *, roles=None, titles=None):
    """Render :func:`auc_summary` as a markdown table, datasets by rows and methods by columns.

    Parameters
    ----------
    summary : pandas.DataFrame
    reference : str
    labels : dict
        Method -> display name, in display order.
    alpha : float, default=0.05
        Level of the ▲/▼ marks.
    roles : dict, optional
        Method -> role (:data:`baselines.registry.ROLES`); added methods are marked † and the reference ‡.
    titles : dict, optional
        Dataset -> the name shown (e.g. with its relation to the paper's datasets).

    Returns
    -------
    str
    """
    methods = list(labels)
    roles = roles or {}
    titles = titles or {}
    header = "| dataset | n unlabeled | " + " | ".join(labels[m] + ROLE_MARKS[roles.get(m, "paper")]
                                                      for m in methods) + " | constant (majority class) |"
    lines = [header, "|" + "---|" * (len(methods) + 3)]
    for dataset, rows in summary.groupby("dataset", sort=False):
        rows = rows.set_index("method")
        n_unlabeled = rows["n_unlabeled"].dropna()
        cells = [_cell(rows.loc[m].to_dict() | {"method": m}, reference, alpha) for m in methods]
        size = str(int(n_unlabeled.max())) if len(n_unlabeled) else "?"
        lines.append(f"| {titles.get(dataset, dataset)} | {size} | " + " | ".join(cells) +
                     f" | {_constant_cell(rows)} |")
    lines += ["", f"Mean ± standard deviation over trials of the ordinal AUC on the unlabeled rows. "
              f"p: paired two-sided t-test of {labels[reference]} against the column's method over the "
              f"trials both finished (same seeds, same splits), Holm-adjusted over the "
              f"{int(summary['p_holm'].notna().sum())} tests of this table; ▲ {labels[reference]} "
              f"significantly better, ▼ significantly worse, at family-wise level {alpha}. Unadjusted and "
              f"Wilcoxon signed-rank p-values are in the CSV. Bold: the highest mean AUC of the dataset. "
              f"MAE and acc.: mean absolute error (in levels) and accuracy of the predicted labels on the same "
              f"rows; the last column predicts the labeled rows' majority class for every row (its AUC is 0.5). "
              f"[n on a search limit]: finished trials with a tuned value on the smallest or largest value "
              f"searched (after any widening: the declared limit), where a wider search might do better; "
              f"[n on a settled edge]: else a tuned value on the edge of a widened search whose last round moved "
              f"the best CV AUC by less than the declared widen_tolerance, so widening no longer paid; "
              f"[n on a natural bound]: trials whose tuned values sit on an edge only at the parameter's own "
              f"domain bound (a trade-off of 0 or 1), which no search can pass; [n warned]: trials with "
              f"another warning (degenerate kernel, a warning of the fit, a declared fallback after a failed "
              f"search). A trial may count in more than one; column `warnings` of results.csv."]
    if (summary["n_trials"].gt(0) & summary["not_ok"].fillna("").ne("")).any():
        lines += ["", "[k of n trials finished; ...]: the mean and the test are over the k trials that finished; "
                      "the others stopped with the status given (column `status` of results.csv)."]
    if summary["n_unconverged"].fillna(0).gt(0).any():
        lines += ["", "[n unconverged]: finished trials whose fit reached its iteration limit without meeting "
                      "its stated convergence criterion (column `converged` of results.csv); they are in the "
                      "mean and the test."]
    if any(role != "paper" for role in roles.values()):
        lines += ["", "† added alternative, not one of the paper's methods (never counted in its claims); "
                      "‡ reference, never counted in the claims: a supervised model on the labeled rows alone "
                      "(the linear floor, a linear ordinal model; where shown, gradient-boosted trees and the "
                      "nearest labeled row, a practitioner's first tries)."]
    return "\n".join(lines) + "\n"


def aggregate_job(smk):
    """Snakemake job of rule ``aggregate``: write the results table from the training jobs' outputs.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    log = setup_logging(smk.log[0])
    table = build_results(smk.params.results, smk.params.comparison_sizes)
    log.info("%d rows; status counts:\n%s", len(table), table["status"].value_counts().to_string())
    with atomic_path(smk.output.csv) as tmp:
        table.to_csv(tmp, index=False)
