"""The README's cluster command, through the SLURM profile on a real cluster.

``snakemake --profile workflow/profiles/slurm --configfile ...`` as documented: no
``--cores``, no account, no partition (the plugin guesses the account or lets SLURM use
the user's default one, and takes the cluster's default partition). The tiny
configuration runs end to end when a cluster answers ``sinfo`` (``.ci/run`` starts a
one-node cluster with ``../shared/tools/local-slurm.sh`` where it can); skipped, with
the reason, otherwise. Only the plugin's first status check is brought forward
(``--slurm-init-seconds-before-status-checks``, 40 s by default) to keep the test short.
"""

import re
import shutil
import subprocess
import sys

import pytest

from qs3study.stages import tables
from pipeline import EXPECTED_ROWS, EXPECTED_TRAINING_JOBS, REPO, TINY, environment


def cluster_answers():
    """(True, "") when ``sinfo`` lists a partition that is up, else (False, why not)."""
    if shutil.which("sinfo") is None:
        return False, "no SLURM cluster: sinfo is not installed"
    try:
        result = subprocess.run(["sinfo", "-h", "-o", "%P %a"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return False, "no SLURM cluster: sinfo did not answer within 30 s"
    if result.returncode != 0:
        return False, f"no SLURM cluster: sinfo failed ({result.stderr.strip()[:200]})"
    if not any(line.split()[-1] == "up" for line in result.stdout.splitlines() if line.split()):
        return False, f"no SLURM partition is up: {result.stdout.strip()[:200]}"
    return True, ""


@pytest.mark.slow
def test_tiny_configuration_runs_end_to_end_through_the_slurm_profile(tmp_path):
    available, reason = cluster_answers()
    if not available:
        pytest.skip(reason)
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
               str(tmp_path), "--profile", str(REPO / "workflow" / "profiles" / "slurm"), "--configfile", str(TINY),
               "--slurm-init-seconds-before-status-checks", "5"]
    result = subprocess.run(command, capture_output=True, text=True, env=environment(), timeout=1800)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "Workflow requires a total number of cores" not in output
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", output)
    # prepare, tune (2 datasets x 2 trials), train (one job per dataset, method and size)
    assert len(submitted) == 2 + 2 * 2 + EXPECTED_TRAINING_JOBS, output[-3000:]
    table = tables.read_results(tmp_path / "results" / "tables" / "results.csv")
    assert len(table) == EXPECTED_ROWS and set(table["status"]) <= set(tables.STATUSES)
    assert (table.loc[table["method"] == "qs3orao", "status"] == "ok").all()
    assert (tmp_path / "figures" / "tiny" / "manifest.json").is_file()
