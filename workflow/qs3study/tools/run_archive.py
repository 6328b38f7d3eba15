"""A long run carried across machines: its finished jobs' outputs saved in one archive, restored on another.

Snakemake resumes a stopped run from the files in its working directory. A run
longer than one machine's lifetime (the best-effort reproduction, hours of two
cores) needs those files elsewhere: :func:`save` packs every finished job's
outputs (tuning and training records, benchmarks, logs) with a manifest of the
configuration and of the prepared data they were computed from; on the next
machine, in a clean clone of the same commit, the data are prepared again
(``snakemake ... --until prepare``, seconds to minutes) and :func:`restore`
checks them and the configuration against the manifest before unpacking.

Prepared data are not archived (hundreds of MB for the review and SGEMM sets):
preparation is deterministic, and restore refuses data whose checksums differ.
Restored files keep their modification times, so the manifest's job times stay
right; the freshly prepared files are instead dated back to just before the
oldest restored one (keeping their order), since Snakemake reruns every job
whose inputs look newer than its outputs. Every restore is recorded in
``results/restored/``, which the run's manifest lists.

The run is then resumed with its command plus :data:`RESUME_ARGS`, which leave
out Snakemake's ``code`` trigger: that trigger reruns every job whose outputs
are older than its rule's script, and the new clone's scripts are younger than
every archived output. What the trigger guards, the code, :func:`restore` checks
itself: it refuses a working tree at another commit than the archive's, or with
uncommitted changes.

Command line::

    python -m qs3study.tools.run_archive save ARCHIVE --configfile A.yaml [B.yaml ...]
    python -m qs3study.tools.run_archive restore ARCHIVE --configfile A.yaml [B.yaml ...]
    snakemake --configfile A.yaml [B.yaml ...] <the run's options> --rerun-triggers mtime params input software-env
"""

from __future__ import annotations

import argparse
import base64
import datetime
import io
import json
import os
import tarfile
from pathlib import Path

from qs3study.datasets.download import sha256_file

from qs3study.files import atomic_path, write_json
from qs3study.provenance import RESTORED, git_state

__all__ = ["JOB_OUTPUTS", "PREPARED", "CHECKED", "RESUME_ARGS", "save", "restore", "main"]

#: Folders of a run's working directory holding per-job outputs, archived.
JOB_OUTPUTS = ("results", "benchmarks", "logs")
#: What the data rules write (``download``, ``prepare``): rebuilt on the new machine, never archived.
PREPARED = ("results/data", "results/downloads", "benchmarks/prepare", "logs/prepare", "logs/download")
#: The prepared data proper, checked by checksum before a restore.
CHECKED = "results/data"
MANIFEST_MEMBER = "run-archive.json"
#: Snakemake options that resume a restored run: every rerun trigger but ``code`` (see the module docstring).
RESUME_ARGS = ("--rerun-triggers", "mtime", "params", "input", "software-env")


def _incomplete(directory):
    """Outputs of jobs Snakemake marks as unfinished (``.snakemake/incomplete``), relative paths."""
    marks = Path(directory, ".snakemake", "incomplete")
    return {base64.urlsafe_b64decode(mark.name).decode() for mark in marks.iterdir()} if marks.is_dir() else set()


def _running(directory):
    locks = Path(directory, ".snakemake", "locks")
    return locks.is_dir() and any(locks.iterdir())


#: The file Snakemake leaves in a finished ``directory()`` output (a training job's folder): its time is the folder's.
DIRECTORY_STAMP = ".snakemake_timestamp"


def _files(directory, folders):
    """Relative paths of the files under ``folders`` of ``directory``, hidden temporaries left out."""
    root = Path(directory)
    return [str(path.relative_to(root)) for folder in folders for path in sorted(root.joinpath(folder).rglob("*"))
            if path.is_file() and (not path.name.startswith(".") or path.name == DIRECTORY_STAMP)]


def _prepared(directory):
    """Relative path -> SHA-256 of every prepared data file."""
    return {path: sha256_file(Path(directory, path)) for path in _files(directory, [CHECKED])}


def _configuration(configfiles):
    return [{"path": str(path), "sha256": sha256_file(path)} for path in configfiles]


def _archived(directory):
    """Finished job outputs to archive: relative paths; prepared data and unfinished jobs' outputs (files, and
    every file in an unfinished job's folder) left out."""
    skip = _incomplete(directory)
    return [path for path in _files(directory, JOB_OUTPUTS)
            if not any(path == output or path.startswith(f"{output}/") for output in skip)
            and not any(path.startswith(f"{folder}/") for folder in PREPARED)]


