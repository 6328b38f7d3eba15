"""Check the outputs of a finished pipeline run (used by ``.ci/run``).

    python -m qs3study.tools.outputs --directory RUN_DIR --configuration default

Exits non-zero, listing every problem, unless the results table covers every
result file, its values are in range, the figures, AUC table and manifest
exist under ``figures/<configuration>/``, the manifest names the expected
configuration, and (in a git checkout) no committed file under ``figures/``
outside the configuration's own folder was changed or added by the run.
Completeness of the design itself is checked by a dry run saying there is
nothing left to do.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from qs3study.stages import tables
from qs3study.design import TRIAL_RESULT

FIGURES = ("fig2_time_vs_unlabeled.png", "fig2_time_vs_unlabeled.pdf", "fig3_auc_boxplot.png",
           "fig3_auc_boxplot.pdf", "auc_table.md", "auc_table.csv", "results.csv", "manifest.json")


def figures_dir(directory, configuration):
    """The folder of configuration ``configuration``'s figures under the run's ``directory``."""
    return Path(directory) / "figures" / configuration


def foreign_figure_changes(directory, configuration):
    """Files under ``figures/`` outside ``figures/<configuration>/`` that differ from the checkout.

    Returns
    -------
    list of str or None
        ``git status`` lines (modified, deleted or new files); None when ``directory`` is not a git checkout.
    """
    out = subprocess.run(["git", "-C", str(directory), "status", "--porcelain", "--untracked-files=all", "--",
                          "figures", f":(exclude)figures/{configuration}"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    return [line for line in out.stdout.splitlines() if line.strip()]


def check(directory, configuration, max_failed=0.1):
    """Return the list of problems found in the outputs under ``directory``.

    Parameters
    ----------
    directory : pathlib.Path
        Working directory of the run.
    configuration : str
        Expected configuration name (``name`` in the manifest).
    max_failed : float, default=0.1
        Largest acceptable fraction of rows with status ``failed``.

    Returns
    -------
    list of str
    """
    problems = []
    table_path = directory / "results" / "tables" / "results.csv"
    if not table_path.is_file():
        return [f"missing {table_path}"]
    table = tables.read_results(table_path)
    n_files = len(list((directory / "results" / "runs").rglob(TRIAL_RESULT.format(trial="*"))))
    if len(table) != n_files:
        problems.append(f"results.csv has {len(table)} rows for {n_files} result files")
    if list(table.columns) != tables.COLUMNS:
        problems.append(f"results.csv columns differ from {tables.COLUMNS}")
    bad_status = set(table["status"]) - set(tables.STATUSES)
    if bad_status:
        problems.append(f"unknown statuses {sorted(bad_status)}")
    ok = table[table["status"] == "ok"]
    if ok.empty or not ok["auc"].between(0, 1).all() or not (ok["fit_time"] > 0).all():
        problems.append("rows with status ok need an AUC in [0, 1] and a positive fit time")
    if table.loc[table["status"] != "ok", "reason"].eq("").any():
        problems.append("rows that did not finish must give a reason")
    failed = (table["status"] == "failed").mean()
    if failed > max_failed:
        problems.append(f"{failed:.0%} of the rows failed (at most {max_failed:.0%} accepted)")
    figures = figures_dir(directory, configuration)
    for name in FIGURES:
        path = figures / name
        if not path.is_file() or path.stat().st_size == 0:
            problems.append(f"missing or empty {path}")
    manifest = figures / "manifest.json"
    if manifest.is_file() and json.loads(manifest.read_text())["configuration"] != configuration:
        problems.append(f"manifest configuration is not {configuration!r}")
    for line in foreign_figure_changes(directory, configuration) or []:
        problems.append(f"the run changed another configuration's committed figures: {line}")
    return problems


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", type=Path, default=Path("."))
    parser.add_argument("--configuration", default="default")
    parser.add_argument("--max-failed", type=float, default=0.1)
    args = parser.parse_args(argv)
    problems = check(args.directory, args.configuration, args.max_failed)
    table = tables.read_results(args.directory / "results" / "tables" / "results.csv") if not problems else None
    for problem in problems:
        print(f"FAIL {problem}")
    if table is not None:
        print(f"OK {len(table)} result rows; status counts {table['status'].value_counts().to_dict()}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
