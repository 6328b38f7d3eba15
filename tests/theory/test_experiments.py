"""Claims 7-8 machinery and the ledger writer."""

import csv

import numpy as np
import pandas as pd
import pytest

from qs3orao.quadratic import ordinal_pairwise_risk, samult_risk
from qs3study.theory.complexity import fit_exponent, run_sweep
from baselines.registry import METHODS as REGISTRY
from qs3study.claims.empirical import KEYS, _memory_need, empirical_claims
from qs3study.claims.ledger import Claim, history_markdown, write_ledger
from qs3study.claims.verdicts import exponent_class

#: Small sweep settings: tiny data, one BLAS thread for the timed calls.
SETTINGS = {"literal_n": 30, "engine_n": 30, "engine_t": 5, "m": 2, "n_features": 3, "n_classes": 3,
            "tradeoff": 0.5, "gamma": 1.0, "lam": 1.0, "theta": 1.5, "seed": 0, "blas_threads": 1}


def test_fit_exponent_uses_medians_of_repeats():
    n = np.repeat([100, 200, 400, 800, 1600, 3200], 3)
    noise = np.tile([1.0, 1.02, 50.0], 6)  # one slow outlier per size: the median ignores it
    slope, low, high = fit_exponent(n, 1e-6 * n ** 2.0 * noise, confidence=0.95)
    assert slope == pytest.approx(2.0, abs=1e-6)
    assert exponent_class(low, high, claimed=2.0, tolerance=0.3) == "consistent"
    assert exponent_class(low, high, claimed=3.0, tolerance=0.3) == "inconsistent"


def test_sweeps_record_every_repeat():
    settings = SETTINGS
    records = run_sweep("literal_time_vs_t", [3, 6], settings, repeats=2)
    assert [(r["size"], r["repeat"]) for r in records] == [(3, 0), (3, 1), (6, 0), (6, 1)]
    assert all(r["value"] > 0 for r in records)
    memory = run_sweep("exact_memory_vs_n", [40, 80], settings, repeats=3)
    assert [r["size"] for r in memory] == [40, 80] and all(r["value"] > 0 for r in memory)


def _table(faster=True, oom=True, trials=3, budget_mb=4096.0):
    """Two datasets, three sizes, ``trials`` trials each; the exact baselines' memory estimate n^2 x 8e-6 MiB."""
    rows = []
    for dataset in ("a", "b"):
        for n_unlabeled in (1_000, 30_000, 100_000):
            for method, auc, seconds in (("qs3orao", 0.80, 5.0), ("m-pnu-auc", 0.78, n_unlabeled / 1e3),
                                         ("m-samult", 0.77, n_unlabeled / 2e3), ("svorex", 0.70, 1.0),
                                         ("rff-auc", 0.90, 1.0), ("qs3orao-labeled", 0.75, 5.0)):
                for trial in range(trials):
                    status = "ok"
                    if method.startswith("m-") and n_unlabeled == 100_000 and oom:
                        status = "out_of_memory_budget"
                    time = seconds if faster or method != "qs3orao" else 1e9
                    rows.append({"dataset": dataset, "method": method, "trial": trial, "n_unlabeled": n_unlabeled,
                                 "comparison": n_unlabeled == 1_000,
                                 "auc": auc + 0.001 * trial * (method == "qs3orao") if status == "ok" else np.nan,
                                 "fit_time": time, "status": status, "n_labeled": 500, "n_features": 5,
                                 "n_classes": 5, "memory_budget_mb": budget_mb,
                                 "memory_estimate_mb": 8e-6 * (500 + n_unlabeled) ** 2, "rss_before_fit_mb": 150.0,
                                 "peak_memory_mb": 150.0 + 9e-6 * (500 + n_unlabeled) ** 2})
    return pd.DataFrame(rows)


CRITERIA = {"labeled_only_method": "qs3orao-labeled", "non_inferiority_margin": 0.01}


