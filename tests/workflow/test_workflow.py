"""The Snakemake workflow: dry runs of every configuration, schema errors, and end-to-end runs.

The end-to-end tests run the tiny configuration (``tests/workflow/tiny.yaml``) in
scratch working directories: once to completion, once again to compare the
results table bit for bit, and once killed mid-run and resumed. The default
configuration's bit-for-bit check after a kill is in ``test_readme_commands.py``, beside
the README's recovery sequence whose run it shares.
"""

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml

from pipeline import (CONFIGS, EXPECTED_ROWS, EXPECTED_TRAINING_JOBS, REPO, TINY, deterministic, environment, jobs_of,
                      run_tiny, snakemake, snakemake_command, write_config)
from qs3study.cpu_baseline import BASELINES, missing_cpu_flags
from qs3study.stages import tables

MIRROR = REPO.parent / "shared" / "data"
ON_AVX2 = missing_cpu_flags("x86-64-v3") == []


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tiny")
    run_tiny(workdir)
    return workdir


# --- dry runs -------------------------------------------------------------------------------

def test_default_dry_run(tmp_path):
    out = snakemake(tmp_path, "--dry-run").stdout
    assert jobs_of(out, "train") > 0
    assert jobs_of(out, "download") == 0, "the default configuration must not download anything"


@pytest.mark.skipif(not MIRROR.is_dir(), reason="offline mirror ../shared/data absent")
def test_mirror_dry_run_plans_the_datasets_the_mirror_holds(tmp_path):
    mirror = f"data={{cache_dir: resources, mirror: {MIRROR}}}"
    out = snakemake(tmp_path, "--dry-run", "--configfile", CONFIGS / "paper.yaml", CONFIGS / "mirror.yaml",
                    "--config", mirror).stdout
    assert "results/downloads/sgemm.json" in out and "results/downloads/road3d_subset.json" in out
    assert "results/downloads/amazon_baby.json" not in out  # not in the mirror


# --- schema ---------------------------------------------------------------------------------

@pytest.mark.parametrize("change, key", [
    (lambda c: c.update(unknown_key=1), "unknown_key"),
    (lambda c: c["protocol"].update(trials=0), "trials"),
    (lambda c: c["protocol"].update(n_unlabeled="everything"), "n_unlabeled"),
    (lambda c: c["sweep"].update(datasets=[]), "datasets"),  # an empty sweep would leave Figure 2 without panels
    (lambda c: c.update(resources={"mem_mb": {"small": 100}}), "medium"),
    (lambda c: c["datasets"]["swd"].update(source={"path": "x.csv", "format": "csv"}), "source"),
])
def test_schema_rejects_a_malformed_configuration_naming_the_key(change, key):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    config = yaml.safe_load(TINY.read_text())
    change(config)
    with pytest.raises(WorkflowError, match=key):
        validate(config, str(CONFIGS / "schema.yaml"))


def test_snakemake_reports_a_bad_key_and_an_unknown_dataset(tmp_path):
    bad = yaml.safe_load(TINY.read_text())
    bad["protocol"]["n_labelled"] = 100
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "n_labelled" in result.stdout + result.stderr
    bad = yaml.safe_load(TINY.read_text())
    bad["datasets"]["no_such_set"] = {}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "datasets.no_such_set" in result.stdout + result.stderr
    bad = yaml.safe_load(TINY.read_text())
    bad["methods"]["qs3orao"].setdefault("params", {})["lamda"] = 0.5
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "methods.qs3orao.params" in result.stdout + result.stderr
    assert "lamda" in result.stdout + result.stderr
    bad = yaml.safe_load(TINY.read_text())
    bad["methods"]["qs3orao"]["method"] = "qs4orao"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "methods.qs3orao.method" in result.stdout + result.stderr


# --- end to end -----------------------------------------------------------------------------

