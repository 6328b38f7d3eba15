r"""Claim 8: the empirical claims of the Results section, checked on the benchmark table.

Reads the tidy table the main pipeline writes (``results/tables/results.csv``:
``dataset, method, trial, n_unlabeled, auc, fit_time, peak_memory_mb, status``)
and applies the criteria below, declared before the table is read.  Method
names are matched after lower-casing and dropping non-alphanumerics, so
``"M-PNU-AUC"`` and ``"MPNUAUC"`` are the same method.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["OURS", "SEMI_SUPERVISED", "SUPERVISED", "EXACT", "CROSSOVER_CLAIM", "CROSSOVER_SLACK",
           "MOST_CASES", "empirical_claims"]

OURS = "qs3orao"
SEMI_SUPERVISED = ("qs3orao", "mpnuauc", "msamult")
SUPERVISED = "svorex"
EXACT = ("mpnuauc", "msamult")

# --- Verdict criteria (declared before the table is read) -------------------
#: "Highest AUC in most cases": best mean AUC in more than this share of datasets.
MOST_CASES = 0.5
#: "Faster beyond about 10,000 unlabeled rows": on every dataset QS3ORAO's mean
#: fit time is below both exact baselines' at every size
#: >= CROSSOVER_CLAIM * CROSSOVER_SLACK where all three ran ("about" allows a
#: factor CROSSOVER_SLACK).
CROSSOVER_CLAIM = 10_000
CROSSOVER_SLACK = 2.0
# ---------------------------------------------------------------------------


def _key(name):
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _is_ok(status):
    return status.astype(str).str.lower().isin(["ok", "success", "done", "completed"])


def _is_out_of_memory(status):
    return status.astype(str).str.lower().str.contains("memory|oom|budget")


def _result(verdict, evidence):
    return {"verdict": verdict, "evidence": evidence}


def _highest_auc(auc):
    best = auc.idxmax(axis=1)
    share = float((best == OURS).mean())
    verdict = "holds" if share > MOST_CASES else "fails"
    return _result(verdict, f"QS3ORAO has the best mean AUC on {int((best == OURS).sum())}/{best.size} "
                            f"datasets ({share:.0%}; criterion > {MOST_CASES:.0%}); best per dataset: "
                            + ", ".join(f"{d}: {m}" for d, m in best.items()))


def _beats_supervised(auc):
    if SUPERVISED not in auc.columns:
        return _result("not evaluated", "no SVOREX rows in the results table")
    methods = [m for m in SEMI_SUPERVISED if m in auc.columns]
    wins = {m: int((auc[m] > auc[SUPERVISED]).sum()) for m in methods}
    comparable = {m: int(auc[[m, SUPERVISED]].dropna().shape[0]) for m in methods}
    verdict = "holds" if all(wins[m] == comparable[m] for m in methods) else "fails"
    return _result(verdict, "mean AUC above SVOREX on " + ", ".join(
        f"{m}: {wins[m]}/{comparable[m]} datasets" for m in methods) + " (criterion: every dataset)")


def _faster(ok):
    times = ok.groupby(["dataset", "n_unlabeled", "method"])["fit_time"].mean().unstack("method")
    needed = [OURS, *EXACT]
    if not set(needed) <= set(times.columns):
        return _result("not evaluated", "fit times of QS3ORAO and both exact baselines are needed")
    both = times[needed].dropna()
    large = both[both.index.get_level_values("n_unlabeled") >= CROSSOVER_CLAIM * CROSSOVER_SLACK]
    if large.empty:
        largest = int(both.index.get_level_values("n_unlabeled").max()) if not both.empty else 0
        return _result("not evaluated", f"no size >= {CROSSOVER_CLAIM * CROSSOVER_SLACK:.0f} unlabeled rows "
                                        f"where all three methods ran (largest common size: {largest})")
    faster = (large[OURS] < large[list(EXACT)].min(axis=1))
    ratio = (large[list(EXACT)].min(axis=1) / large[OURS])
    verdict = "holds" if faster.all() else "fails"
    return _result(verdict, f"QS3ORAO faster than both exact baselines at {int(faster.sum())}/{faster.size} "
                            f"(dataset, size) cells with >= {CROSSOVER_CLAIM * CROSSOVER_SLACK:.0f} unlabeled rows; "
                            f"speed-up min {ratio.min():.2f}x, median {ratio.median():.2f}x")


def _out_of_memory(table):
    exact = table[table["method_key"].isin(EXACT)]
    if exact.empty:
        return _result("not evaluated", "no rows of the exact baselines")
    largest = exact.groupby(["dataset", "method_key"])["n_unlabeled"].transform("max")
    at_largest = exact[exact["n_unlabeled"] == largest]
    oom = at_largest.groupby(["dataset", "method_key"])["status"].apply(lambda s: bool(_is_out_of_memory(s).any()))
    verdict = "holds" if oom.all() else "fails"
    return _result(verdict, f"out of memory (status) at the largest size tried in {int(oom.sum())}/{oom.size} "
                            "(dataset, exact baseline) cells (criterion: all)")


def empirical_claims(table):
    """Verdicts of the four empirical claims.

    Parameters
    ----------
    table : pandas.DataFrame
        The tidy results table.

    Returns
    -------
    dict of str to dict
        Keys ``highest_auc``, ``beats_supervised``, ``faster_beyond_10k``,
        ``exact_out_of_memory``; values ``{"verdict", "evidence"}``.
    """
    table = table.assign(method_key=table["method"].map(_key))
    ok = table[_is_ok(table["status"]) & np.isfinite(table["auc"].astype(float))]
    # AUC is compared at the largest unlabeled size where every method that ran on a dataset finished.
    common = ok.groupby(["dataset", "n_unlabeled"])["method_key"].nunique()
    widest = common[common == common.groupby("dataset").transform("max")].reset_index()
    at_size = widest.groupby("dataset")["n_unlabeled"].max()
    rows = ok[ok["n_unlabeled"] == ok["dataset"].map(at_size)]
    auc = rows.groupby(["dataset", "method_key"])["auc"].mean().unstack("method_key")
    return {
        "highest_auc": _highest_auc(auc) if OURS in auc.columns else _result("not evaluated", "no QS3ORAO rows"),
        "beats_supervised": _beats_supervised(auc),
        "faster_beyond_10k": _faster(ok.rename(columns={"method": "method_name", "method_key": "method"})),
        "exact_out_of_memory": _out_of_memory(table),
    }