def test_empirical_claims_follow_the_declared_criteria():
    verdicts = {k: v["verdict"] for k, v in empirical_claims(_table(), CRITERIA).items()}
    assert verdicts == {"highest_auc": "holds", "beats_supervised": "holds", "faster_beyond_10k": "holds",
                        "exact_out_of_memory": "holds", "unlabeled_data_help": "holds",
                        "unlabeled_data_help_objective": "not evaluated", "similar_generalisation": "holds"}
    slow_and_roomy = _table(faster=False, oom=False, budget_mb=1e9)
    verdicts = {k: v["verdict"] for k, v in empirical_claims(slow_and_roomy, CRITERIA).items()}
    assert verdicts["faster_beyond_10k"] == "fails" and verdicts["exact_out_of_memory"] == "fails"


def test_added_methods_are_reported_but_never_counted():
    result = empirical_claims(_table(), CRITERIA)["highest_auc"]
    assert result["verdict"] == "holds" and "rff-auc" in result["evidence"]  # rff-auc is best, but not counted


def test_a_margin_tighter_than_the_gap_makes_similar_generalisation_fail():
    table = _table()
    table.loc[table["method"] == "m-pnu-auc", "auc"] += 0.1  # the best exact baseline now leads by ~0.08
    verdict = empirical_claims(table, CRITERIA)["similar_generalisation"]
    assert verdict["verdict"] == "fails" and "inferior by more than the margin on 2" in verdict["evidence"]


def test_without_a_labeled_only_run_that_claim_is_not_evaluated():
    assert empirical_claims(_table())["unlabeled_data_help"]["verdict"] == "not evaluated"


def test_ledger_writes_markdown_and_csv(tmp_path):
    claims = [Claim("1", "a | b", "Sec. 1", "check", "holds", "numbers"),
              Claim("2", "c", "Sec. 2", "check", "fails", "pinned")]
    footer = history_markdown([{"design": "old", "change": "seeds 10 -> 30", "verdicts": {"6": "fails -> holds"}}])
    write_ledger(claims, tmp_path / "l.md", tmp_path / "l.csv", header="# Ledger", footer=footer)
    text = (tmp_path / "l.md").read_text()
    assert text.startswith("# Ledger") and "a \\| b" in text
    assert "## History" in text and "claim 6: fails -> holds" in text
    assert [row["verdict"] for row in csv.DictReader(open(tmp_path / "l.csv"))] == ["holds", "fails"]
    with pytest.raises(ValueError):
        Claim("3", "c", "w", "k", "probably", "e")


def test_empirical_claims_on_small_sets_only_are_not_evaluated():
    small = _table()
    small = small[small["n_unlabeled"] < 30_000]
    verdicts = {k: v["verdict"] for k, v in empirical_claims(small, CRITERIA).items()}
    assert verdicts["faster_beyond_10k"] == "not evaluated"
    assert verdicts["exact_out_of_memory"] == "not evaluated"


def test_an_exact_baseline_stopped_by_its_memory_budget_is_not_counted_as_slower():
    table = _table()
    table = table[table["n_unlabeled"] == 100_000]
    result = empirical_claims(table)["faster_beyond_10k"]
    assert result["verdict"] == "inconclusive" and "Cells where both ran: none" in result["evidence"]


def test_the_crossover_needs_the_declared_trials_where_both_ran():
    result = empirical_claims(_table(trials=1), CRITERIA)["faster_beyond_10k"]
    assert result["verdict"] == "inconclusive" and "too few trials" in result["evidence"]
    assert empirical_claims(_table(trials=1), {**CRITERIA, "min_trials": 1})["faster_beyond_10k"]["verdict"] == "holds"


def test_a_table_without_memory_columns_leaves_the_memory_claim_not_evaluated():
    result = empirical_claims(_table().drop(columns=["memory_budget_mb", "peak_memory_mb"]))["exact_out_of_memory"]
    assert result["verdict"] == "not evaluated" and "memory_budget_mb, peak_memory_mb" in result["evidence"]


def test_the_memory_claim_is_read_at_the_declared_and_the_paper_like_budget():
    # the baselines' own estimates at the larger sets' full size (100,500 rows) are above 100 GiB and below 10 TiB
    assert empirical_claims(_table(), CRITERIA)["exact_out_of_memory"]["evidence"].endswith(
        "At the paper-like budget: holds.")
    result = empirical_claims(_table(), {**CRITERIA, "paper_budget_mb": 1e7})["exact_out_of_memory"]
    assert result["verdict"] == "holds" and result["evidence"].endswith("At the paper-like budget: fails.")
    off = _table().assign(peak_memory_mb=lambda t: t["memory_estimate_mb"] * 3)
    assert empirical_claims(off, CRITERIA)["exact_out_of_memory"]["verdict"] == "inconclusive"


