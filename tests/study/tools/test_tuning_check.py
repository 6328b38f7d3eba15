"""qs3study.tools.tuning_check: tuning once against tuning per trial, by the declared criterion."""

import numpy as np
import pandas as pd
import pytest

from qs3study.stages.tables import COLUMNS
from qs3study.tools.tuning_check import compare, main


def _results(aucs, dataset="d"):
    """A tidy results table: ``aucs`` maps method -> AUC per trial (comparison rows, status ok)."""
    rows = [{"dataset": dataset, "method": method, "trial": trial, "comparison": True, "status": "ok", "auc": auc}
            for method, values in aucs.items() for trial, auc in enumerate(values)]
    frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
    frame["reason"], frame["tuning_draw"] = "", 0
    return frame


def _write(frame, path):
    frame.to_csv(path, index=False)
    return str(path)


def test_a_change_below_the_spread_holds_and_above_fails(tmp_path):
    once = _results({"a": [0.80, 0.82, 0.78, 0.81], "b": [0.70, 0.71, 0.69, 0.70]})
    per_trial = _results({"a": [0.80, 0.84, 0.76, 0.83], "b": [0.70, 0.80, 0.79, 0.81]})
    result = compare(once, per_trial, "d").set_index("method")
    spread_b = np.std([0.70, 0.80, 0.79, 0.81], ddof=1)
    assert result.loc["b", "change"] == pytest.approx(0.775 - 0.70) and result.loc["b", "spread"] == pytest.approx(spread_b)
    assert result.loc["a", "within"] and not result.loc["b", "within"]
    args = [_write(once, tmp_path / "once.csv"), _write(per_trial, tmp_path / "per.csv"), "--dataset", "d"]
    assert main(args) == 1
    assert main([*args[:2], "--dataset", "d", "--out", str(tmp_path / "c.csv")]) == 1
    assert len(pd.read_csv(tmp_path / "c.csv")) == 2
    per_trial.loc[(per_trial["method"] == "b"), "auc"] = [0.70, 0.73, 0.67, 0.71]
    assert main([args[0], _write(per_trial, tmp_path / "per.csv"), "--dataset", "d"]) == 0


def test_only_trials_both_runs_finished_are_compared():
    once = _results({"a": [0.80, 0.82, 0.78, 0.81, 0.50]})
    per_trial = _results({"a": [0.80, 0.84, 0.76]})
    once.loc[1, "status"] = "failed"
    result = compare(once, per_trial, "d").set_index("method")
    assert result.loc["a", "n_trials"] == 2
    assert result.loc["a", "mean_once"] == pytest.approx((0.80 + 0.78) / 2)
    assert result.loc["a", "mean_per_trial"] == pytest.approx((0.80 + 0.76) / 2)


def test_a_missing_dataset_is_named():
    table = _results({"a": [0.8, 0.7]})
    with pytest.raises(ValueError, match="'x' is not in the once table"):
        compare(table, table, "x")


def test_no_shared_pair_of_trials_cannot_be_compared(tmp_path):
    once, per_trial = _results({"a": [0.8]}), _results({"a": [0.8]})
    with pytest.raises(ValueError, match="two finished trials in both"):
        compare(once, per_trial, "d")
    assert main([_write(once, tmp_path / "o.csv"), _write(per_trial, tmp_path / "p.csv"), "--dataset", "d"]) == 2
