"""Snakemake runs of the tiny configuration in scratch working directories, for the end-to-end tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from qs3study.stages import tables

REPO = Path(__file__).resolve().parents[2]
TINY = Path(__file__).with_name("tiny.yaml")
CONFIGS = REPO / "workflow" / "config"

EXPECTED_ROWS = 2 * 2 + 2 * (2 + 1)  # swd: 2 methods x 2 trials; synthetic: 2 methods x (2 trials + 1 sweep point)
EXPECTED_TRAINING_JOBS = 2 * 1 + 2 * 2  # one per (dataset, method, size): swd 1 size, synthetic 2
PAPER_DATASETS = ("road3d", "sgemm", "year_prediction_msd", "yolanda", "amazon_baby", "amazon_beauty",
                  "amazon_clothing", "amazon_pet")


def snakemake_command(workdir, *args):
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
            str(workdir), "--cores", "2", *map(str, args)]


def environment():
    # The scripts import the packages of this checkout, whatever is installed.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), str(REPO / "workflow"),
                                                                      os.environ.get("PYTHONPATH")]))}


def snakemake(workdir, *args, check=True):
    result = subprocess.run(snakemake_command(workdir, *args), capture_output=True, text=True, env=environment())
    if check and result.returncode != 0:
        pytest.fail(f"snakemake {' '.join(map(str, args))} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def run_tiny(workdir, *args):
    return snakemake(workdir, "--configfile", TINY, "--keep-going", *args)


def deterministic(table):
    return table.drop(columns=tables.MEASUREMENT_COLUMNS)


def jobs_of(output, rule):
    """``{job: count}`` of the dry run's job table, for one rule."""
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == rule and parts[1].isdigit():
            return int(parts[1])
    return 0


def tiny():
    """The tiny configuration as its file holds it (not validated)."""
    return yaml.safe_load(TINY.read_text())


def write_config(tmp_path, config, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def local_dataset(path, name="houses"):
    """The tiny configuration on one local dataset, ``name``: the CSV file ``path`` (target ``price``), 150
    unlabeled rows, the sweep at 150."""
    config = tiny()
    config["datasets"] = {name: {"source": {"path": str(path), "format": "csv", "target": "price"},
                                 "params": {"gamma": 1.0}}}
    config["sweep"] = {"datasets": "all", "n_unlabeled": [150]}
    config["protocol"]["n_unlabeled"] = 150
    return config
