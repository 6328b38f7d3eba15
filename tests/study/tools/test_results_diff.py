"""A rerun against a committed results table: equal bit for bit, or the differences named."""

import numpy as np
import pandas as pd
import pytest

from qs3study.tools.results_diff import COMPARED_COLUMNS, main, results_diff
from qs3study.stages.tables import COLUMNS, MEASUREMENT_COLUMNS, read_results


def _table(datasets=("a", "b"), seed=0):
    """A results table with every column; measurements and versions differ from seed to seed."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in datasets:
        for method in ("qs3orao", "svorex"):
            for trial in range(3):
                row = {column: "x" for column in COLUMNS}
                row.update(dataset=dataset, method=method, size="comparison", trial=trial, seed=trial,
                           comparison=True, status="ok", auc=0.8 + 0.01 * trial, mae=np.nan,
                           n_iter_fitted=2000.0, versions=f"numpy {seed}")
                row.update({column: rng.random() for column in MEASUREMENT_COLUMNS})
                rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def test_a_rerun_of_some_datasets_with_other_measurements_reproduces_the_committed_rows():
    counts, differences, unmatched = results_diff(_table(["b"], seed=1), _table(seed=2))
    assert set(counts.index) == set(COMPARED_COLUMNS) and (counts == 0).all()
    assert differences.empty and unmatched.empty


def test_one_ulp_of_one_auc_is_a_difference_and_a_missing_row_is_unmatched():
    rerun = _table(["b"])
    rerun.loc[4, "auc"] = np.nextafter(rerun.loc[4, "auc"], 1.0)
    rerun = rerun.drop(index=0)
    counts, differences, unmatched = results_diff(rerun, _table())
    assert counts["auc"] == 1 and counts.drop("auc").eq(0).all()
    assert differences[["dataset", "method", "trial", "column"]].values.tolist() == [["b", "svorex", 1, "auc"]]
    assert unmatched[["dataset", "method", "trial", "side"]].values.tolist() == [["b", "qs3orao", 0, "committed only"]]


def test_repeated_keys_and_missing_columns_are_refused():
    with pytest.raises(ValueError, match="repeats the keys"):
        results_diff(pd.concat([_table(), _table()]), _table())
    with pytest.raises(ValueError, match=r"lacks the columns \['auc'\]"):
        results_diff(_table().drop(columns="auc"), _table())


def test_the_command_reads_the_csv_files_and_exits_1_on_a_difference(tmp_path, capsys):
    committed, rerun = tmp_path / "committed.csv", tmp_path / "rerun.csv"
    _table().to_csv(committed, index=False)
    _table(["a"], seed=3).to_csv(rerun, index=False)
    assert read_results(rerun)["mae"].isna().all()  # NaN read back as NaN, compared equal
    assert main([str(rerun), str(committed)]) == 0
    assert "reproduced bit for bit" in capsys.readouterr().out
    changed = _table(["a"])
    changed.loc[0, "params"] = "y"
    changed.to_csv(rerun, index=False)
    assert main([str(rerun), str(committed)]) == 1
    assert "NOT reproduced" in capsys.readouterr().out


def test_an_empty_rerun_or_one_sharing_no_dataset_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        results_diff(_table().iloc[:0], _table())
    with pytest.raises(ValueError, match=r"no dataset.*\bc\b"):
        results_diff(_table(["c"]), _table())


def test_the_command_refuses_an_empty_rerun_in_one_line(tmp_path, capsys):
    committed, rerun = tmp_path / "committed.csv", tmp_path / "rerun.csv"
    _table().to_csv(committed, index=False)
    _table().iloc[:0].to_csv(rerun, index=False)
    assert main([str(rerun), str(committed)]) == 1
    out = capsys.readouterr()
    assert "reproduced bit for bit" not in out.out and "rerun.csv" in out.err
