"""`python -m qs3study.claims --out DIR` reassembles the committed theory outputs byte for byte."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qs3study.claims.manifest import file_sha256

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "figures" / "theory"


@pytest.mark.slow
def test_reassembly_from_the_committed_tidy_data_is_byte_identical(tmp_path):
    out = tmp_path / "theory"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "qs3study.claims", "--out", str(out)], capture_output=True,
                            text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    committed = sorted(p.name for p in COMMITTED.iterdir() if p.name != "manifest.json")
    assert sorted(p.name for p in out.iterdir() if p.name != "manifest.json") == committed
    differ = [name for name in committed if (out / name).read_bytes() != (COMMITTED / name).read_bytes()]
    assert differ == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["stage"].startswith("assembly only")
    assert all(file_sha256(path) == digest for path, digest in manifest["outputs"].items())


def test_reassembly_names_a_missing_tidy_file(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "qs3study.claims", "--out", str(tmp_path / "o"),
                             "--data", str(tmp_path)], capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "convergence.csv" in result.stderr
