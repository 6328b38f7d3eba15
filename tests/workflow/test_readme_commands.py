"""Every command the README and docs/ show, run exactly as written from the top of a scratch copy.

The commands are parsed from README.md and docs/*.md (bash blocks, the pipeline tables, inline
code starting with ``snakemake``, ``.venv/bin/`` or ``python``), so a command added to or changed in them
without a case here fails ``test_every_readme_command_has_a_case``. How each runs:

* for real: the main job (``snakemake --workflow-profile workflow/profiles/default``, the
  full default study, ~4 min on 2 cores, once per session: ``conftest.default_run``), the
  documented recovery after a hard kill (``kill -9`` of the main job while it redoes one dataset
  of a finished run, ``snakemake --unlock``, the main job again: ``conftest.resumed_default_run``),
  and ``snakemake --report report.html`` on the finished run;
* as the exact command plus ``--dry-run`` (they take hours or need a cluster or a data
  mirror): the paper's cluster command, the mirror command, the reproductions, the cost pilot,
  ``snakemake -c2 theory``, ``snakemake -c2 perf`` and ``snakemake --configfile my.yaml -c2``
  (``my.yaml`` built as docs/datasets.md says, from its YAML block, with small data files). The cluster command's profile
  runs end to end on a real SLURM cluster in ``test_slurm.py``;
* the study's tools and the timing scripts (``python -m qs3study...``, ``python timing/...``): the
  module or script the command names exists, and its ``--help`` lists every option the command uses
  (placeholders such as ``DIR`` or ``<...>`` stand as written); ``python -m qs3study.tools.documents``
  runs for real, with the ``--check`` the README gives it, on this repository. These checks are quick,
  so the quick check runs them; the runs above are marked ``slow``;
* the install steps of the first command (``python3 -m venv .venv && .venv/bin/pip install
  -e ".[test]"``) and ``.venv/bin/python -m pytest`` are what ``.ci/run`` runs verbatim;
  pytest does not start itself again here.
"""

import copy
import gzip
import importlib.util
import json
import re
import runpy
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from pipeline import CONFIGS, PAPER_DATASETS, deterministic
from qs3study.datasets import sha256_file
from qs3study.stages import tables
from qs3study.stages.data import prepare_job
from readme import REDONE, REPO, copy_repository, main_job, readme_commands, result_files, run_command