def test_the_ledger_has_a_row_per_empirical_claim_with_its_computed_verdict():
    from qs3study.claims.rows.empirical import rows_empirical

    claims = empirical_claims(_table(), CRITERIA)
    rows = rows_empirical(claims, "")
    assert [r.id for r in rows] == ["8a", "8b", "8c", "8d", "8e", "8e2", "8f"]
    assert [r.verdict for r in rows] == [claims[k]["verdict"] for k in claims]
    assert {r.verdict for r in rows_empirical(None, "no table")} == {"not evaluated"}


def test_the_ledger_has_rows_per_protocol_with_the_protocol_named():
    from qs3study.claims.empirical import ProtocolClaims
    from qs3study.claims.rows.empirical import rows_empirical

    paper = empirical_claims(_table(), CRITERIA)
    best = empirical_claims(_table(faster=False), CRITERIA)
    rows = rows_empirical(ProtocolClaims(paper=paper, best=best), "")
    assert [r.id for r in rows] == [f"8{c}-{p}" for p in ("paper", "best")
                                    for c in ("a", "b", "c", "d", "e", "e2", "f")]
    assert rows[0].claim.endswith("(paper protocol)") and rows[7].claim.endswith("(best-effort protocol)")
    assert rows[2].verdict == paper["faster_beyond_10k"]["verdict"] != rows[9].verdict


def test_a_protocol_without_a_committed_run_is_not_evaluated_and_says_why(tmp_path):
    import yaml

    from qs3study.claims.assemble import _empirical, empirical_inputs
    from qs3study.claims.rows.empirical import rows_empirical

    _table().to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump({"claims": CRITERIA}))
    design = {"empirical": {"protocols": {
        "paper": {"results_table": str(tmp_path / "results.csv"), "configuration": str(tmp_path / "paper.yaml")},
        "best": {"results_table": None, "configuration": [str(tmp_path / "paper.yaml"), "overlay.yaml"]}}}}
    tables, configurations = empirical_inputs(design)
    assert tables == [str(tmp_path / "results.csv")] and configurations == [str(tmp_path / "paper.yaml")]
    claims, reason = _empirical(design, tables, configurations)
    rows = rows_empirical(claims, reason)
    assert [r.id for r in rows] == [f"8{c}-{p}" for p in ("paper", "best")
                                    for c in ("a", "b", "c", "d", "e", "e2", "f")]
    assert [r.verdict for r in rows[:7]] == [empirical_claims(_table(), CRITERIA)[k]["verdict"] for k in KEYS]
    assert {r.verdict for r in rows[7:]} == {"not evaluated"}
    assert all("best-effort protocol (empirical.protocols.best.results_table: null)" in r.evidence for r in rows[7:])


