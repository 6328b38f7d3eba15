r"""Claim 8 and the two claims of the Results section on unlabeled data, checked on a results table.

Reads the tidy table the main pipeline writes (``figures/<configuration>/results.csv``:
``dataset, method, base_method, trial, n_unlabeled, comparison, auc, fit_time, status``)
and applies the criteria of the configuration's ``claims:`` section (fixed in
the committed configuration before the run; :data:`DEFAULT_CRITERIA` when a
key is absent).

Which methods count: the paper's own methods are the configured methods whose
label is the registered name of a method with role ``"paper"``
(:data:`baselines.registry.ROLES`): ``qs3orao``, ``m-pnu-auc``, ``m-samult``,
``svorex``. Variants (``qs3orao-auto``, ``qs3orao-labeled``), added
alternatives and the linear floor are reported beside them in the evidence,
never counted. Whether a method trains on labeled rows only comes from the
registry's ``labeled_only``.

Which datasets count: a dataset listed ``no_signal`` by a signal screen
(``screened_datasets.csv``: the permutation screen, ``data_checks.signal_permutations``,
and the optional fixed-level screen, ``claims.signal_level``; with both, a dataset
counts only when it passes both) is left out, and so is a dataset on which some
paper method did not finish every trial at the comparison size; the evidence of
every AUC claim names both, with the reason.

Tuning draws: a table whose ``tuning_draw`` column holds several draws
(``tuning.draws``) is read once per draw (:func:`qs3study.stages.tables.one_draw`:
the draw's rows of the methods trained at it, the others' single rows); a claim
whose verdict is the same at every draw keeps it, any other "depends on the
tuning draw" (:func:`qs3study.claims.verdicts.draw_verdict`), and its evidence
gives every draw's verdict and evidence.

Unconverged fits: every claim is read twice, on every trial and without the trials in
which some fit reached its iteration limit unconverged (:func:`without_unconverged`);
``verdict`` is the first reading, ``verdict_without_unconverged`` the second, and the
evidence names the trials left out and, where the verdicts differ, the second reading's
evidence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from baselines.registry import METHODS as REGISTRY, make_method
from qs3study.datasets import get_spec

from qs3study.stages.tables import comparison_auc, holm, one_draw, tuning_draws, unconverged
from .crossover import crossover_evidence, machine_memory_mb, memory_evidence
from .verdicts import draw_verdict

__all__ = ["DEFAULT_CRITERIA", "OURS", "KEYS", "PROTOCOL_NAMES", "SCREEN_REASONS", "ProtocolClaims",
           "paper_methods", "declared_screens", "read_screened", "counted_datasets", "check_screened", "without_unconverged", "empirical_claims"]

OURS = "qs3orao"
#: Claim 8e's second reading, on the objective: f* against f* with tradeoff = 1 (labels of the configurations).
OBJECTIVE, OBJECTIVE_LABELED = "qs3orao-exact", "qs3orao-exact-labeled"
EXACT = ("m-pnu-auc", "m-samult")
DEFAULT_CRITERIA = {"alpha": 0.05, "most_cases": 0.5, "crossover_rows": 10_000, "crossover_slack": 2.0,
                    "min_trials": 3, "large_set_rows": 100_000, "paper_budget_mb": 80 * 1024, "estimate_tolerance": 2.0, "non_inferiority_margin": 0.01, "labeled_only_method": None,
                    "reported_margins": [], "signal_level": None}
#: What 8d reads beside the statuses: the run's budget, the rows and the baselines' estimates and peaks.
MEMORY_COLUMNS = ("memory_budget_mb", "n_labeled", "n_features", "n_classes", "memory_estimate_mb",
                  "rss_before_fit_mb", "peak_memory_mb")
KEYS = ("highest_auc", "beats_supervised", "faster_beyond_10k", "exact_out_of_memory", "unlabeled_data_help",
        "unlabeled_data_help_objective", "similar_generalisation")


#: How the ledger names a protocol in its rows (the paper's protocol beside a best-effort one).
PROTOCOL_NAMES = {"paper": "paper protocol", "best": "best-effort protocol"}


class ProtocolClaims(dict):
    """Protocol name -> the :func:`empirical_claims` of that protocol's run (ledger rows 8a-<protocol> ...)."""


