"""`python -m qs3study.claims --out DIR` reassembles the committed theory outputs byte for byte."""

import json
import os
import subprocess
import sys
from pathlib import Path

from qs3study.claims.manifest import file_sha256

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "figures" / "theory"


#: Runs the CLI and fails if anything under the design's offline mirror is opened or listed: the
#: ledger reads the theory run's dataset facts, so it reassembles the same with or without the mirror.
_WITHOUT_MIRROR = """
import os, sys
from qs3study.claims.__main__ import DESIGN, ROOT, main
from qs3study.claims.design import load_design
mirror = os.path.realpath(os.path.join(ROOT, load_design(os.path.join(ROOT, DESIGN))["checks"]["table2"]["mirror"]))
def hook(event, args):
    if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == mirror or path.startswith(mirror + os.sep):
            raise RuntimeError(f"the assembly read the mirror: {path}")
sys.addaudithook(hook)
sys.exit(main(sys.argv[1:]))
"""


def test_reassembly_from_the_committed_tidy_data_is_byte_identical_and_never_reads_the_mirror(tmp_path):
    out = tmp_path / "theory"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", _WITHOUT_MIRROR, "--out", str(out)], capture_output=True,
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


def _claims(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "qs3study.claims", *map(str, args)], capture_output=True, text=True,
                          env=env)


def test_reassembly_refuses_a_folder_holding_files_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "summary.csv").write_text("my own summary\n")
    (out / "manifest.json").write_text('{"mine": true}\n')
    (out / "notes.txt").write_text("not one of its names\n")
    result = _claims("--out", out)
    assert result.returncode != 0 and "summary.csv" in result.stderr and "manifest.json" in result.stderr
    assert "Traceback" not in result.stderr and "notes.txt" not in result.stderr
    assert (out / "summary.csv").read_text() == "my own summary\n" and len(list(out.iterdir())) == 3


def test_reassembly_names_a_truncated_tidy_file_and_its_missing_columns(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for path in COMMITTED.glob("*.csv"):
        (data / path.name).write_bytes(path.read_bytes())
    (data / "problems.csv").write_text("instance,lam,n,fstar_norm\n")
    result = _claims("--out", tmp_path / "o", "--data", data)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "problems.csv" in result.stderr and "curvature" in result.stderr and len(result.stderr) < 500
