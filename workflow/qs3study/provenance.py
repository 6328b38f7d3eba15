"""The manifest beside the figures: which configuration, commit, date and data made them."""

from __future__ import annotations

import datetime
import subprocess

from qs3orao.datasets import sha256_file

from .files import read_json, write_json
from .runtime import package_versions, setup_logging

__all__ = ["git_state", "manifest_job"]


def git_state(root):
    """Commit of the working tree at ``root`` and whether it has uncommitted changes (read-only git).

    ``figures/`` is left out of the check: the run itself rewrites its configuration's committed figures.
    """
    def run(*args):
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    status = run("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)figures")
    return {"commit": run("rev-parse", "HEAD"), "dirty": None if status is None else bool(status)}


def manifest_job(smk):
    """Snakemake job of rule ``manifest``: configuration, commit, date, data checksums and versions.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    setup_logging(smk.log[0])
    downloads = {read_json(p)["dataset"]: read_json(p) for p in smk.input.downloads}
    data = {}
    for info_path, x_path, y_path in zip(smk.input.infos, smk.input.X, smk.input.y, strict=True):
        info = read_json(info_path)
        data[info["dataset"]] = {
            "source": downloads.get(info["dataset"], {}).get("source", "embedded"),
            "file_sha256": downloads.get(info["dataset"], {}).get("sha256"),
            "X_sha256": sha256_file(x_path), "y_sha256": sha256_file(y_path),
            "n_rows": info["n_rows"], "n_features": info["n_features"], "bin_counts": info["bin_counts"],
        }
    write_json(smk.output[0], {
        "configuration": smk.config["name"],
        "config": smk.config,
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": git_state(smk.params.root),
        "results_sha256": sha256_file(smk.input.table),
        "figures": sorted(smk.params.figures),
        "data": data,
        "versions": package_versions(),
    })