def _result(verdict, evidence):
    return {"verdict": verdict, "evidence": evidence}


def paper_methods(methods):
    """The labels among ``methods`` that are the paper's own methods (label = registered name, role paper)."""
    return [m for m in methods if m in REGISTRY and REGISTRY[m].role == "paper"]


def _highest_auc(mean, paper, others, most_cases):
    counted = mean[paper].dropna(axis=0, how="any")
    if OURS not in counted or counted.empty:
        return _result("not evaluated", "no dataset where every paper method finished at the comparison size")
    best = counted.idxmax(axis=1)
    share = float((best == OURS).mean())
    added = ""
    if others:
        every = mean[paper + others].idxmax(axis=1).loc[counted.index]
        added = ("; not counted: best of all methods including added ones: "
                 + ", ".join(f"{d}: {m}" for d, m in every.items()))
    return _result("holds" if share > most_cases else "fails",
                   f"QS3ORAO has the best mean AUC among the paper's methods on {int((best == OURS).sum())}/"
                   f"{best.size} datasets ({share:.0%}; criterion > {most_cases:.0%}); best per dataset: "
                   + ", ".join(f"{d}: {m}" for d, m in best.items()) + added)


def _beats_supervised(mean, paper):
    supervised = [m for m in paper if REGISTRY[m].labeled_only]
    semi = [m for m in paper if not REGISTRY[m].labeled_only]
    if not supervised or not semi:
        return _result("not evaluated", "needs a labeled-only paper method (SVOREX) and a semi-supervised one")
    reference = supervised[0]
    wins = {m: int((mean[m] > mean[reference]).sum()) for m in semi}
    comparable = {m: int(mean[[m, reference]].dropna().shape[0]) for m in semi}
    verdict = "holds" if all(wins[m] == comparable[m] > 0 for m in semi) else "fails"
    return _result(verdict, f"mean AUC above {reference} on " + ", ".join(
        f"{m}: {wins[m]}/{comparable[m]} datasets" for m in semi) + " (criterion: every dataset, every method)")


def _faster(table, criteria):
    """8c, read only where QS3ORAO and an exact baseline both ran (:func:`crossover_evidence`)."""
    threshold = criteria["crossover_rows"] * criteria["crossover_slack"]
    if not ((table["method"] == OURS) & (table["status"] == "ok") & (table["n_unlabeled"] >= threshold)).any():
        return _result("not evaluated", f"no QS3ORAO fit with >= {threshold:.0f} unlabeled rows")
    result = crossover_evidence(table, beyond=threshold, min_trials=criteria["min_trials"], exact=EXACT)
    return _result(result["verdict"], result["evidence"])


def _full_rows(table):
    """Dataset -> its rows in full: the registry's upstream shape, else the most rows a job of the table used."""
    sizes = {}
    for dataset, rows in table.groupby("dataset"):
        try:
            shape = get_spec(dataset).shape
        except ValueError:  # a dataset the registry does not know (a local file, a generated set)
            shape = None
        sizes[dataset] = int(shape[0]) if shape else int((rows["n_labeled"] + rows["n_unlabeled"]).max())
    return sizes


def _memory_need(table):
    """``need(method, dataset, n_rows)``: the method's own memory estimate (MiB) with the dataset's shape.

    The estimate is the registered method's (its default parameters, the fast solver where there are two), on
    ``n_rows`` rows of which at most the dataset's labeled rows are labeled.
    """
    shapes = table.groupby("dataset")[["n_features", "n_classes", "n_labeled"]].max()

    def need(method, dataset, n_rows):
        d, k, n_labeled = (int(v) for v in shapes.loc[dataset])
        fast = {"low_memory": False} if "low_memory" in make_method(method).get_params() else {}
        return make_method(method, **fast).estimate_memory(n_rows, d, k, min(n_labeled, n_rows)) / 2**20

    return need