DATASETS_DOC = REPO / "docs" / "datasets.md"
INSTALL = ['python3 -m venv .venv', '.venv/bin/pip install -e ".[test]"']
MAIN = "snakemake --workflow-profile workflow/profiles/default"
DEFAULT_CONFIG = yaml.safe_load((CONFIGS / "default.yaml").read_text())
# The data-validity levels as the run has them: the configuration with the schema's defaults filled in.
DEFAULT_CHECKS = copy.deepcopy(DEFAULT_CONFIG)
validate(DEFAULT_CHECKS, str(CONFIGS / "schema.yaml"))
DEFAULT_CHECKS = DEFAULT_CHECKS["data_checks"]
# Command -> what its dry run must show (a line of the job table, or that nothing is left to do), and for
# the paper's commands which downloads (test_workflow plans the paper configuration with the mirror).
DRY_RUN = {
    "snakemake --configfile workflow/config/paper.yaml --profile workflow/profiles/slurm":
        r"^download\s+8$" + "".join(rf"(?=[\s\S]*results/downloads/{d}\.json)" for d in PAPER_DATASETS),
    "snakemake --configfile workflow/config/paper.yaml workflow/config/mirror.yaml -c2 --config select='[sgemm]'":
        r"^download\s+1$(?=[\s\S]*results/downloads/sgemm\.json)",
    # Its outputs are committed (figures/theory); whether they look stale depends on the copy's file times.
    "snakemake -c2 theory": r"^theory_manifest\s+1$|Nothing to be done",
    "snakemake -c2 perf": r"^perf\s+1$",
    "snakemake --configfile my.yaml -c2": r"^download\s+2$",
    # The six datasets the configuration selects (uci_pol is screened, not downloaded).
    "snakemake --configfile workflow/config/reproduction.yaml -c2 --keep-going": r"^download\s+6$",
    # The two protocols: all eleven mirror datasets each.
    "snakemake --configfile workflow/config/reproduction-paper.yaml -c2 --keep-going": r"^download\s+11$",
    "snakemake --configfile workflow/config/reproduction-paper.yaml workflow/config/reproduction-best.yaml -c2 "
    "--keep-going": r"^download\s+11$",
    # The cost pilot: one dataset of the protocol.
    "snakemake --configfile workflow/config/reproduction-paper.yaml workflow/config/pilots/uci_bike.yaml "
    "--config name=pilot-paper-uci_bike -c1": r"^download\s+1$",
}
NEEDS_MIRROR = ("workflow/config/reproduction.yaml", "workflow/config/reproduction-paper.yaml")
FOR_REAL = ("snakemake --report report.html", "snakemake --unlock", MAIN)
NOT_HERE = (".venv/bin/python -m pytest",)
PYTHON_COMMANDS = (
    "python -m qs3study.claims --out DIR",
    "python -m qs3study.perf.contention figures/<name>/results.csv",
    "python -m qs3study.perf.grid_pass_check",
    "python -m qs3study.tools.decomposition",
    "python -m qs3study.tools.decomposition PAPER_RESULTS BEST_RESULTS --protocol paper --out figures/reproduction-paper",
    "python -m qs3study.tools.convergence_audit figures/reproduction-best/results.csv --out figures/reproduction-best",
    "python -m qs3study.tools.documents",
    "python -m qs3study.tools.outputs --directory . --configuration default",
    "python -m qs3study.tools.pilot_comparison figures/reproduction-<protocol>/results.csv figures/<name>/results.csv "
    "--out figures/<name>",
    "python -m qs3study.tools.refit_pilot DESIGN --data <run>/results/data --out figures/<design name> --jobs 2",
    "python -m qs3study.tools.results_diff figures/<name>/results.csv figures/reproduction-<protocol>/results.csv",
    "python -m qs3study.tools.run_archive save run.tar.gz --configfile <its configuration files>",
    "python -m qs3study.tools.theorem1_search",
    "python -m qs3study.tools.run_archive restore run.tar.gz --configfile <the same files>",
    "python -m qs3study.tools.scale_report",
    "python -m qs3study.tools.scale_report figures/scale-paper/results.csv --out figures/scale-paper",
    "python -m qs3study.tools.set_aside_contended",
    "python -m qs3study.tools.tuning_check",
    "python timing/fit_overhead_benchmark.py BASELINE_TREE",
    "python timing/reproduction_cost_estimate.py --pilot figures/pilot-paper-uci_bike",
)
CORES_ERROR = "Workflow requires a total number of cores"


def test_every_readme_command_has_a_case():
    first = readme_commands()[0]
    assert first.split(" && ") == [*INSTALL, f".venv/bin/{MAIN}"], first
    assert main_job() == f".venv/bin/{MAIN}"
    assert set(readme_commands()[1:]) == set(DRY_RUN) | set(FOR_REAL) | set(NOT_HERE) | set(PYTHON_COMMANDS)


def test_ci_runs_the_install_and_test_commands():
    ci = (REPO / ".ci" / "run").read_text()
    assert ".venv/bin/pip install --quiet -e \".[test]\"" in ci and "python3 -m venv .venv" in ci
    assert ".venv/bin/python -m pytest" in ci


