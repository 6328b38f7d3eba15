"""The scripts of ``examples/`` run from a clean directory and rank the unlabeled rows above chance."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
NUMBER = r"(\S+)"


def run_example(name, cwd):
    """The standard output of ``examples/<name>`` run in ``cwd``; fails the test on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), str(REPO / "workflow"),
                                                                      os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, env=env,
                            cwd=cwd, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def assert_auc(text):
    """``text`` read as an ordinal AUC above chance (a NaN or a non-number fails)."""
    value = float(text)
    assert 0.5 < value <= 1, f"AUC {text} is not in (0.5, 1]"
    return value


@pytest.mark.slow
def test_fit_and_predict_prints_auc_close_to_the_exact_minimiser(tmp_path):
    out = run_example("fit_and_predict.py", tmp_path)
    aucs = dict(re.findall(rf"^(QS3ORAO|exact f\*) ordinal AUC on the unlabeled rows: {NUMBER}$", out, re.M))
    assert set(aucs) == {"QS3ORAO", "exact f*"}, out
    stochastic, exact = assert_auc(aucs["QS3ORAO"]), assert_auc(aucs["exact f*"])
    assert abs(stochastic - exact) < 0.02, out
    assert re.search(r"^iterations: 1000 ", out, re.M), out
    predicted = re.search(r"^predicted classes of the first unlabeled rows: \[([\d ]+)\]$", out, re.M)
    assert predicted and set(predicted.group(1).split()) <= set("01234"), out


@pytest.mark.slow
def test_compare_with_baseline_prints_one_auc_and_time_per_method(tmp_path):
    out = run_example("compare_with_baseline.py", tmp_path)
    rows = re.findall(rf"^(.+?) {{2,}}{NUMBER} +{NUMBER}$", out, re.M)
    assert [name.strip() for name, _, _ in rows] == ["QS3ORAO", "QS3ORAO, labeled rows only",
                                                     "M-PNU-AUC (exact kernel)"], out
    for _, auc, seconds in rows:
        assert_auc(auc)
        assert float(seconds) >= 0