def _out_of_memory(table, criteria, machine_mb):
    """8d through the baselines' memory estimates, validated against measured peaks (:func:`memory_evidence`)."""
    missing = sorted(set(MEMORY_COLUMNS) - set(table.columns))
    if missing:
        return _result("not evaluated", f"the results table has no {', '.join(missing)} (a table of "
                                        f"qs3study.stages.tables has them)")
    budgets = table.loc[table["method"].isin(EXACT), "memory_budget_mb"].dropna()
    if budgets.empty:
        return _result("not evaluated", "no exact baseline ran under a declared memory budget")
    full_rows = _full_rows(table)
    if max(full_rows.values()) < criteria["large_set_rows"]:
        return _result("not evaluated", f"no dataset with >= {criteria['large_set_rows']} rows (the claim is about "
                                        f"the larger sets)")
    result = memory_evidence(table, estimate=_memory_need(table), budget_mb=float(budgets.max()),
                             paper_budget_mb=criteria["paper_budget_mb"], full_sizes=full_rows,
                             large_rows=criteria["large_set_rows"], tolerance=criteria["estimate_tolerance"],
                             exact=EXACT, machine_mb=machine_mb)
    return _result(result["verdict"], f"{result['evidence']} At the paper-like budget: {result['paper_verdict']}.")


def _paired(auc, a, b, shift=0.0, alternative="two-sided"):
    """Per dataset: mean of ``a - b`` over common trials and the paired t-test p-value of ``mean + shift``."""
    rows = []
    for dataset, per in auc[[a, b]].dropna().groupby(level="dataset"):
        diff = per[a] - per[b]
        p = np.nan
        if len(diff) >= 2 and diff.std(ddof=1) > 0:
            p = float(stats.ttest_1samp(diff + shift, 0.0, alternative=alternative).pvalue)
        rows.append({"dataset": dataset, "diff": float(diff.mean()), "n": len(diff), "p": p})
    result = pd.DataFrame(rows, columns=["dataset", "diff", "n", "p"])
    result["p_holm"] = holm(result["p"]) if len(result) else []
    return result


def _unlabeled_help(auc, criteria):
    """Claim 8e as run: QS3ORAO against the configuration's labeled-only QS3ORAO."""
    labeled = criteria["labeled_only_method"]
    if labeled is None or labeled not in auc or OURS not in auc:
        return _result("not evaluated", "the configuration names no labeled-only QS3ORAO run "
                                        "(claims.labeled_only_method) or it has no finished rows")
    return _help_verdict(auc, OURS, labeled, criteria, "QS3ORAO tuned")


def _unlabeled_help_objective(auc, criteria):
    """Claim 8e on the objective: its exact minimiser f* against f* with tradeoff = 1, by 8e's criterion."""
    if OBJECTIVE_LABELED not in auc or OBJECTIVE not in auc:
        return _result("not evaluated", f"no f*-labeled column ({OBJECTIVE_LABELED}) or no f* column ({OBJECTIVE}) "
                                        "with finished rows in this run")
    return _help_verdict(auc, OBJECTIVE, OBJECTIVE_LABELED, criteria, f"{OBJECTIVE} (f*, exact)")