def test_end_to_end_produces_the_table_and_figures(tiny_run):
    table = tables.read_results(tiny_run / "results" / "tables" / "results.csv")
    assert len(table) == EXPECTED_ROWS
    assert set(table["dataset"]) == {"swd", "synthetic"} and set(table["method"]) == {"qs3orao", "m-pnu-auc"}
    assert set(table["status"]) <= set(tables.STATUSES)
    ok = table[table["status"] == "ok"]
    assert ok["auc"].between(0, 1).all() and (ok["fit_time"] > 0).all()
    # Labels predicted from the thresholds, scored on the unlabeled rows.
    assert ok["accuracy"].between(0, 1).all() and (ok["mae"] >= 0).all() and (ok["accuracy"] > 0).any()
    # 16 MiB stops M-PNU-AUC at 900 unlabeled rows (the memory-budget line of Figure 2); QS3ORAO goes on
    big = table[table["size"] == "900"].set_index("method")["status"]
    assert big["m-pnu-auc"] == "out_of_memory_budget" and big["qs3orao"] == "ok"
    for column in ("seed", "params", "versions", "peak_memory_mb", "trial_wall_s", "job_cpu_s"):
        assert table[column].notna().all(), column
    figures = tiny_run / "figures" / "tiny"
    for name in ("fig2_time_vs_unlabeled.png", "fig2_time_vs_unlabeled.pdf", "fig3_auc_boxplot.png",
                 "fig3_auc_boxplot.pdf", "auc_table.md", "auc_table.csv", "manifest.json"):
        assert (figures / name).stat().st_size > 0, name
    summary = pd.read_csv(figures / "auc_table.csv")
    assert len(summary) == 4 and summary.loc[summary["method"] == "m-pnu-auc", "n_pairs"].notna().all()


def test_report_bundles_the_figures(tiny_run):
    snakemake(tiny_run, "--configfile", TINY, "--report", tiny_run / "report.zip")
    assert (tiny_run / "report.zip").stat().st_size > 0
    import zipfile

    with zipfile.ZipFile(tiny_run / "report.zip") as bundle:
        names = bundle.namelist()
        text = " ".join(bundle.read(n).decode(errors="replace") for n in names if n.endswith((".html", ".js")))
    # The results table and the manifest of the configuration reported, which the text names.
    assert any(n.endswith("/results.csv") for n in names) and any(n.endswith("/manifest.json") for n in names), names
    assert "figures/tiny/manifest.json" in text and "figures/manifest.json" not in text


def test_second_run_reproduces_the_table_bit_for_bit(tiny_run, tmp_path):
    run_tiny(tmp_path)
    first = deterministic(tables.read_results(tiny_run / "results" / "tables" / "results.csv"))
    second = deterministic(tables.read_results(tmp_path / "results" / "tables" / "results.csv"))
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    assert (tiny_run / "figures" / "tiny" / "auc_table.csv").read_bytes() == (tmp_path / "figures" / "tiny" / "auc_table.csv").read_bytes()


@pytest.mark.skipif(not ON_AVX2, reason="this CPU lacks AVX2: the x86-64-v3 baseline cannot run here")
def test_a_cpu_baseline_reaches_every_job_and_the_manifest_records_the_code_they_ran(tmp_path):
    run_tiny(tmp_path, "--config", "cpu_baseline=x86-64-v3")
    manifest = json.loads((tmp_path / "figures" / "tiny" / "manifest.json").read_text())
    assert manifest["config"]["cpu_baseline"] == "x86-64-v3"
    assert manifest["cpu_code"]["variables"] == BASELINES["x86-64-v3"]
    assert {blas["architecture"] for blas in manifest["cpu_code"]["blas"]} == {"Haswell"}


def test_a_cpu_baseline_the_environment_contradicts_stops_the_plan(tmp_path):
    command = snakemake_command(tmp_path, "--dry-run", "--configfile", TINY, "--config", "cpu_baseline=x86-64-v3")
    result = subprocess.run(command, capture_output=True, text=True,
                            env={**environment(), "OPENBLAS_CORETYPE": "Sandybridge"})
    assert result.returncode != 0
    assert "OPENBLAS_CORETYPE='Sandybridge'" in result.stdout + result.stderr


