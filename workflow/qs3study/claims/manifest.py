"""How the theory outputs were made: design hash, commit, versions and every output's sha256."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
from importlib import metadata

from qs3study.files import write_text

__all__ = ["file_sha256", "tree_dirty", "theory_manifest", "write_manifest"]

_PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "snakemake", "qs3orao")


def file_sha256(path):
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _git(root, *args):
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    return out.stdout.strip() if out.returncode == 0 else None


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def tree_dirty(root):
    """Whether the git tree at ``root`` has uncommitted changes to tracked files outside ``figures/``.

    ``figures/`` holds the outputs being written, so its changes do not count. None outside a git tree.
    """
    status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)figures")
    return None if status is None else bool(status)


def theory_manifest(*, design_path, outputs, root, command, stage=None, inputs=()):
    """The manifest's content.

    Parameters
    ----------
    design_path : str
    outputs : list of str
        Every theory output covered (paths relative to ``root``).
    root : str
        The repository root (read-only git queries).
    command : str
        The command that regenerates the outputs.
    stage : str, optional
        Which part of the theory run made them, recorded when given (the
        reassembly from committed tidy data says so here).
    inputs : sequence of str, optional
        Every input table read (tidy data, the empirical rows' results tables), paths
        relative to ``root``: each is recorded with its sha256.
    """
    content = {
        "command": command,
        "design": {"path": design_path, "sha256": file_sha256(os.path.join(root, design_path))},
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": {"commit": _git(root, "rev-parse", "HEAD"), "dirty": tree_dirty(root)},
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in _PACKAGES},
        "inputs": {path: file_sha256(os.path.join(root, path)) for path in sorted(set(inputs))},
        "outputs": {path: file_sha256(os.path.join(root, path)) for path in sorted(outputs)},
    }
    if stage is not None:
        content["stage"] = stage
    return content


def write_manifest(path, content):
    """Write the manifest as JSON, atomically."""
    write_text(path, json.dumps(content, indent=2) + "\n")