def _help_verdict(auc, ours, labeled, criteria, name):
    """Whether ``ours`` beats ``labeled`` on most datasets: paired t-tests, Holm over the datasets."""
    tests = _paired(auc, ours, labeled)
    if tests.empty or tests["p_holm"].isna().all():
        return _result("inconclusive", "fewer than two paired trials with a nonzero spread on every dataset")
    alpha = criteria["alpha"]
    better = int(((tests["p_holm"] < alpha) & (tests["diff"] > 0)).sum())
    worse = int(((tests["p_holm"] < alpha) & (tests["diff"] < 0)).sum())
    n = len(tests)
    verdict = ("holds" if better > criteria["most_cases"] * n else
               "fails" if worse >= better and worse > 0 else "inconclusive")
    return _result(verdict, f"{name} against {labeled} (tradeoff = 1), same trials, paired t-test "
                            f"Holm-adjusted over {_family(tests['p'], n)} at {alpha}: significantly better on "
                            f"{better}, worse on {worse} of {n} (criterion: better on > "
                            f"{criteria['most_cases']:.0%}; fails if worse at least as often); mean differences: "
                            + ", ".join(f"{r.dataset}: {r.diff:+.4f} ({_p_text(r.p_holm, r.n)})"
                                        for r in tests.itertuples()))


def _family(p_values, n):
    """The Holm family in words: the datasets with a p-value, of the ``n`` counted ones."""
    tested = int(np.isfinite(np.asarray(p_values, dtype=np.float64)).sum())
    return f"{n} datasets" if tested == n else f"the {tested} of {n} datasets with a test"


def _p_text(p, n):
    """A dataset's adjusted p-value, or why it has none (it then counts as neither better nor worse)."""
    if np.isfinite(p):
        return f"p={p:.3g}"
    return "1 paired trial, no test" if n < 2 else f"{n} paired trials without spread, no test"


def _similar(auc, mean, criteria):
    exact = [m for m in EXACT if m in auc]
    if OURS not in auc or not exact:
        return _result("not evaluated", "no QS3ORAO or exact-baseline rows at the comparison size")
    result = _similar_at(auc, mean, criteria["non_inferiority_margin"], criteria["alpha"], exact)
    others = [m for m in criteria["reported_margins"] if m != criteria["non_inferiority_margin"]]
    if others and result["verdict"] != "not evaluated":
        at = {m: _similar_at(auc, mean, m, criteria["alpha"], exact) for m in others}
        reported = "; ".join(f"margin {m}: {r['verdict']} ({r['counts']})" for m, r in at.items())
        result["evidence"] += f". Reported, not the verdict: {reported}"
    return {"verdict": result["verdict"], "evidence": result["evidence"]}


def _similar_at(auc, mean, margin, alpha, exact):
    """Claim 8f's test at one ``margin``: verdict, evidence and the counts behind them."""
    rows = []
    for dataset in mean.index:
        candidates = mean.loc[dataset, exact].dropna()
        if candidates.empty or np.isnan(mean.loc[dataset, OURS]):
            continue
        best = candidates.idxmax()
        per = auc.loc[[dataset]]
        noninferior = _paired(per, OURS, best, shift=margin, alternative="greater")
        inferior = _paired(per, OURS, best, shift=margin, alternative="less")
        rows.append({"dataset": dataset, "best": best, "diff": noninferior["diff"].iloc[0],
                     "n": noninferior["n"].iloc[0], "p_non": noninferior["p"].iloc[0],
                     "p_inf": inferior["p"].iloc[0]})
    if not rows:
        return {**_result("not evaluated", "no dataset where QS3ORAO and an exact baseline both finished"),
                "counts": ""}
    tests = pd.DataFrame(rows)
    tests["p_non"], tests["p_inf"] = holm(tests["p_non"]), holm(tests["p_inf"])
    non = int((tests["p_non"] < alpha).sum())
    inferior = int((tests["p_inf"] < alpha).sum())
    verdict = "holds" if non == len(tests) else "fails" if inferior > 0 else "inconclusive"
    counts = f"non-inferior on {non}, inferior on {inferior} of {len(tests)}"
    return {"counts": counts, **_result(verdict, f"non-inferiority of QS3ORAO against the best exact baseline per dataset (by mean AUC), "
                            f"margin {margin} AUC declared in the configuration, one-sided paired t-tests "
                            f"Holm-adjusted over {_family(tests['p_non'], len(tests))} at {alpha}: non-inferior on "
                            f"{non}, inferior by more than the margin on {inferior} (criterion: non-inferior on all; "
                            f"fails if inferior anywhere); " + ", ".join(
                                f"{r.dataset} vs {r.best}: {r.diff:+.4f}"
                                + ("" if np.isfinite(r.p_non) else f" ({_p_text(r.p_non, r.n)})")
                                for r in tests.itertuples()))}