def test_a_committed_scale_study_decides_its_protocols_8c_and_8d(tmp_path):
    import yaml

    from qs3study.claims.assemble import _empirical, empirical_inputs
    from qs3study.claims.rows.empirical import rows_empirical

    _table().to_csv(tmp_path / "results.csv", index=False)  # the protocol: faster, out of memory
    (tmp_path / "scale").mkdir()
    _table(faster=False, oom=False, budget_mb=1e9).to_csv(tmp_path / "scale" / "results.csv", index=False)
    (tmp_path / "paper.yaml").write_text(yaml.safe_dump({"claims": CRITERIA}))
    (tmp_path / "scale.yaml").write_text(yaml.safe_dump({"protocol": {"trials": 3}}))
    scale = {"results_table": None, "configuration": [str(tmp_path / "paper.yaml"), str(tmp_path / "scale.yaml")]}
    design = {"empirical": {"protocols": {"paper": {
        "results_table": str(tmp_path / "results.csv"), "configuration": str(tmp_path / "paper.yaml"), "scale": scale}}}}
    own = rows_empirical(*_empirical(design, *empirical_inputs(design)))
    assert [r.verdict for r in own if r.id in ("8c-paper", "8d-paper")] == ["holds", "holds"]

    scale["results_table"] = str(tmp_path / "scale" / "results.csv")
    tables, configurations = empirical_inputs(design)
    assert tables == [str(tmp_path / "results.csv"), str(tmp_path / "scale" / "results.csv")]
    assert configurations == [str(tmp_path / "paper.yaml"), str(tmp_path / "paper.yaml"), str(tmp_path / "scale.yaml")]
    rows = {r.id: r for r in rows_empirical(*_empirical(design, tables, configurations))}
    assert rows["8c-paper"].verdict == "fails" and rows["8d-paper"].verdict == "fails"
    assert rows["8c-paper"].evidence.startswith(f"read on the scale study ({tmp_path / 'scale' / 'results.csv'}): ")
    assert [rows[f"8{c}-paper"].verdict for c in ("a", "b", "e", "f")] == [r.verdict for r in own if r.id in (
        "8a-paper", "8b-paper", "8e-paper", "8f-paper")]


def test_a_protocols_claims_read_its_signal_screen_beside_the_table(tmp_path):
    import yaml

    from qs3study.claims.assemble import _claims_of

    _table().to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"claims": {**CRITERIA, "signal_level": 0.55}}))
    pd.DataFrame({"dataset": ["a", "b"], "screen": "level", "status": ["no_signal", "signal"],
                  "reason": "best CV AUC"}).to_csv(tmp_path / "screened_datasets.csv", index=False)
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump({"name": "best", "methods": {}}))  # no claims: section
    claims = _claims_of(str(tmp_path / "results.csv"), [str(tmp_path / "config.yaml"), str(tmp_path / "overlay.yaml")])
    assert "on 1/1 datasets" in claims["highest_auc"]["evidence"]
    assert "not counted: a (screened" in claims["highest_auc"]["evidence"]
    # an overlay's data_checks: declaring the permutation screen, which the file does not list: an error
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump({"data_checks": {"signal_permutations": 19}}))
    with pytest.raises(ValueError, match=r"does not list, under a declared signal screen: a \(permutation\)"):
        _claims_of(str(tmp_path / "results.csv"), [str(tmp_path / "config.yaml"), str(tmp_path / "overlay.yaml")])
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"claims": CRITERIA}))  # no screen declared
    assert "on 2/2 datasets" in _claims_of(str(tmp_path / "results.csv"), [str(tmp_path / "config.yaml")])[
        "highest_auc"]["evidence"]


def test_a_committed_run_is_read_by_the_screens_its_manifest_declares(tmp_path):
    # A run made under the fixed level, whose configuration has since moved to the permutation screen:
    # its manifest, not today's configuration, says which screens its screened_datasets.csv holds.
    import json

    import yaml

    from qs3study.claims.assemble import _claims_of

    _table().to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"claims": CRITERIA,
                                                          "data_checks": {"signal_permutations": 199}}))
    # written before the screen column existed: its no_signal rows are the level screen's
    pd.DataFrame({"dataset": ["x", "a", "b"], "status": ["refused", "no_signal", "signal"],
                  "reason": "best CV AUC"}).to_csv(tmp_path / "screened_datasets.csv", index=False)
    with pytest.raises(ValueError, match=r"a \(permutation\)"):  # no manifest: today's configuration
        _claims_of(str(tmp_path / "results.csv"), [str(tmp_path / "config.yaml")])
    (tmp_path / "manifest.json").write_text(json.dumps({"config": {"claims": {"signal_level": 0.55}}}))
    evidence = _claims_of(str(tmp_path / "results.csv"), [str(tmp_path / "config.yaml")])["highest_auc"]["evidence"]
    assert "on 1/1 datasets" in evidence and "not counted: a (screened: no method reaches" in evidence