def test_tuning_draws_train_the_drawn_method_again_and_draw_zero_is_the_single_tuning(tiny_run, tmp_path):
    (tmp_path / "draws.yaml").write_text("tuning:\n  draws: 2\n  draw_methods: [m-pnu-auc]\n")
    snakemake(tmp_path, "--configfile", TINY, tmp_path / "draws.yaml", "--keep-going")
    table = tables.read_results(tmp_path / "results" / "tables" / "results.csv")
    assert list(table.columns) == tables.COLUMNS and set(table["tuning_draw"]) == {0, 1}
    drawn = table[table["tuning_draw"] == 1]
    # M-PNU-AUC's two trials at the comparison size of each dataset; not the sweep's 900, not QS3ORAO
    assert sorted(zip(drawn["dataset"], drawn["method"], drawn["size"], drawn["trial"])) == [
        (d, "m-pnu-auc", "200", t) for d in ("swd", "synthetic") for t in (0, 1)]
    single = deterministic(tables.read_results(tiny_run / "results" / "tables" / "results.csv"))
    assert (single["tuning_draw"] == 0).all()
    pd.testing.assert_frame_equal(deterministic(tables.one_draw(table)).reset_index(drop=True), single,
                                  check_exact=True)
    for trial in (0, 1):  # the draw's own searches, with their seeds; the single tuning's records unchanged
        single_record = json.loads((tiny_run / "results" / "tuning" / "swd" / "m-pnu-auc" / f"trial{trial}.json")
                                   .read_text())
        zero = json.loads((tmp_path / "results" / "tuning" / "swd" / "m-pnu-auc" / f"trial{trial}.json").read_text())
        one = json.loads((tmp_path / "results" / "tuning" / "swd" / "m-pnu-auc" / "draw1" / f"trial{trial}.json")
                         .read_text())
        assert {k: v for k, v in zero.items() if k not in ("time", "job_cpu_s")} == {
            k: v for k, v in single_record.items() if k not in ("time", "job_cpu_s")}
        assert one["tuning_draw"] == 1 and one["seed"] == zero["seed"] != one["search_seed"]
    # The figures read draw 0: the AUC table is the single tuning's.
    assert (tmp_path / "figures" / "tiny" / "auc_table.csv").read_bytes() == (
        tiny_run / "figures" / "tiny" / "auc_table.csv").read_bytes()


def incomplete_outputs(workdir):
    """Outputs Snakemake marked as incomplete (jobs that were running when it died)."""
    marks = workdir / ".snakemake" / "incomplete"
    names = [p.name for p in marks.iterdir() if p.name != "migration_underway"] if marks.is_dir() else []
    return {base64.urlsafe_b64decode(name).decode() for name in names}