#: Why a dataset that a signal screen (``screen`` of ``screened_datasets.csv``) marks ``no_signal`` is left out.
SCREEN_REASONS = {"level": "screened: no method reaches the declared CV AUC level",
                  "permutation": "screened by the permutation screen: the proxy search's CV AUC does not beat "
                                 "its permutation null"}


def declared_screens(signal_permutations, signal_level):
    """The signal screens a configuration declares (keys of :data:`SCREEN_REASONS`).

    Parameters
    ----------
    signal_permutations : int
        ``data_checks.signal_permutations``: above 0, the permutation screen.
    signal_level : float or None
        ``claims.signal_level``: set, the fixed-level screen.

    Returns
    -------
    list of str
    """
    return [screen for screen, declared in (("permutation", signal_permutations > 0),
                                            ("level", signal_level is not None)) if declared]


def read_screened(path):
    """A run's ``screened_datasets.csv``, with its ``screen`` column.

    A file written before the column existed held only the loading screen's rows (status
    ``refused`` or ``accepted``) and the fixed-level screen's (``signal`` or ``no_signal``),
    so its column is filled in from the status.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    pandas.DataFrame
    """
    screened = pd.read_csv(path)
    if "screen" not in screened.columns:
        level = screened["status"].isin(["signal", "no_signal"])
        screened.insert(1, "screen", np.where(level, "level", "loading"))
    return screened


def counted_datasets(table, paper, screened=None):
    """Datasets the AUC claims count, and why each other one is left out.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table.
    paper : list of str
        The paper's method labels.
    screened : pandas.DataFrame, optional
        ``screened_datasets.csv``: a dataset with status ``no_signal`` in some signal screen's row
        is left out, its reason naming each such screen (:data:`SCREEN_REASONS`) with the row's reason.

    Returns
    -------
    counted : list of str
    left_out : dict
        Dataset -> reason.

    Raises
    ------
    ValueError
        When ``screened`` has no ``screen`` column, or a ``no_signal`` row of a screen that
        :data:`SCREEN_REASONS` does not name.
    """
    comparison = table[table["comparison"].astype(bool)]
    no_signal = {}
    if screened is not None and len(screened):
        if "screen" not in screened.columns:
            raise ValueError("screened_datasets.csv has no screen column, which tells its signal screens apart: "
                             "rerun the run's screened_datasets job")
        for row in screened[screened["status"] == "no_signal"].itertuples():
            if row.screen not in SCREEN_REASONS:
                raise ValueError(f"screened_datasets.csv: {row.dataset} is no_signal by an unknown screen "
                                 f"{row.screen!r}; expected one of {sorted(SCREEN_REASONS)}")
            no_signal.setdefault(row.dataset, []).append(f"{SCREEN_REASONS[row.screen]} ({row.reason})")
    counted, left_out = [], {}
    for dataset, rows in comparison.groupby("dataset", sort=True):
        if dataset in no_signal:
            left_out[dataset] = "; ".join(no_signal[dataset])
            continue
        trials = rows["trial"].nunique()
        unfinished = []
        for method in paper:
            runs = rows[rows["method"] == method]
            done = int((runs["status"] == "ok").sum())
            if done < trials:
                statuses = ", ".join(f"{s} {n}" for s, n in runs.loc[runs["status"] != "ok", "status"]
                                     .value_counts().sort_index().items())
                unfinished.append(f"{method} finished {done}/{trials} trials ({statuses or 'no rows'})")
        if unfinished:
            left_out[dataset] = "; ".join(unfinished)
        else:
            counted.append(dataset)
    return counted, left_out