# The tests import these modules too: running one again as __main__ is what the warning is about, and harmless here.
@pytest.mark.filterwarnings("ignore:.*found in sys.modules after import of package:RuntimeWarning")
@pytest.mark.parametrize("command", PYTHON_COMMANDS)
def test_python_command_names_a_program_that_takes_its_options(command, monkeypatch, capsys):
    """The module or script exists, and its ``--help`` (run in this process, as ``python`` would run it) lists every
    option the command uses. A command without options is not run: some of them start a long measurement."""
    words = command.split()
    module = words[2] if words[1] == "-m" else None
    if module:
        assert importlib.util.find_spec(module) is not None, f"no module {module}"
    else:
        assert (REPO / words[1]).is_file(), f"no script {words[1]}"
    options = [word for word in words if word.startswith("--")]
    if not options:
        return
    monkeypatch.setattr(sys, "argv", [module or words[1], "--help"])
    with pytest.raises(SystemExit) as exited:
        if module:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(str(REPO / words[1]), run_name="__main__")
    usage = capsys.readouterr().out
    assert exited.value.code == 0 and usage.startswith("usage:"), usage
    assert [option for option in options if not re.search(rf"{re.escape(option)}(?![\w-])", usage)] == [], usage


def test_documents_check_as_the_readme_gives_it():
    """``python -m qs3study.tools.documents --check`` for real: the committed generated blocks are current."""
    result = run_command(REPO, "python -m qs3study.tools.documents --check", check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def my_yaml(checkout):
    """``my.yaml`` as docs/datasets.md's "Adding a dataset" says: its YAML block merged into a copy of the default."""
    section = DATASETS_DOC.read_text().split("## Adding a dataset", 1)[1]
    block = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, flags=re.S).group(1))
    config = yaml.safe_load((checkout / "workflow" / "config" / "default.yaml").read_text())
    for key, value in block.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) else value
    (checkout / "my.yaml").write_text(yaml.safe_dump(config))
    (checkout / "data").mkdir()
    with gzip.open(checkout / "data" / "houses.csv.gz", "wt") as handle:
        handle.write("rooms,area,price\n" + "".join(f"{i % 7},{i % 11},{i}\n" for i in range(400)))
    with open(checkout / "data" / "reviews.jsonl", "w") as handle:
        handle.writelines(json.dumps({"body": f"word{i % 13} word{i % 5}", "stars": 1 + i % 5}) + "\n"
                          for i in range(300))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    checkout = copy_repository(tmp_path_factory.mktemp("readme") / "qs3orao")
    my_yaml(checkout)
    return checkout


@pytest.mark.slow
@pytest.mark.parametrize("command", list(DRY_RUN))
def test_long_command_plans_as_written(checkout, command):
    """The exact command plus ``--dry-run``: it plans its jobs (no cores error, no configuration error)."""
    if any(name in command for name in NEEDS_MIRROR) and not (checkout.parent / "shared" / "data").is_dir():
        pytest.skip("this configuration plans over the offline mirror ../shared/data, absent here")
    result = run_command(checkout, f"{command} --dry-run", check=False)
    output = result.stdout + result.stderr
    assert CORES_ERROR not in output
    assert result.returncode == 0, output[-4000:]
    assert re.search(DRY_RUN[command], output, flags=re.M), output[-3000:]


@pytest.mark.slow
def test_unlock_as_written(checkout):
    """``snakemake --unlock`` for real: before the fix it stopped with the cores error (a dry run never
    shows that error, since ``--dry-run`` sets one core)."""
    result = run_command(checkout, "snakemake --unlock", check=False)
    output = result.stdout + result.stderr
    assert CORES_ERROR not in output and result.returncode == 0, output[-3000:]
    assert "Unlocked working directory" in output


@pytest.mark.slow
def test_report_after_the_main_job(default_run):
    """``snakemake --report report.html`` for real, on the finished main job."""
    report = default_run / "report.html"
    report.unlink(missing_ok=True)
    result = run_command(default_run, "snakemake --report report.html")
    assert CORES_ERROR not in result.stdout + result.stderr
    html = report.read_text(errors="replace")
    assert "fig2_time_vs_unlabeled.png" in html and "fig3_auc_boxplot.png" in html


@pytest.mark.slow
def test_main_job_finishes_and_nothing_is_left_to_do(default_run):
    table = tables.read_results(default_run / "results" / "tables" / "results.csv")
    assert len(table) == len(result_files(default_run)) and (table["status"] == "ok").mean() > 0.9
    dry = run_command(default_run, f"{MAIN} --dry-run")
    assert "Nothing to be done" in dry.stdout + dry.stderr


