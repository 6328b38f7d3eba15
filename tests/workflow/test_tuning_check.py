"""qs3study.tuning_check: tuning once against tuning per trial, by the declared criterion."""

import pandas as pd
import pytest

from qs3study.tuning_check import compare, main


def _table(means, stds, dataset="d"):
    return pd.DataFrame({"dataset": dataset, "method": list(means), "auc_mean": list(means.values()),
                         "auc_std": [stds[m] for m in means]})


def test_a_change_below_the_spread_holds_and_above_fails(tmp_path):
    once = _table({"a": 0.80, "b": 0.70}, {"a": 0.01, "b": 0.01})
    per_trial = _table({"a": 0.805, "b": 0.75}, {"a": 0.02, "b": 0.02})
    result = compare(once, per_trial, "d").set_index("method")
    assert result.loc["a", "within"] and not result.loc["b", "within"]
    once.to_csv(tmp_path / "once.csv", index=False)
    per_trial.to_csv(tmp_path / "per.csv", index=False)
    assert main([str(tmp_path / "once.csv"), str(tmp_path / "per.csv"), "--dataset", "d"]) == 1
    per_trial.loc[per_trial["method"] == "b", "auc_mean"] = 0.71
    per_trial.to_csv(tmp_path / "per.csv", index=False)
    assert main([str(tmp_path / "once.csv"), str(tmp_path / "per.csv"), "--dataset", "d"]) == 0


def test_a_missing_dataset_is_named():
    with pytest.raises(ValueError, match="'x' is not in the once table"):
        compare(_table({"a": 0.8}, {"a": 0.1}), _table({"a": 0.8}, {"a": 0.1}), "x")