def check_screened(table, screened, screens):
    """Raise a ValueError unless ``screened`` lists every dataset of ``table`` under every screen of ``screens``.

    A dataset that a declared screen does not list would count unscreened.
    """
    if not screens:
        return
    if screened is None or "screen" not in screened.columns:
        raise ValueError(f"the signal screens {', '.join(screens)} are declared, but screened_datasets.csv "
                         "is missing or has no screen column: rerun the run's screened_datasets job")
    listed = set(zip(screened["dataset"], screened["screen"]))
    missing = [f"{dataset} ({screen})" for dataset in sorted(set(table["dataset"])) for screen in screens
               if (dataset, screen) not in listed]
    if missing:
        raise ValueError("screened_datasets.csv does not list, under a declared signal screen: "
                         + ", ".join(missing) + "; rerun the run's screened_datasets job")


def without_unconverged(table):
    """``table`` without the trials in which some fit reached its iteration limit unconverged.

    Every method's row of such a trial (same dataset, unlabeled size and trial) is left out, so the
    paired comparisons stay paired (:func:`qs3study.stages.tables.unconverged`).

    Returns
    -------
    kept : pandas.DataFrame
    left_out : dict
        Dataset -> the number of its trials left out (at any size), for the datasets with some.
    """
    bad = unconverged(table)
    if not bad.any():  # nothing to leave out (a table may then lack the size column)
        return table, {}
    keys = ["dataset", "size", "trial"]
    dropped = table.loc[bad, keys].drop_duplicates()
    out = pd.MultiIndex.from_frame(table[keys]).isin(pd.MultiIndex.from_frame(dropped))
    return table[~out], dropped.groupby("dataset").size().to_dict()


def empirical_claims(table, criteria=None, screened=None, screens=(), machine_mb=None):
    """Verdicts of the empirical claims from a results table, read at each of its tuning draws.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table (:func:`qs3study.stages.tables.build_results`).
    criteria : dict, optional
        The configuration's ``claims:`` section; missing keys take :data:`DEFAULT_CRITERIA`.
    screened : pandas.DataFrame, optional
        The run's ``screened_datasets.csv`` (a dataset ``no_signal`` in some signal screen is left
        out; :func:`counted_datasets`).
    screens : sequence of str, optional
        The signal screens the configuration declares (keys of :data:`SCREEN_REASONS`): ``screened``
        must list every dataset of ``table`` under each (:func:`check_screened`).
    machine_mb : float, optional
        The memory (MiB) of the machine the run measured on, which 8d's measured refusals are read
        against (:func:`qs3study.claims.crossover.memory_evidence`); None: not recorded.

    Returns
    -------
    dict of str to dict
        Keys :data:`KEYS`; values ``{"verdict", "verdict_without_unconverged", "evidence"}``
        (:func:`without_unconverged`). With one draw, that draw's; with several, the verdicts of
        :func:`qs3study.claims.verdicts.draw_verdict` and every draw's verdict and evidence.
    """
    criteria = {**DEFAULT_CRITERIA, **(criteria or {})}
    check_screened(table, screened, screens)
    draws = tuning_draws(table)
    at = {draw: _claims_at_draw(one_draw(table, draw), criteria, screened, machine_mb) for draw in draws}
    if len(draws) == 1:
        return at[draws[0]]
    drawn = sorted(set(table.loc[table["tuning_draw"] > 0, "method"]))
    claims = {}
    for key in KEYS:
        verdict = draw_verdict([at[draw][key]["verdict"] for draw in draws])
        each = "; ".join(f"tuning draw {draw}: {at[draw][key]['verdict']} ({at[draw][key]['evidence']})"
                         for draw in draws)
        claims[key] = _result(verdict, f"read at each of {len(draws)} tuning draws of {', '.join(drawn)} "
                                       f"(the other methods tuned once): {each}")
        claims[key]["verdict_without_unconverged"] = draw_verdict(
            [at[draw][key]["verdict_without_unconverged"] for draw in draws])
    return claims