def test_killed_run_resumes_without_redoing_finished_jobs(tiny_run, tmp_path):
    runs = tmp_path / "results" / "runs"
    process = subprocess.Popen(snakemake_command(tmp_path, "--configfile", TINY), env=environment(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        # Only a guard against a hang: the wait ends at the third finished trial (on a loaded machine, minutes).
        deadline = time.monotonic() + 900
        while len(list(runs.rglob("trial*.json"))) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert process.poll() is None, "the run finished before it could be interrupted"
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the whole run dies at once, jobs included
        process.wait()
    finished = {p: p.stat().st_mtime_ns for p in runs.rglob("trial*.json")}
    assert finished, "no trial finished within the deadline: nothing to resume from"
    assert len(finished) < EXPECTED_ROWS
    # A job killed in flight runs again, its folder rewritten; its finished trials are taken, not trained
    # again, unless the job had finished (batch.json written, its kept trials removed) and only Snakemake
    # had not yet recorded it.
    in_flight = {tmp_path / p for p in incomplete_outputs(tmp_path)}
    kept = {p: p.read_text() for p in finished if p.parent in in_flight and not (p.parent / "batch.json").exists()}
    kept_files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "results" / "kept").rglob("*.json"))

    snakemake(tmp_path, "--configfile", TINY, "--unlock")  # a killed Snakemake leaves its lock behind
    run_tiny(tmp_path, "--rerun-incomplete")
    redone = [p for p, mtime in finished.items() if p.stat().st_mtime_ns != mtime and p.parent not in in_flight]
    assert not redone, f"finished results were recomputed: {redone}"
    for path, text in kept.items():
        log = (tmp_path / "logs" / "train" / f"{path.parent.relative_to(runs)}.log").read_text()
        assert path.read_text() == text, f"{path} was trained again; kept when the run was killed: {kept_files}"
        assert re.search(rf"{path.stem.replace('trial', 'trial ')} \(\d+ of \d+\) taken from an interrupted run", log)
    leftovers = [p for p in tmp_path.rglob(".*") if p.is_file() and ".snakemake" not in p.parts
                 and p.name != ".snakemake_timestamp"]  # Snakemake's own stamp in a finished folder output
    assert not leftovers, f"partial files left: {leftovers}"
    assert not [p for p in (tmp_path / "results" / "kept").rglob("*") if p.is_file()]  # every job finished
    resumed = deterministic(tables.read_results(tmp_path / "results" / "tables" / "results.csv"))
    reference = deterministic(tables.read_results(tiny_run / "results" / "tables" / "results.csv"))
    pd.testing.assert_frame_equal(resumed, reference, check_exact=True)


def test_slurm_profile_dry_run(tmp_path):
    result = snakemake(tmp_path, "--dry-run", "--configfile", TINY, "--profile", REPO / "workflow" / "profiles" / "slurm")
    assert jobs_of(result.stdout, "train") == EXPECTED_TRAINING_JOBS


def test_trials_per_job_cuts_a_sizes_trials_into_jobs(tmp_path):
    (tmp_path / "one.yaml").write_text("resources:\n  trials_per_job: 1\n")
    one = snakemake(tmp_path, "--dry-run", "--configfile", TINY, tmp_path / "one.yaml").stdout
    assert jobs_of(one, "train") == EXPECTED_ROWS  # a job per trial
    assert "results/runs/synthetic/qs3orao/n200/part1" in one  # its second trial, in the second part
    (tmp_path / "bad.yaml").write_text("resources:\n  trials_per_job: 0\n")
    result = snakemake(tmp_path, "--dry-run", "--configfile", TINY, tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "trials_per_job" in result.stdout + result.stderr


@pytest.mark.parametrize("configfiles, name", [((), "default"), ((CONFIGS / "reproduction.yaml",), "reproduction")])
def test_a_configuration_writes_figures_only_under_its_own_folder(tmp_path, configfiles, name):
    # Every file of the DAG (--summary lists them all): running the default configuration cannot
    # touch figures/reproduction/ (nor the reproduction figures/default/), whatever the run does.
    args = ("--configfile", *configfiles, "--config", "select=[sgemm]") if configfiles else ()
    out = snakemake(tmp_path, "--summary", *args).stdout
    paths = [line.split("\t")[0] for line in out.splitlines()[1:] if line.strip()]
    figures = [p for p in paths if p.startswith("figures/")]
    assert figures and all(p.startswith(f"figures/{name}/") for p in figures), figures


def test_the_theory_folder_cannot_be_a_configuration_name(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["name"] = "theory"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "bad.yaml", check=False)
    assert result.returncode != 0 and "'theory' is reserved" in result.stdout + result.stderr


def test_an_overlay_removes_a_method_by_setting_it_to_null(tmp_path):
    (tmp_path / "overlay.yaml").write_text("methods:\n  m-pnu-auc: null\n")
    result = snakemake(tmp_path, "--dry-run", "--configfile", TINY, tmp_path / "overlay.yaml")
    assert jobs_of(result.stdout, "train") == EXPECTED_TRAINING_JOBS // 2
    assert jobs_of(result.stdout, "tune") == 0 and "m-pnu-auc" not in result.stdout
    (tmp_path / "overlay.yaml").write_text("methods:\n  qs3orao: null\n  m-pnu-auc: null\n")
    result = snakemake(tmp_path, "--dry-run", "--configfile", TINY, tmp_path / "overlay.yaml", check=False)
    assert result.returncode != 0 and "methods" in result.stdout + result.stderr


def test_a_key_given_twice_in_a_configuration_file_stops_the_plan(tmp_path):
    text = TINY.read_text()
    lines = text.splitlines()
    first = lines.index("  swd:") + 1
    repeated = text.replace("  synthetic:\n", "  swd:\n    params: {gamma: 2.0}\n  synthetic:\n")
    second = repeated.splitlines().index("    params: {gamma: 2.0}")
    (tmp_path / "twice.yaml").write_text(repeated)
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "twice.yaml", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "twice.yaml" in output
    assert f"'swd' is given twice, on lines {first} and {second}" in output


def test_an_overlay_removes_a_screen_entry_by_setting_it_to_null(tmp_path):
    screened = yaml.safe_load(TINY.read_text())
    screened["screen"] = {"lev": {"expected": "refused"}}
    (tmp_path / "screened.yaml").write_text(yaml.safe_dump(screened))
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "screened.yaml")
    assert jobs_of(result.stdout, "screened_datasets") == 1
    (tmp_path / "overlay.yaml").write_text("screen:\n  lev: null\n")
    result = snakemake(tmp_path, "--dry-run", "--configfile", tmp_path / "screened.yaml", tmp_path / "overlay.yaml")
    assert jobs_of(result.stdout, "screened_datasets") == 0


