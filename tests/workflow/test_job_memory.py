"""A training job asks Snakemake for the memory its method's own estimate gives at the job's size."""

import math
import re

from baselines import MPNUAUC, MSAMULT

from pipeline import CONFIGS, snakemake

RESERVE_MB = 2048


def train_mem_mb(dry_run):
    """``{output folder: mem_mb}`` of the dry run's train jobs."""
    jobs, output = {}, None
    for line in dry_run.splitlines():
        line = line.strip()
        if line.startswith("output: results/runs/"):
            output = line.split("output: ")[1]
        elif line.startswith("resources:") and output is not None:
            jobs[output] = int(re.search(r"mem_mb=(\d+)", line).group(1))
            output = None
    return jobs


def expected_mem_mb(cls, size, budget):
    """A uci_kin40k job's mem_mb: the estimate of the solver ``cls`` takes at ``budget``, plus the reserve."""
    n_labeled, n_features, n_classes = 500, 8, 5  # uci_kin40k: 8 features, 5 bins
    estimate = cls(memory_budget=budget).estimate_memory(n_labeled + size, n_features, n_classes, n_labeled)
    return math.ceil(min(estimate, budget) / 2**20) + RESERVE_MB


def low_memory_mb(cls, size):
    """MiB of the low-memory solver's estimate on a uci_kin40k job of ``size`` unlabeled rows."""
    return math.ceil(cls(low_memory=True).estimate_memory(500 + size, 8, 5, 500) / 2**20)


#: The scale study's exact baselines and their sweep sizes on uci_kin40k (scale.yaml cuts M-PNU-AUC at 20,000).
SWEPT = (("m-pnu-auc", MPNUAUC, (5000, 20000)), ("m-samult", MSAMULT, (5000, 20000, 30000)))


def test_a_training_jobs_mem_mb_is_its_fits_estimate_plus_the_reserve(tmp_path):
    out = snakemake(tmp_path, "--dry-run", "--configfile", CONFIGS / "reproduction-paper.yaml",
                    CONFIGS / "scale.yaml", "--config", "name=scale-paper").stdout
    jobs = train_mem_mb(out)
    budget = 20480 * 2**20
    for method, cls, sizes in SWEPT:
        for size in sizes:
            expected = expected_mem_mb(cls, size, budget)
            assert jobs[f"results/runs/uci_kin40k/{method}/n{size}/part0"] == expected, (method, size)
    # M-PNU-AUC's low-memory solver at 20,000 unlabeled rows: well under the budget, so two such jobs share
    # the machine, where its fast solver's 7 n^2 floats would not fit the budget at all.
    assert jobs["results/runs/uci_kin40k/m-pnu-auc/n20000/part0"] == low_memory_mb(MPNUAUC, 20000) + RESERVE_MB
    assert jobs["results/runs/uci_kin40k/m-pnu-auc/n20000/part0"] < 10_000
    assert MPNUAUC(low_memory=False).estimate_memory(20500, 8, 5, 500) > budget
    assert "results/runs/uci_kin40k/m-pnu-auc/n30000/part0" not in jobs  # the declared cut


def test_a_job_past_its_fast_solvers_budget_asks_for_its_low_memory_solvers_estimate(tmp_path):
    overlay = tmp_path / "tight.yaml"
    overlay.write_text("protocol:\n  memory_budget_mb: 12288\n")
    out = snakemake(tmp_path, "--dry-run", "--configfile", CONFIGS / "reproduction-paper.yaml",
                    CONFIGS / "scale.yaml", overlay, "--config", "name=scale-paper").stdout
    jobs = train_mem_mb(out)
    budget = 12288 * 2**20
    for method, cls, sizes in SWEPT:
        for size in sizes:
            assert jobs[f"results/runs/uci_kin40k/{method}/n{size}/part0"] == expected_mem_mb(cls, size, budget)
    # M-SAMULT's fast solver (2 n^2 floats) fits 12 GiB at 20,000 unlabeled rows, not at 30,000: there the job
    # asks for its low-memory solver's n^2.
    assert MSAMULT(low_memory=False).estimate_memory(20500, 8, 5) <= budget < \
        MSAMULT(low_memory=False).estimate_memory(30500, 8, 5)
    assert jobs["results/runs/uci_kin40k/m-samult/n20000/part0"] == \
        math.ceil(MSAMULT(low_memory=False).estimate_memory(20500, 8, 5) / 2**20) + RESERVE_MB
    assert jobs["results/runs/uci_kin40k/m-samult/n30000/part0"] == low_memory_mb(MSAMULT, 30000) + RESERVE_MB