def _claims_at_draw(table, criteria, screened, machine_mb):
    """:func:`empirical_claims` on a table of one tuning draw, read with and without its unconverged trials."""
    claims = _claims_of(table, criteria, screened, machine_mb)
    kept, left_out = without_unconverged(table)
    if not left_out:
        for result in claims.values():
            result["verdict_without_unconverged"] = result["verdict"]
        return claims
    without = _claims_of(kept, criteria, screened, machine_mb)
    trials = ", ".join(f"{dataset} {n}" for dataset, n in sorted(left_out.items()))
    for key, result in claims.items():
        other = without[key]["verdict"]
        result["verdict_without_unconverged"] = other
        result["evidence"] += (f". Without the trials with an unconverged fit ({trials}): "
                               + (f"the same verdict, {other}" if other == result["verdict"]
                                  else f"{other} ({without[key]['evidence']})"))
    return claims


def _claims_of(table, criteria, screened, machine_mb):
    """The claims of one reading of a table of one tuning draw."""
    table = table.assign(n_unlabeled=pd.to_numeric(table["n_unlabeled"], errors="coerce"))
    paper = paper_methods(list(dict.fromkeys(table["method"])))
    counted, left_out = counted_datasets(table, paper, screened)
    auc = comparison_auc(table[table["dataset"].isin(counted)])
    mean = auc.groupby(level="dataset").mean()
    methods = list(mean.columns)
    paper = [m for m in paper if m in methods]
    others = [m for m in methods if m not in paper]
    claims = {
        "highest_auc": _highest_auc(mean, paper, others, criteria["most_cases"]),
        "beats_supervised": _beats_supervised(mean, paper),
        "faster_beyond_10k": _faster(table, criteria),
        "exact_out_of_memory": _out_of_memory(table, criteria, machine_mb),
        "unlabeled_data_help": _unlabeled_help(auc, criteria),
        "unlabeled_data_help_objective": _unlabeled_help_objective(auc, criteria),
        "similar_generalisation": _similar(auc, mean, criteria),
    }
    if left_out:
        note = "; not counted: " + "; ".join(f"{d} ({why})" for d, why in left_out.items())
        for key in ("highest_auc", "beats_supervised", "unlabeled_data_help", "unlabeled_data_help_objective",
                    "similar_generalisation"):
            claims[key]["evidence"] += note
    return claims


def claims_job(smk):
    """Snakemake job of rule ``empirical_claims``: the verdicts of :func:`empirical_claims` as a CSV.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake (``params.criteria``: the configuration's ``claims:``;
        ``params.screens``: the signal screens it declares).
    """
    from qs3study.files import atomic_path
    from qs3study.runtime import setup_logging
    from qs3study.stages.tables import read_results

    log = setup_logging(smk.log[0])
    screened = pd.read_csv(smk.input.screened) if smk.input.get("screened") else None
    # the run's own job, on the machine the run measured on
    claims = empirical_claims(read_results(smk.input.table), smk.params.criteria, screened, smk.params.screens,
                              machine_memory_mb())
    rows = [{"claim": key, **value} for key, value in claims.items()]
    for row in rows:
        log.info("%s: %s; without unconverged trials %s (%s)", row["claim"], row["verdict"],
                 row["verdict_without_unconverged"], row["evidence"])
    with atomic_path(smk.output[0]) as tmp:
        pd.DataFrame(rows, columns=["claim", "verdict", "verdict_without_unconverged", "evidence"]).to_csv(
            tmp, index=False)
