"""A run refuses to execute code other than its checkout's: the project's packages compared file by file."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qs3study.code_origin import PACKAGES, foreign_packages, refuse_foreign_code

REPO = Path(__file__).resolve().parents[2]


def _checkout_copy(destination, with_snakefile=False):
    """The project's packages copied under ``destination``; with the Snakefile and its whole workflow folder if
    ``with_snakefile``."""
    folders = ["qs3orao", "baselines", "workflow" if with_snakefile else "workflow/qs3study"]
    for folder in folders:
        shutil.copytree(REPO / folder, destination / folder, ignore=shutil.ignore_patterns("__pycache__"))
    if with_snakefile:
        shutil.copy2(REPO / "Snakefile", destination / "Snakefile")
    return destination


def test_the_test_environment_imports_this_checkouts_code():
    assert foreign_packages(REPO) == []


def test_an_identical_copy_counts_as_the_checkouts_own_code(tmp_path):
    assert foreign_packages(_checkout_copy(tmp_path)) == []


@pytest.mark.parametrize("edit", [
    lambda root: (root / "qs3orao" / "estimator.py").write_text("# edited\n", encoding="utf-8"),
    lambda root: (root / "baselines" / "extra.py").write_text("", encoding="utf-8"),
    lambda root: (root / "workflow" / "qs3study" / "files.py").unlink(),
], ids=["edited file", "added file", "removed file"])
def test_a_checkout_whose_code_differs_from_the_imported_code_is_named(tmp_path, edit):
    root = _checkout_copy(tmp_path)
    edit(root)
    found = foreign_packages(root)
    assert len(found) == 1
    name, imported, own = found[0]
    assert imported == REPO / PACKAGES[name] and own == root / PACKAGES[name]
    with pytest.raises(RuntimeError, match=rf"{name}: imported from {imported}, not the checkout's {own}") as error:
        refuse_foreign_code(root)
    assert f"PYTHONPATH={root}:{root / 'workflow'}" in str(error.value)


def test_a_package_the_environment_cannot_import_is_named(tmp_path):
    assert foreign_packages(tmp_path, {"qs3study_no_such_package": Path("x")}) == [
        ("qs3study_no_such_package", None, tmp_path / "x")]


def test_snakemake_refuses_a_checkout_that_would_run_another_checkouts_code(tmp_path):
    checkout = _checkout_copy(tmp_path / "clone", with_snakefile=True)
    with open(checkout / "qs3orao" / "estimator.py", "a", encoding="utf-8") as estimator:
        estimator.write("# another commit's estimator\n")
    workdir = tmp_path / "run"
    workdir.mkdir()
    # The environment imports this repository's packages, as an editable install of it would.
    pythonpath = f"{REPO}:{REPO / 'workflow'}"
    result = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(checkout / "Snakefile"),
                             "--directory", str(workdir), "-n", "-c1"],
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": pythonpath,
                                                                 "HOME": str(tmp_path)})
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"qs3orao: imported from {REPO / 'qs3orao'}, not the checkout's {checkout / 'qs3orao'}" in output
    assert not (workdir / "results").exists()
