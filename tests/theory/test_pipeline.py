"""`snakemake theory` end to end on the reduced design (tests/theory/design_ci.yaml), in a scratch directory."""

import csv
import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from qs3study.claims.verdicts import VERDICTS

REPO = Path(__file__).resolve().parents[2]
CI_DESIGN = Path(__file__).with_name("design_ci.yaml")


@pytest.fixture(scope="module")
def theory_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("theory")
    shutil.copy(CI_DESIGN, workdir / "design.yaml")
    result = theory(workdir)
    if result.returncode != 0:
        pytest.fail(f"snakemake theory failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return workdir / "out"


def theory(workdir, *args):
    """``snakemake theory`` on ``workdir``'s copy of the reduced design, outputs in ``workdir / "out"``."""
    config = f'theory={{"design": "{workdir / "design.yaml"}", "out": "{workdir / "out"}"}}'
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
               "--cores", "2", "theory", "--config", config, *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(command, capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_ledger_rows_have_computed_verdicts(theory_run):
    rows = list(csv.DictReader(open(theory_run / "claims_ledger.csv")))
    ids = [r["id"] for r in rows]
    for required in ("1a", "1b", "3p", "4p", "A1", "A3", "5a", "5b", "6", "6r", "6b", "S", "O", "7", "7s", "T2", "N"):
        assert required in ids
    assert all(r["verdict"] in VERDICTS for r in rows)
    verdict = {r["id"]: r["verdict"] for r in rows}
    assert verdict["1b"] == verdict["A1"] == verdict["A3"] == verdict["3p"] == "fails"
    text = (theory_run / "claims_ledger.md").read_text()
    assert "sha256" in text and "## History" in text


@pytest.mark.slow
def test_tidy_data_recompute_the_ledger_numbers(theory_run):
    records = pd.read_csv(theory_run / "convergence.csv")
    assert {"instance", "lam", "theta_lam", "batch_size", "seed", "t", "error_mean", "error_max"} <= set(records)
    primary = records[records["batch_size"] == 1]
    assert set(primary["lam"]) == {0.0625, 1.0} and set(primary["instance"]) == {"A", "B"}
    assert set(records["schedule"]) == {"paper", "offset_auto"}
    summary = pd.read_csv(theory_run / "summary.csv")
    assert len(summary) == len(records.groupby(["instance", "lam", "theta_lam", "batch_size", "schedule"]))


@pytest.mark.slow
def test_manifest_covers_every_theory_output(theory_run):
    manifest = json.loads((theory_run / "manifest.json").read_text())
    produced = {p.name for p in theory_run.iterdir() if p.name != "manifest.json"}
    assert {Path(p).name for p in manifest["outputs"]} == produced
    assert len(manifest["design"]["sha256"]) == 64


@pytest.mark.slow
def test_a_change_outside_a_study_section_reruns_the_ledger_not_the_studies(theory_run):
    design = theory_run.parent / "design.yaml"
    text = design.read_text()
    try:
        design.write_text(text + "\n# a note in the design, outside the studies' sections\n")
        planned = theory(theory_run.parent, "--dry-run").stdout
        assert re.search(r"^theory_ledger\s+1$", planned, flags=re.M), planned
        assert not re.search(r"^theory_(convergence|complexity)\s", planned, flags=re.M), planned
        design.write_text(text.replace("convergence:", "convergence:\n  note: changed", 1))
        planned = theory(theory_run.parent, "--dry-run").stdout
        assert re.search(r"^theory_convergence\s+1$", planned, flags=re.M), planned
    finally:
        design.write_text(text)