def test_a_screened_file_without_its_screen_column_is_read_as_the_level_screens():
    import io

    from qs3study.claims.empirical import read_screened

    screened = read_screened(io.StringIO("dataset,status,reason\nx,refused,r\ny,accepted,r\na,no_signal,r\n"
                                         "b,signal,r\n"))
    assert screened["screen"].tolist() == ["loading", "loading", "level", "level"]
    kept = read_screened(io.StringIO("dataset,screen,status,reason\na,permutation,no_signal,r\n"))
    assert kept["screen"].tolist() == ["permutation"]


def test_tail_exponent_fits_the_largest_sizes_only():
    from scipy import stats

    from qs3study.theory.complexity import local_exponents, tail_exponent

    n = np.repeat([100, 200, 400, 800, 1600, 3200], 3)
    noise = np.tile([1.0, 1.05, 0.97], 6)
    cost = (0.5 + 1e-9 * n ** 3.0) * noise  # a fixed overhead flattens the small sizes
    slope, low, high = tail_exponent(n, cost, tail=3, confidence=0.95)
    keep = n >= 800
    reference = stats.linregress(np.log(n[keep]), np.log(cost[keep]))
    assert slope == pytest.approx(reference.slope)
    half = stats.t.ppf(0.975, keep.sum() - 2) * reference.stderr
    assert (low, high) == pytest.approx((reference.slope - half, reference.slope + half))
    steps = local_exponents(n, cost)
    assert steps.shape == (5,) and steps[0] < 0.1 and steps[-1] > 2.5
    assert np.isnan(tail_exponent(n[:2], cost[:2], tail=3, confidence=0.95)[0])


def groups(risk):
    """Number of distinct groups of rows in a risk's pair terms (the low-rank part's size)."""
    return len({t.upper for t in risk.terms} | {t.lower for t in risk.terms})


@pytest.mark.slow
def test_operation_counts_follow_the_algorithms():
    """The literal Algorithms 1-2 evaluate ~t^2 features; the exact solve factorises one n x n matrix.

    With tradeoff 0.5 every row is weighed, so the factorisation is one Cholesky of an n x n matrix (1/3 n^3),
    beside the LU of the low-rank part's small system (one row and column per group of rows).
    """
    from qs3study.theory.complexity import tail_exponent

    settings = SETTINGS
    literal = run_sweep("literal_operations_vs_t", [40, 80, 160, 320], settings, repeats=3)
    assert [r["repeat"] for r in literal] == [0, 0, 0, 0]
    slope = tail_exponent([r["size"] for r in literal], [r["value"] for r in literal], tail=3, confidence=0.95)[0]
    assert slope == pytest.approx(2.0, abs=0.05)
    exact = run_sweep("exact_operations_vs_n", [20, 40], settings, repeats=1)
    small = 2 / 3 * groups(ordinal_pairwise_risk(3, np.full(2, 0.5))) ** 3
    assert [r["value"] for r in exact] == pytest.approx([1 / 3 * 20 ** 3 + small, 1 / 3 * 40 ** 3 + small])


def test_baseline_sweeps_time_and_count_the_exact_baselines():
    from qs3study.theory.complexity import SWEEPS
    from qs3study.claims.studies import BASELINE_SWEEPS

    settings = SETTINGS
    sweeps = {**SWEEPS, **BASELINE_SWEEPS}
    for name in ("samult_time_vs_n", "pnu_auc_time_vs_n"):
        assert run_sweep(name, [40], settings, repeats=1, sweeps=sweeps)[0]["value"] > 0
    counted = run_sweep("samult_operations_vs_n", [40], settings, repeats=1, sweeps=sweeps)[0]["value"]
    # one n x n Cholesky factorisation per ordinal split (k - 1 = 2), and the small system's LU
    assert counted == pytest.approx(sum(1 / 3 * 40 ** 3 + 2 / 3 * groups(samult_risk(j, 3, 0.5)) ** 3 for j in (0, 1)))


