"""Every empirical claim is read with and without the trials in which a fit stopped unconverged."""

import numpy as np
import pandas as pd

from qs3study.claims.empirical import KEYS, empirical_claims, without_unconverged

CRITERIA = {"labeled_only_method": "qs3orao-labeled"}
#: QS3ORAO-labeled's AUC minus QS3ORAO's in trials 4-7, where it converged: no systematic difference.
CONVERGED_SHIFT = (0.002, -0.002, 0.003, -0.003)


def _table(converged_labeled):
    """One dataset, 8 trials: the labeled-only fit trails by 0.1 in trials 0-3, and matches QS3ORAO in 4-7."""
    rows = []
    for trial in range(8):
        ours = 0.8 + 0.001 * trial
        labeled = ours - 0.1 - 0.001 * trial if trial < 4 else ours + CONVERGED_SHIFT[trial - 4]
        for method, auc, converged in (("qs3orao", ours, True),
                                       ("qs3orao-labeled", labeled, converged_labeled or trial >= 4),
                                       ("svorex", 0.79, np.nan)):
            rows.append({"dataset": "a", "method": method, "trial": trial, "size": "100", "comparison": True,
                         "status": "ok", "auc": auc, "n_unlabeled": 100, "fit_time": 1.0, "converged": converged})
    return pd.DataFrame(rows)


def test_without_unconverged_leaves_out_every_method_of_the_trial():
    table = _table(converged_labeled=False)
    kept, left_out = without_unconverged(table)
    assert left_out == {"a": 4}
    assert sorted(kept["trial"].unique()) == [4, 5, 6, 7] and len(kept) == 4 * 3
    kept, left_out = without_unconverged(table.drop(columns="converged"))  # a table without the column
    assert left_out == {} and len(kept) == len(table)


def test_a_verdict_carried_by_unconverged_trials_is_reported_without_them():
    claims = empirical_claims(_table(converged_labeled=False), CRITERIA)
    help_ = claims["unlabeled_data_help"]
    assert help_["verdict"] == "holds" and help_["verdict_without_unconverged"] == "inconclusive"
    assert "Without the trials with an unconverged fit (a 4): inconclusive (" in help_["evidence"]
    assert all("verdict_without_unconverged" in claims[key] for key in KEYS)
    same = claims["highest_auc"]
    assert same["verdict_without_unconverged"] == same["verdict"]
    assert f"Without the trials with an unconverged fit (a 4): the same verdict, {same['verdict']}" in same["evidence"]


def test_a_table_whose_fits_all_converged_reads_the_same_both_ways():
    claims = empirical_claims(_table(converged_labeled=True), CRITERIA)
    for key in KEYS:
        assert claims[key]["verdict_without_unconverged"] == claims[key]["verdict"]
        assert "unconverged" not in claims[key]["evidence"]
    assert claims["unlabeled_data_help"]["verdict"] == "holds"


def test_tuning_draws_combine_the_readings_without_unconverged_too():
    first = _table(converged_labeled=False).assign(tuning_draw=0)
    second = first[first["method"] != "svorex"].assign(tuning_draw=1)
    claims = empirical_claims(pd.concat([first, second], ignore_index=True), CRITERIA)
    assert claims["unlabeled_data_help"]["verdict"] == "holds"
    assert claims["unlabeled_data_help"]["verdict_without_unconverged"] == "inconclusive"


def test_a_dataset_left_with_one_paired_trial_is_named_and_kept_out_of_the_holm_family():
    first = _table(converged_labeled=True).replace({"method": {"svorex": "m-samult"}})  # 8f's exact baseline
    lone = first[first["trial"] == 0].assign(dataset="b")  # dataset b: one trial, no paired test
    claims = empirical_claims(pd.concat([first, lone], ignore_index=True), CRITERIA)
    for key in ("unlabeled_data_help", "similar_generalisation"):
        evidence = claims[key]["evidence"]
        assert "Holm-adjusted over the 1 of 2 datasets with a test at 0.05" in evidence
        assert "1 paired trial, no test" in evidence and "p=nan" not in evidence
    assert "worse on 0 of 2" in claims["unlabeled_data_help"]["evidence"]
