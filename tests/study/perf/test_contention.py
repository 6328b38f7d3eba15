"""Trials timed beside another load: named from their wall and CPU times, listed by the command."""

import re
from pathlib import Path

import pandas as pd

from qs3study.perf.contention import CONTENDED_MIN_S, CONTENDED_RATIO, contended_trials, main


def test_a_trial_that_waited_for_its_core_is_named_and_a_short_or_busy_one_is_not():
    table = pd.DataFrame({"dataset": "d", "method": ["m-samult", "m-samult", "qs3orao", "m-pnu-auc", "m-pnu-auc"],
                          "n_unlabeled": [30000, 30000, 30000, 20000, 20000], "tuning_draw": 0,
                          "trial": [0, 1, 0, 0, 1],
                          "status": ["ok", "ok", "ok", "ok", "failed"], "fit_time": [3375.0, 1100.0, 4.0, 900.0, 5.0],
                          "trial_wall_s": [3375.3, 1101.0, 6.0, 900.5, 5000.0],
                          "job_cpu_s": [1204.9, 1090.0, 1.0, 599.0, 1.0]})
    found = contended_trials(table)
    assert found[["method", "trial"]].values.tolist() == [["m-pnu-auc", 0], ["m-samult", 0]]
    assert found["wall_over_cpu"].round(2).tolist() == [1.50, 2.80]


def test_the_command_lists_a_tables_contended_trials(tmp_path, capsys):
    path = tmp_path / "results.csv"
    pd.DataFrame({"dataset": "d", "method": "m-samult", "size": "30000", "n_unlabeled": 30000, "trial": [0, 1],
                  "status": "ok", "fit_time": [3375.0, 1100.0], "trial_wall_s": [3375.3, 1101.0],
                  "job_cpu_s": [1204.9, 1090.0]}).to_csv(path, index=False)
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 trial(s) of at least 10 s with wall time > 1.5 x CPU time") and "2.80" in out
    assert main([str(tmp_path / "missing.csv")]) == 1 and "missing.csv" in capsys.readouterr().err


def test_the_configurations_declare_the_levels_the_code_applies():
    # The rerun rule is declared in the studies' configuration files before their runs; the code must
    # apply what they declare.
    configs = Path(__file__).parents[3] / "workflow" / "config"
    for name in ("scale.yaml", "reproduction-paper.yaml"):
        text = " ".join(line.lstrip("# ") for line in (configs / name).read_text().splitlines())
        declared = re.search(r"trials of at least ([\d.]+) s whose wall time is more than ([\d.]+) times", text)
        assert declared, name
        assert (float(declared[1]), float(declared[2])) == (CONTENDED_MIN_S, CONTENDED_RATIO), name
