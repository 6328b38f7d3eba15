"""The reduced reproduction (tests/workflow/reproduction_reduced.yaml) end to end on two mirror datasets.

It has the full reproduction's shape (every method, the kernel width on the
data's scale, tuning once per dataset, the sweep to the whole pool, a screened
dataset, the claims section) at a size that runs in minutes, and checks every
output: figures, the Holm-adjusted AUC table, the tidy results
with tuned hyperparameters, the screened datasets, the empirical claims and the
manifest. Skipped, with the reason, when the offline mirror is absent.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from qs3study.stages import tables
from qs3study.tools import outputs
from qs3study.claims.empirical import KEYS

from pipeline import REPO, snakemake

REDUCED = Path(__file__).with_name("reproduction_reduced.yaml")
MIRROR = Path(os.environ.get("QS3ORAO_DATA_MIRROR", REPO.parent / "shared" / "data")).resolve()
NAME = "reproduction-reduced"
METHODS = {"qs3orao", "qs3orao-auto", "qs3orao-labeled", "m-pnu-auc", "m-samult", "svorex", "rff-auc",
           "nystrom-auc", "linear-floor"}

pytestmark = pytest.mark.skipif(not (MIRROR / "uci_parkinsons").is_dir(),
                                reason=f"offline data mirror not found at {MIRROR} (set QS3ORAO_DATA_MIRROR)")


@pytest.fixture(scope="module")
def reduced_run(tmp_path_factory):
    """A git checkout holding committed files of two other configurations, then the reduced run in it."""
    workdir = tmp_path_factory.mktemp("reduced")
    config = yaml.safe_load(REDUCED.read_text())
    config["data"]["mirror"] = str(MIRROR)
    (workdir / "reduced.yaml").write_text(yaml.safe_dump(config))
    for other in ("reproduction", "default"):
        (workdir / "figures" / other).mkdir(parents=True)
        (workdir / "figures" / other / "auc_table.md").write_text(f"committed {other} table\n")
    git = ["git", "-C", str(workdir), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "figures"], check=True)
    subprocess.run([*git, "commit", "-qm", "committed figures"], check=True)
    snakemake(workdir, "--configfile", workdir / "reduced.yaml", "--keep-going")
    return workdir


def test_every_output_is_written_and_passes_the_output_check(reduced_run):
    figures = reduced_run / "figures" / NAME
    for name in (*outputs.FIGURES, "screened_datasets.csv", "empirical_claims.csv"):
        assert (figures / name).stat().st_size > 0, name
    assert outputs.check(reduced_run, NAME) == []


def test_other_configurations_figures_are_left_byte_identical(reduced_run):
    for other in ("reproduction", "default"):
        assert (reduced_run / "figures" / other / "auc_table.md").read_text() == f"committed {other} table\n"
    assert outputs.foreign_figure_changes(reduced_run, NAME) == []


def test_results_hold_every_method_tuned_with_the_kernel_width_recorded(reduced_run):
    table = tables.read_results(reduced_run / "figures" / NAME / "results.csv")
    assert set(table["dataset"]) == {"uci_parkinsons", "road3d_subset"} and set(table["method"]) == METHODS
    comparison = table[table["comparison"].astype(bool)]
    assert (comparison.groupby(["dataset", "method"])["trial"].nunique() == 2).all()
    # Split by subject, parkinsons' classes are indistinguishable to M-PNU-AUC's prior estimate, which
    # refuses (the only untuned rows, each saying why); every other comparison row is tuned.
    untuned = comparison[~comparison["tuned"].astype(bool)]
    assert set(zip(untuned["dataset"], untuned["method"])) <= {("uci_parkinsons", "m-pnu-auc")}
    assert untuned["reason"].str.contains("the class prior cannot be estimated").all()
    assert (table["kernel_width"] == "median").all()
    kernel = table[table["gamma_absolute"].notna()]
    assert (kernel["gamma_scale"] > 0).all() and kernel["kernel_mean_offdiag"].between(0, 1).all()
    params = comparison[comparison["method"] == "qs3orao"].drop_duplicates("dataset").set_index("dataset")["params"]
    assert all("gamma" in json.loads(p) and "lam" in json.loads(p) for p in params)
    # once per dataset: every trial of a dataset carries trial 0's values
    assert comparison.groupby(["dataset", "method"])["params"].nunique().max() == 1
    # the sweep reaches the whole pool for QS3ORAO; the exact baselines stop at their budget
    whole = table[table["size"] == "all"].set_index(["dataset", "method"])["status"]
    assert (whole.xs("qs3orao", level="method") == "ok").all()
    assert (whole.xs("m-samult", level="method") == "out_of_memory_budget").all()


def test_auc_table_is_holm_adjusted_and_marks_roles_and_relations(reduced_run):
    summary = pd.read_csv(reduced_run / "figures" / NAME / "auc_table.csv")
    tested = summary.dropna(subset=["p_ttest"])
    assert (tested["p_holm"] >= tested["p_ttest"]).all() and not tested.empty
    text = (reduced_run / "figures" / NAME / "auc_table.md").read_text()
    assert "Holm-adjusted" in text and "uci_parkinsons (substitute)" in text
    assert "road3d_subset (subset of a paper dataset)" in text and "Linear floor (reference) ‡" in text


def test_the_refused_dataset_is_listed_with_the_loaders_reason(reduced_run):
    screened = pd.read_csv(reduced_run / "figures" / NAME / "screened_datasets.csv")
    loading = screened[screened["screen"] == "loading"].set_index("dataset")
    assert loading.loc["uci_pol", "status"] == "refused"
    assert loading.loc["uci_pol", "reason"].startswith("DegenerateBinsError: uci_pol: 5 equal-frequency bins")


def test_the_permutation_screen_lists_every_dataset_as_its_signal_null_check_says(reduced_run):
    screened = pd.read_csv(reduced_run / "figures" / NAME / "screened_datasets.csv")
    permutation = screened[screened["screen"] == "permutation"].set_index("dataset")
    checks = pd.read_csv(reduced_run / "figures" / NAME / "data_checks.csv")
    tripped = checks[checks["check"] == "signal_null"].set_index("dataset")["tripped"].astype(bool)
    assert sorted(permutation.index) == ["road3d_subset", "uci_parkinsons"]
    assert ((permutation["status"] == "no_signal") == tripped[permutation.index]).all()
    assert permutation["reason"].str.contains("over 19 permutations at alpha 0.05").all()
    # parkinsons is split by subject, and screened so: folds of subjects, permutations of subjects' labels
    assert "folds of groups and permutations of whole groups' labels (group_column 0" in permutation.loc[
        "uci_parkinsons", "reason"] and "group" not in permutation.loc["road3d_subset", "reason"]


def test_empirical_claims_carry_computed_verdicts(reduced_run):
    claims = pd.read_csv(reduced_run / "figures" / NAME / "empirical_claims.csv").set_index("claim")
    assert list(claims.index) == list(KEYS)
    assert set(claims["verdict"]) <= {"holds", "fails", "inconclusive", "not evaluated"}
    assert claims.loc["exact_out_of_memory", "verdict"] != "not evaluated"
    # A claim counted on no dataset (a paper method did not finish every trial, or the screen left it out)
    # says which and why.
    for claim in ("highest_auc", "unlabeled_data_help"):
        evidence = claims.loc[claim, "evidence"]
        assert claims.loc[claim, "verdict"] != "not evaluated" or all(
            re.search(rf"{name} \((m-[a-z-]+ finished|screened)", evidence)
            for name in ("road3d_subset", "uci_parkinsons")), evidence


def test_manifest_records_configuration_data_time_and_machine(reduced_run):
    manifest = json.loads((reduced_run / "figures" / NAME / "manifest.json").read_text())
    assert manifest["configuration"] == NAME and manifest["kernel_width"] == "median"
    assert manifest["tuning_per"] == "dataset" and manifest["config"]["claims"]["non_inferiority_margin"] == 0.01
    assert manifest["time"]["all"]["wall_time_s"] > 0 and manifest["time"]["tune"]["n_jobs"] == 2 * 9
    assert 0 < manifest["time"]["all"]["cpu_s"] == pytest.approx(
        manifest["time"]["train"]["cpu_s"] + manifest["time"]["tune"]["cpu_s"])
    table = tables.read_results(reduced_run / "figures" / NAME / "results.csv")
    tune_records = sorted((reduced_run / "results" / "tuning").glob("*/*/*.json"))
    assert len(tune_records) == manifest["time"]["tune"]["n_jobs"]
    # the trials' processes and each training job's own start-up (its batch.json)
    batches = sorted((reduced_run / "results" / "runs").glob("*/*/*/*/batch.json"))
    assert len(batches) == manifest["time"]["train"]["n_jobs"]
    assert 0 < manifest["time"]["train"]["job_cpu_s"] == pytest.approx(
        table["job_cpu_s"].sum() + sum(json.loads(path.read_text())["own_cpu_s"] for path in batches))
    assert 0 < manifest["time"]["tune"]["job_cpu_s"] == pytest.approx(
        sum(json.loads(path.read_text())["job_cpu_s"] for path in tune_records))
    assert manifest["time"]["all"]["job_cpu_s"] == pytest.approx(
        manifest["time"]["train"]["job_cpu_s"] + manifest["time"]["tune"]["job_cpu_s"])
    assert manifest["machine"]["cpu_count"] >= 1
    assert all(len(entry["file_sha256"]) == 64 for entry in manifest["data"].values())