def save(archive, configfiles, directory="."):
    """Pack the finished jobs' outputs of the run in ``directory`` into ``archive`` (a ``.tar.gz``).

    Parameters
    ----------
    archive : path-like
    configfiles : sequence of path-like
        The run's configuration files, as given to Snakemake (in order).
    directory : path-like, default="."
        The run's working directory.

    Returns
    -------
    dict
        The archive's manifest: save time, commit, configuration and prepared-data checksums, files.

    Raises
    ------
    RuntimeError
        If Snakemake still holds the directory's lock (a run in progress: stop it first).
    """
    if _running(directory):
        raise RuntimeError(f"a Snakemake run holds {directory}/.snakemake/locks: stop it (kill -TERM its "
                           "process) or, if none runs, remove the stale lock with snakemake --unlock, then save")
    members = _archived(directory)
    manifest = {"saved_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "git": git_state(directory), "configuration": _configuration(configfiles),
                "prepared": _prepared(directory), "files": members}
    with atomic_path(archive) as tmp, tarfile.open(tmp, "w:gz") as tar:
        payload = json.dumps(manifest, indent=2, sort_keys=True).encode()
        info = tarfile.TarInfo(MANIFEST_MEMBER)
        info.size, info.mtime = len(payload), int(datetime.datetime.now().timestamp())
        tar.addfile(info, io.BytesIO(payload))
        for member in members:
            tar.add(Path(directory, member), arcname=member, recursive=False)
    return manifest


def restore(archive, configfiles, directory="."):
    """Unpack ``archive`` into the run's working directory ``directory``, after checking it belongs there.

    The working tree must be at the archive's commit without uncommitted changes,
    the configuration files those the archive was saved with (same
    contents, same order), and the prepared data present with the archive's
    checksums (prepare them first: ``snakemake --configfile ... --until prepare``).
    No file already in ``directory`` is overwritten.

    Parameters
    ----------
    archive : path-like
    configfiles : sequence of path-like
    directory : path-like, default="."

    Returns
    -------
    dict
        The restore's record (also written to ``results/restored/``): the archive's save time, commit
        and configuration, the restore's time and commit, the files restored and how far back the
        prepared files were dated.

    Raises
    ------
    ValueError
        If the commit, the configuration or the prepared data differ from the archive's, the working tree
        has uncommitted changes, or a file would be overwritten.
    """
    root = Path(directory)
    with tarfile.open(archive, "r:gz") as tar:
        manifest = json.load(tar.extractfile(MANIFEST_MEMBER))
        here = git_state(root)
        if here["commit"] != manifest["git"]["commit"] or here["dirty"] or manifest["git"]["dirty"]:
            raise ValueError(f"the archived jobs ran at commit {manifest['git']} and this working tree is at {here}: "
                             "restore into a clean clone of that commit (the resumed run skips Snakemake's "
                             "code trigger, so the code must be the same)")
        given = _configuration(configfiles)
        if [c["sha256"] for c in given] != [c["sha256"] for c in manifest["configuration"]]:
            raise ValueError(f"the archive was saved with configuration {manifest['configuration']}, not {given}: "
                             "restore it into a run of the same configuration files")
        prepared = _prepared(root)
        missing = sorted(set(manifest["prepared"]) - set(prepared))
        if missing:
            raise ValueError(f"prepared data missing ({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): "
                             "run snakemake with the same --configfile and --until prepare first")
        changed = sorted(path for path, digest in manifest["prepared"].items() if prepared[path] != digest)
        if changed:
            raise ValueError(f"prepared data differ from those the archived jobs used: {changed}")
        present = sorted(m for m in manifest["files"] if root.joinpath(m).exists())
        if present:
            raise ValueError(f"{len(present)} archived files already exist here (first {present[0]}): restore into "
                             "a run that has not produced them")
        members = [tar.getmember(m) for m in manifest["files"]]
        tar.extractall(root, members=members, filter="data")  # with their modification times
    aged = [root / path for path in _files(root, PREPARED)]
    shift = 0.0
    if members and aged:
        shift = max(0.0, max(path.stat().st_mtime for path in aged) - min(m.mtime for m in members) + 1.0)
        for path in aged:
            mtime = path.stat().st_mtime - shift
            os.utime(path, (mtime, mtime))
    record = {"archive": str(archive), "restored_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "git": here, "prepared_dated_back_s": shift, "n_files": len(members),
        "saved": {key: manifest[key] for key in ("saved_utc", "git", "configuration")}}
    write_json(root / RESTORED / f"{Path(archive).name}.{record['restored_utc'].replace(':', '')}.json", record)
    return record


def main(argv=None):
    """Command line: ``save`` or ``restore`` an archive (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m qs3study.tools.run_archive", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("save", "restore"))
    parser.add_argument("archive")
    parser.add_argument("--configfile", nargs="+", required=True, help="the run's configuration files, in order")
    parser.add_argument("--directory", default=".", help="the run's working directory (default: here)")
    args = parser.parse_args(argv)
    if args.action == "save":
        manifest = save(args.archive, args.configfile, args.directory)
        print(f"saved {len(manifest['files'])} files of finished jobs to {args.archive}")
    else:
        record = restore(args.archive, args.configfile, args.directory)
        print(f"restored {record['n_files']} files (saved {record['saved']['saved_utc']} at commit "
              f"{record['saved']['git']['commit']}); prepared data dated back by "
              f"{record['prepared_dated_back_s']:.0f} s; resume with the run's command and {' '.join(RESUME_ARGS)}")


if __name__ == "__main__":
    main()
