"""The AUC table: the best mean marked, MAE, accuracy and the constant reference beside it, partial means flagged."""

import numpy as np
import pandas as pd

from qs3study.stages import tables


def _results(rows):
    base = {"size": "all", "comparison": True, "n_unlabeled": 100, "warnings": "", "status": "ok"}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_the_auc_table_marks_the_best_and_shows_mae_accuracy_and_the_constant_reference():
    rows = []
    for trial in range(2):
        rows += [{"dataset": "d", "method": "a", "trial": trial, "auc": 0.8 + trial / 100, "mae": 0.5, "accuracy": 0.6,
                  "constant_mae": 0.48, "constant_accuracy": 0.689},
                 {"dataset": "d", "method": "b", "trial": trial, "auc": 0.7, "mae": 0.7, "accuracy": 0.5,
                  "constant_mae": 0.48, "constant_accuracy": 0.689, "warnings": "UserWarning: x"}]
    summary = tables.auc_summary(_results(rows), "a", ["a", "b"])
    assert summary.set_index("method")["best"].to_dict() == {"a": True, "b": False}
    text = tables.summary_markdown(summary, "a", {"a": "A", "b": "B"})
    header, _, line = text.splitlines()[:3]
    assert header.endswith("| constant (majority class) |")
    assert "**0.8050 ± 0.0071**; MAE 0.500, acc. 0.600" in line
    assert "[2 warned]; MAE 0.700, acc. 0.500" in line and "MAE 0.480, acc. 0.689" in line


def test_the_auc_table_marks_a_mean_over_only_some_of_the_trials():
    rows = [{"dataset": "d", "method": method, "trial": trial, "auc": 0.8 + trial / 100, "mae": 0.5, "accuracy": 0.6}
            for trial in range(4) for method in ("a", "b")]
    rows[-1].update(status="failed", auc=np.nan, mae=np.nan, accuracy=np.nan)  # b's trial 3 was killed
    summary = tables.auc_summary(_results(rows), "a", ["a", "b"])
    text = tables.summary_markdown(summary, "a", {"a": "A", "b": "B"})
    cells = text.splitlines()[2].split(" | ")
    assert "of 4" not in cells[2] and cells[3].startswith("0.8100 ± 0.0100 [3 of 4 trials finished; failed: 1]")
    assert "[k of n trials finished" in text
    complete = tables.summary_markdown(tables.auc_summary(_results(rows[:-2]), "a", ["a", "b"]), "a",
                                       {"a": "A", "b": "B"})
    assert "trials finished" not in complete