# --- a run in progress ----------------------------------------------------------------------

def write_live_record(workdir, pid):
    from qs3study import live_run

    path = workdir / live_run.RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": "2020-02-07T10:00:00"}))


@pytest.mark.parametrize("args", [("--dry-run",), ("--unlock",)])
def test_a_second_run_or_an_unlock_beside_a_live_run_is_refused(tmp_path, args):
    write_live_record(tmp_path, os.getpid())  # this test's process stands for the live run
    result = snakemake(tmp_path, "--configfile", TINY, *args, check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Unlocked" not in output
    assert f"a run is in progress in this working directory (snakemake pid {os.getpid()} on host " in output
    assert "started 2020-02-07T10:00:00" in output


def test_a_record_of_a_run_that_ended_is_ignored(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    write_live_record(tmp_path, ended.pid)
    snakemake(tmp_path, "--configfile", TINY, "--dry-run")
    snakemake(tmp_path, "--configfile", TINY, "--unlock")


def test_a_killed_run_not_yet_reaped_is_not_live(tmp_path):
    from qs3study import live_run

    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.kill()
    time.sleep(0.5)  # a zombie until wait() below reaps it
    try:
        write_live_record(tmp_path, killed.pid)
        assert live_run.live_run(tmp_path / live_run.RECORD) is None
    finally:
        killed.wait()


def test_a_method_s_sweep_cap_leaves_out_its_larger_sizes_only(tmp_path):
    # tiny: the sweep's 200 and 900 on synthetic; 200 is also the comparison size
    planned = snakemake(tmp_path, "--configfile", TINY, "--dry-run").stdout
    overlay = write_config(tmp_path, {"sweep": {"max_unlabeled": {"m-pnu-auc": 500}}}, "cap.yaml")
    capped = snakemake(tmp_path, "--configfile", TINY, overlay, "--dry-run").stdout
    assert jobs_of(capped, "train") == jobs_of(planned, "train") - 1  # m-pnu-auc at 900 on synthetic
    unknown = write_config(tmp_path, {"sweep": {"max_unlabeled": {"no-such-method": 500}}}, "unknown.yaml")
    failed = snakemake(tmp_path, "--configfile", TINY, unknown, "--dry-run", check=False)
    assert failed.returncode != 0 and "sweep.max_unlabeled.no-such-method" in failed.stdout + failed.stderr