@pytest.mark.slow
def test_kill_unlock_rerun_finishes_the_main_job(resumed_default_run, default_run):
    """The README's recovery: ``kill -9`` mid-run, ``snakemake --unlock``, the main job again, all for real;
    the results the killed run had not touched are not computed again."""
    checkout, record = resumed_default_run
    assert 0 < record["redone_before_kill"] < len(result_files(default_run, REDONE))
    assert "Unlocked working directory" in record["unlock_output"]
    resumed = tables.read_results(checkout / "results" / "tables" / "results.csv")
    reference = tables.read_results(default_run / "results" / "tables" / "results.csv")
    assert len(resumed) == len(reference) == len(result_files(checkout))
    pd.testing.assert_series_equal(resumed["status"], reference["status"])
    redone = [p for p, mtime in record["carried_over"].items() if (checkout / p).stat().st_mtime_ns != mtime]
    assert record["carried_over"] and not redone, f"finished results were computed again: {redone}"


def feature_hashes(workdir):
    """sha256 of every prepared X.npy and y.npy of a run, by path under results/data."""
    return {str(p.relative_to(workdir)): sha256_file(p) for p in sorted((workdir / "results" / "data").rglob("*.npy"))}


@pytest.mark.slow
def test_resumed_default_run_reproduces_the_main_job_bit_for_bit(default_run, resumed_default_run):
    """The README's main job against the same job killed with ``kill -9`` while it redid :data:`REDONE`,
    unlocked and rerun (``conftest``): the same feature matrices (their hashes, also against each run's
    manifest) and the same table and AUC table, timings aside."""
    resumed, _ = resumed_default_run
    hashes = feature_hashes(default_run)
    assert {Path(p).parent.name for p in hashes} == set(DEFAULT_CONFIG["datasets"])
    assert feature_hashes(resumed) == hashes
    for run in (default_run, resumed):
        manifest = json.loads((run / "figures" / "default" / "manifest.json").read_text())
        for dataset, entry in manifest["data"].items():
            assert entry["X_sha256"] == hashes[f"results/data/{dataset}/X.npy"], (run, dataset)
            assert entry["y_sha256"] == hashes[f"results/data/{dataset}/y.npy"], (run, dataset)
    first = deterministic(tables.read_results(default_run / "results" / "tables" / "results.csv"))
    second = deterministic(tables.read_results(resumed / "results" / "tables" / "results.csv"))
    assert set(first["dataset"]) == set(DEFAULT_CONFIG["datasets"])
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    assert (default_run / "figures" / "default" / "auc_table.csv").read_bytes() == (resumed / "figures" / "default" / "auc_table.csv").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("dataset", DEFAULT_CONFIG["datasets"])
def test_every_dataset_of_the_main_job_prepares_bit_for_bit_again(default_run, dataset, tmp_path, job):
    """Each dataset the main job prepared, prepared again by its job's code in this process, with the
    loader options its ``info.json`` records: the same array files, byte for byte (the recovery test
    redoes one dataset only)."""
    prepared = default_run / "results" / "data" / dataset
    info = json.loads((prepared / "info.json").read_text())
    output = {name: str(tmp_path / f"{name}.npy") for name in ("X", "y")}
    prepare_job(job(tmp_path, "prepare", output={**output, "info": str(tmp_path / "info.json"),
                                                 "checks": str(tmp_path / "checks.csv")},
                    params={"options": {**DEFAULT_CONFIG["datasets"][dataset], **info["options"]},
                            "cache_dir": str(default_run / DEFAULT_CONFIG["data"]["cache_dir"]), "mirror": None,
                            "seed": DEFAULT_CONFIG["protocol"]["seed"], "sha256": None,
                            "protocol": DEFAULT_CONFIG["protocol"], "checks": DEFAULT_CHECKS},
                    wildcards={"dataset": dataset}))
    for name, path in output.items():
        assert Path(path).read_bytes() == (prepared / f"{name}.npy").read_bytes(), name