def test_timings_count_cpu_seconds_on_the_designs_blas_threads():
    """A call that waits costs no CPU time (a wall clock would count the wait); BLAS runs on blas_threads."""
    import time

    from threadpoolctl import threadpool_info

    seen = []

    def waits():
        time.sleep(0.3)
        seen.append([pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"])

    sweeps = {"waits": ("n", lambda size, o: waits, "cpu_seconds")}
    records = run_sweep("waits", [1], SETTINGS, repeats=2, sweeps=sweeps)
    assert [r["quantity"] for r in records] == ["cpu_seconds"] * 2
    assert all(0.0 <= r["value"] < 0.1 for r in records)
    assert seen and all(threads == [1] * len(threads) and threads for threads in seen)
    busy = {"busy": ("n", lambda size, o: lambda: np.linalg.qr(np.ones((size, size)) + np.eye(size)), "cpu_seconds")}
    assert run_sweep("busy", [300], SETTINGS, repeats=1, sweeps=busy)[0]["value"] > 0


def test_a_timed_sweep_needs_blas_threads():
    settings = {key: value for key, value in SETTINGS.items() if key != "blas_threads"}
    with pytest.raises(ValueError, match="blas_threads"):
        run_sweep("exact_time_vs_n", [20], settings, repeats=1)
    with pytest.raises(ValueError, match="blas_threads"):
        run_sweep("exact_time_vs_n", [20], {**SETTINGS, "blas_threads": 0}, repeats=1)
    # memory and operation counts are not timed: they need no thread setting
    assert run_sweep("exact_operations_vs_n", [20], settings, repeats=1)[0]["value"] > 0


def test_memory_need_asks_every_method_with_an_estimate_the_same_way():
    need = _memory_need(_table())
    estimated = sorted(name for name, method in REGISTRY.items() if hasattr(method.estimator, "estimate_memory"))
    assert {"m-pnu-auc", "m-samult", "nystrom-auc", "qs3orao-exact", "rff-auc", "svorex"} <= set(estimated)
    for name in estimated:
        small, large = need(name, "a", 1_000), need(name, "b", 30_000)
        assert 0 < small <= large < np.inf, name
    # the values of the special-cased call before the one signature, d = 5, k = 5, 500 labeled
    assert need("m-pnu-auc", "a", 1_000) * 2**20 == 72_168_000
    assert need("m-pnu-auc", "a", 400) * 2**20 == 10_304_000  # fewer rows than labeled ones: all rows labeled
    assert need("m-samult", "a", 1_000) * 2**20 == 24_160_000
    # SVOREX's estimate follows its labeled rows only
    assert need("svorex", "a", 30_000) == need("svorex", "a", 500)


def _with_objective_columns(exact_gain):
    """:func:`_table` plus f* and f*-labeled rows: f* beats f*-labeled by ``exact_gain`` (with trial noise)."""
    table = _table()
    rows = table[table["method"] == "qs3orao"].copy()
    exact = rows.assign(method="qs3orao-exact", auc=rows["auc"] + 0.05)
    labeled = rows.assign(method="qs3orao-exact-labeled",
                          auc=rows["auc"] + 0.05 - exact_gain + 0.002 * rows["trial"] ** 2)
    return pd.concat([table, exact, labeled], ignore_index=True)


def test_claim_8e_has_two_readings_each_from_its_own_columns():
    # QS3ORAO beats QS3ORAO-labeled (as run: holds); f* loses to f*-labeled on the objective: fails.
    claims = empirical_claims(_with_objective_columns(exact_gain=-0.03), CRITERIA)
    assert claims["unlabeled_data_help"]["verdict"] == "holds"
    objective = claims["unlabeled_data_help_objective"]
    assert objective["verdict"] == "fails" and objective["evidence"].startswith("qs3orao-exact (f*, exact) against "
                                                                                 "qs3orao-exact-labeled")
    assert "worse on 2" in objective["evidence"]
    helped = empirical_claims(_with_objective_columns(exact_gain=0.03), CRITERIA)["unlabeled_data_help_objective"]
    assert helped["verdict"] == "holds" and "significantly better on 2" in helped["evidence"]
    # Without the f*-labeled column the second reading is not evaluated, and says why.
    missing = empirical_claims(_table(), CRITERIA)["unlabeled_data_help_objective"]
    assert missing["verdict"] == "not evaluated" and "no f*-labeled column" in missing["evidence"]


def _drawn(shift):
    """:func:`_table` at tuning draw 0, and QS3ORAO's comparison rows again at draw 1, their AUC moved by ``shift``."""
    table = _table().assign(size=lambda t: t["n_unlabeled"].astype(str), tuning_draw=0)
    again = table[(table["method"] == "qs3orao") & table["comparison"]]
    return pd.concat([table, again.assign(tuning_draw=1, auc=again["auc"] + shift)], ignore_index=True)


def test_a_verdict_that_moves_with_the_tuning_draw_depends_on_it_and_the_evidence_gives_each_draw():
    from qs3study.claims.rows.empirical import rows_empirical
    from qs3study.claims.verdicts import DRAW_DEPENDENT

    single = {k: v["verdict"] for k, v in empirical_claims(_table(), CRITERIA).items()}
    same = empirical_claims(_drawn(0.0), CRITERIA)
    assert {k: v["verdict"] for k, v in same.items()} == single
    assert "tuning draw 0: holds" in same["highest_auc"]["evidence"]
    assert "tuning draw 1: holds" in same["highest_auc"]["evidence"]
    # At draw 1 QS3ORAO scores 0.70: below the exact baselines and below its labeled-only twin (0.75).
    moved = empirical_claims(_drawn(-0.1), CRITERIA)
    for key in ("highest_auc", "unlabeled_data_help", "similar_generalisation"):
        assert moved[key]["verdict"] == DRAW_DEPENDENT
        assert "tuning draw 0: holds" in moved[key]["evidence"] and "tuning draw 1: fails" in moved[key]["evidence"]
        assert moved[key]["evidence"].startswith("read at each of 2 tuning draws of qs3orao")
    # The sweep's times are draw 0's at every draw: 8c keeps its verdict.
    assert moved["faster_beyond_10k"]["verdict"] == single["faster_beyond_10k"] == "holds"
    rows = rows_empirical(moved, "")
    assert [r.verdict for r in rows if r.id in ("8a", "8e", "8f")] == [DRAW_DEPENDENT] * 3


def _moved(method, shift):
    table = _table()
    table.loc[table["method"] == method, "auc"] += shift
    return table


#: Per empirical claim, a table on which it flips from "holds" (on :func:`_table`).
FLIPS = {"highest_auc": lambda: _moved("m-pnu-auc", 0.1), "beats_supervised": lambda: _moved("svorex", 0.2),
         "faster_beyond_10k": lambda: _table(faster=False),
         "exact_out_of_memory": lambda: _table(oom=False, budget_mb=1e9),
         "unlabeled_data_help": lambda: _moved("qs3orao-labeled", 0.1),
         "similar_generalisation": lambda: _moved("m-pnu-auc", 0.1)}


@pytest.mark.parametrize("claim", sorted(FLIPS))
def test_each_empirical_claims_evidence_changes_with_its_verdict(claim):
    """Mutation: a table that flips a claim's verdict changes its evidence text too (no fixed clause)."""
    before = empirical_claims(_table(), CRITERIA)[claim]
    after = empirical_claims(FLIPS[claim](), CRITERIA)[claim]
    assert before["verdict"] == "holds" and after["verdict"] != "holds", after
    assert before["evidence"] != after["evidence"]


def test_8c_and_8d_evidence_carry_the_crossover_interval_and_the_measured_refusals():
    claims = empirical_claims(_table(), CRITERIA)
    # the baselines' time n / 1e3 (n / 2e3) against QS3ORAO's 5 s: the median ratio crosses 1 at 5,000 (10,000)
    assert "a/m-pnu-auc: from 30000 (not faster at 1,000, faster at every measured size from 30,000; median ratio " \
           "crosses 1 at 5,000 (95% interval 5,000 .. 5,000; bootstrap" in claims["faster_beyond_10k"]["evidence"]
    assert "a/m-samult: from 30000 (not faster at 1,000, faster at every measured size from 30,000; median ratio " \
           "crosses 1 at 10,000" in claims["faster_beyond_10k"]["evidence"]
    evidence = claims["exact_out_of_memory"]["evidence"]
    assert "Measured refusals (only a memory refusal bears on the claim): a/m-pnu-auc: ran up to 30,000 unlabeled " \
           "rows" in evidence and "first not run at 100,000 (memory budget)" in evidence
    assert "estimated need at the full sizes" in evidence  # the extrapolation stays beside them
