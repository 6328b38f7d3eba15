"""A long run carried across machines: its finished jobs' outputs saved in one archive, restored on another.

Snakemake resumes a stopped run from the files in its working directory. A run
longer than one machine's lifetime (the best-effort reproduction, hours of two
cores) needs those files elsewhere: :func:`save` packs every finished job's
outputs (tuning and training records, benchmarks, logs), and the trials that
unfinished training jobs kept (:mod:`qs3study.stages.kept_trials`), with a manifest of the
configuration and of the prepared data they were computed from; on the next
machine, in a clean clone of the same commit, the data are prepared again
(``snakemake ... --until prepare``, seconds to minutes) and :func:`restore`
checks them and the configuration against the manifest, and the archive
itself whole (gzip's CRC, every member's checksum, path and type), before
unpacking all its files or none.

Prepared data are not archived (hundreds of MB for the review and SGEMM sets):
they are prepared again, and restore refuses data whose checksums differ. A
preparation can differ on another machine (the review set's TF-IDF/SVD
features have, under ``cpu_baseline: native``: :mod:`qs3study.cpu_baseline`):
``--rerun-changed`` then restores every dataset's jobs but
those of a dataset whose job inputs (:data:`JOB_INPUTS`) differ, which run
again on the new data, and records what differed.
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

    python -m qs3study.tools.run_archive save ARCHIVE --configfile A.yaml [B.yaml ...] [--config KEY=VALUE ...]
    python -m qs3study.tools.run_archive restore ARCHIVE --configfile A.yaml [B.yaml ...] [--config KEY=VALUE ...] \
        [--unverified] [--rerun-changed]
    snakemake --configfile A.yaml [B.yaml ...] [--config KEY=VALUE ...] <the run's options> \
        --rerun-triggers mtime params input software-env

``--config`` takes the run's Snakemake ``--config`` settings as they were given; they are part of the
configuration an archive is restored against.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import difflib
import gzip
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from qs3study.datasets.download import sha256_file

from qs3study.files import atomic_path, write_json
from qs3study.provenance import RESTORED, git_state

__all__ = ["JOB_OUTPUTS", "PREPARED", "CHECKED", "JOB_INPUTS", "RESUME_ARGS", "save", "restore", "main"]

#: Folders of a run's working directory holding per-job outputs, archived.
JOB_OUTPUTS = ("results", "benchmarks", "logs")
#: What the data rules write (``download``, ``prepare``): rebuilt on the new machine, never archived.
PREPARED = ("results/data", "results/downloads", "benchmarks/prepare", "logs/prepare", "logs/download")
#: The prepared data proper, checked by checksum before a restore.
CHECKED = "results/data"
#: The prepared files that tuning and training jobs read (rules ``tune`` and ``train``); the other prepared
#: files (``info.json``, ``checks.csv``) feed only the run's final tables, which are not archived.
JOB_INPUTS = ("X.npy", "y.npy")
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


#: Prepared text files small enough to travel in the manifest, so that a restore can say how they differ.
RECORDED_TEXT = (".json", ".csv")
RECORDED_TEXT_BYTES = 256 * 1024
#: Lines of each differing text file's diff that a restore reports.
DIFF_LINES = 12


def _prepared_text(directory):
    """Relative path -> content of the small prepared text files (:data:`RECORDED_TEXT`)."""
    paths = [Path(directory, path) for path in _files(directory, [CHECKED])]
    return {str(path.relative_to(directory)): path.read_text() for path in paths
            if path.suffix in RECORDED_TEXT and path.stat().st_size <= RECORDED_TEXT_BYTES}


def _differences(manifest, root, changed):
    """The start of a unified diff, archived against present, of each changed file the manifest holds."""
    archived = manifest.get("prepared_text", {})
    return {path: list(difflib.unified_diff(archived[path].splitlines(), root.joinpath(path).read_text().splitlines(),
                                            "archived", "prepared here", n=0, lineterm=""))[2:2 + DIFF_LINES]
            for path in changed if path in archived}


def _dataset_of(path):
    """The dataset a run file belongs to, ``<folder>/<stage>/<dataset>/...`` (None for a file outside one)."""
    parts = PurePosixPath(path).parts
    return parts[2] if len(parts) > 3 else None


def _configuration(configfiles):
    return [{"path": str(path), "sha256": sha256_file(path)} for path in configfiles]


def _settings(config):
    """The run's ``--config`` settings as a list of ``KEY=VALUE`` strings, each checked for its ``=``."""
    settings = [str(setting) for setting in config]
    malformed = [setting for setting in settings if "=" not in setting]
    if malformed:
        raise ValueError(f"--config settings are KEY=VALUE, as given to snakemake; got {malformed}")
    return settings


def _archived(directory):
    """Finished job outputs to archive: relative paths; prepared data and unfinished jobs' outputs (files, and
    every file in an unfinished job's folder) left out."""
    skip = _incomplete(directory)
    return [path for path in _files(directory, JOB_OUTPUTS)
            if not any(path == output or path.startswith(f"{output}/") for output in skip)
            and not any(path.startswith(f"{folder}/") for folder in PREPARED)]


def save(archive, configfiles, directory=".", config=()):
    """Pack the finished jobs' outputs of the run in ``directory`` into ``archive`` (a ``.tar.gz``).

    Parameters
    ----------
    archive : path-like
    configfiles : sequence of path-like
        The run's configuration files, as given to Snakemake (in order).
    directory : path-like, default="."
        The run's working directory.
    config : sequence of str, default=()
        The run's Snakemake ``--config`` settings (``KEY=VALUE``), as given.

    Returns
    -------
    dict
        The archive's manifest: save time, commit, configuration and prepared-data checksums, files and
        their checksums.

    Raises
    ------
    RuntimeError
        If Snakemake still holds the directory's lock (a run in progress: stop it first).
    """
    if _running(directory):
        raise RuntimeError(f"a Snakemake run holds {directory}/.snakemake/locks: stop it (kill -TERM its "
                           "process) or, if none runs, remove the stale lock with snakemake --unlock, then save")
    settings = _settings(config)
    members = _archived(directory)
    manifest = {"saved_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "git": git_state(directory), "configuration": _configuration(configfiles),
                "config": settings, "prepared": _prepared(directory), "prepared_text": _prepared_text(directory), "files": members,
                "sha256": {member: sha256_file(Path(directory, member)) for member in members}}
    with atomic_path(archive) as tmp, tarfile.open(tmp, "w:gz", dereference=True) as tar:
        payload = json.dumps(manifest, indent=2, sort_keys=True).encode()
        info = tarfile.TarInfo(MANIFEST_MEMBER)
        info.size, info.mtime = len(payload), int(datetime.datetime.now().timestamp())
        tar.addfile(info, io.BytesIO(payload))
        for member in members:
            tar.add(Path(directory, member), arcname=member, recursive=False)
    return manifest


def _archive_error(archive, problem):
    return ValueError(f"run archive {archive}: {problem}")


def _member_problem(member, listed):
    """Why ``member`` may not be restored (None if it may): an unsafe path, a link or special file, unlisted."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return f"member {member.name!r} has a path outside the run's directory"
    if not member.isfile():
        kind = "link" if member.issym() or member.islnk() else "directory" if member.isdir() else "special file"
        return f"member {member.name!r} is a {kind}; an archive holds regular files only"
    if member.name not in listed:
        return f"member {member.name!r} is not listed in its manifest {MANIFEST_MEMBER}"
    return None


def _read_manifest(tar, archive, unverified):
    """The manifest, the archive's first member, checked for the keys :func:`restore` reads."""
    first = tar.next()
    if first is None or first.name != MANIFEST_MEMBER or not first.isfile():
        raise _archive_error(archive, f"its first member is not the manifest {MANIFEST_MEMBER}: not an archive "
                                      "saved by this tool")
    try:
        manifest = json.loads(tar.extractfile(first).read())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _archive_error(archive, f"its manifest {MANIFEST_MEMBER} is not valid JSON ({error})") from None
    needed = ["saved_utc", "git", "configuration", "prepared", "files"]
    missing = [key for key in needed if not isinstance(manifest, dict) or key not in manifest]
    if missing:
        raise _archive_error(archive, f"its manifest {MANIFEST_MEMBER} lacks {', '.join(missing)}")
    if "sha256" not in manifest and not unverified:
        raise _archive_error(archive, "it was saved before archives recorded their members' checksums, so its "
                                      "files cannot be verified (no checksums); pass --unverified to restore it "
                                      "checking only gzip's CRC, the member paths and types")
    return manifest


def _check_run(manifest, configfiles, config, root, rerun_changed):
    """Refuse a working tree, configuration or prepared data other than the archive's, or files present.

    Returns the working tree's state, the prepared files that differ (allowed with ``rerun_changed``) and
    the start of each differing text file's diff, and the datasets whose archived jobs are left out
    because a file they read (:data:`JOB_INPUTS`) differs."""
    here = git_state(root)
    if here["commit"] != manifest["git"]["commit"] or here["dirty"] or manifest["git"]["dirty"]:
        raise ValueError(f"the archived jobs ran at commit {manifest['git']} and this working tree is at {here}: "
                         "restore into a clean clone of that commit (the resumed run skips Snakemake's "
                         "code trigger, so the code must be the same)")
    given = _configuration(configfiles)
    if [c["sha256"] for c in given] != [c["sha256"] for c in manifest["configuration"]]:
        raise ValueError(f"the archive was saved with configuration {manifest['configuration']}, not {given}: "
                         "restore it into a run of the same configuration files")
    saved = manifest.get("config", [])  # an archive saved before settings were recorded: none given
    if _settings(config) != saved:
        raise ValueError(f"the archive was saved with --config {saved or '(none)'}, not {list(config) or '(none)'}: "
                         "restore it with the run's --config settings as they were given")
    prepared = _prepared(root)
    missing = sorted(set(manifest["prepared"]) - set(prepared))
    if missing:
        raise ValueError(f"prepared data missing ({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): "
                         "run snakemake with the same --configfile and --until prepare first")
    changed = sorted(path for path, digest in manifest["prepared"].items() if prepared[path] != digest)
    differences = _differences(manifest, root, changed)
    if changed and not rerun_changed:
        shown = "".join(f"\n{path}:\n  " + "\n  ".join(lines) for path, lines in differences.items())
        raise ValueError(f"prepared data differ from those the archived jobs used: {changed}; with "
                         f"--rerun-changed the archived jobs of each dataset whose {' or '.join(JOB_INPUTS)} "
                         f"differ are left out, so that they run again on these data{shown}")
    left_out = sorted({_dataset_of(path) for path in changed if PurePosixPath(path).name in JOB_INPUTS})
    present = sorted(m for m in manifest["files"] if root.joinpath(m).exists() and _dataset_of(m) not in left_out)
    if present:
        raise ValueError(f"{len(present)} archived files already exist here (first {present[0]}): restore into "
                         "a run that has not produced them")
    return here, changed, differences, left_out


def _unpack(archive, configfiles, config, root, staging, unverified, rerun_changed):
    """Check the archive whole and unpack its files into ``staging``: the manifest, the run's state (see
    :func:`_check_run`) and the time of each file to restore."""
    with gzip.open(archive, "rb") as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
        manifest = _read_manifest(tar, archive, unverified)
        here, changed, differences, left_out = _check_run(manifest, configfiles, config, root, rerun_changed)
        listed, digests, mtimes, seen = set(manifest["files"]), manifest.get("sha256", {}), {}, set()
        while (member := tar.next()) is not None:
            problem = _member_problem(member, listed) or (
                f"member {member.name!r} appears twice" if member.name in seen else None)
            if problem:
                raise _archive_error(archive, problem)
            target = staging / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
            if not unverified and sha256_file(target) != digests.get(member.name):
                raise _archive_error(archive, f"member {member.name!r} does not match its checksum in the manifest")
            seen.add(member.name)
            if _dataset_of(member.name) in left_out:
                target.unlink()
                continue
            os.utime(target, (member.mtime, member.mtime))
            mtimes[member.name] = member.mtime
        while stream.read(1 << 20):  # to the gzip trailer, whose CRC the tar reader never reaches
            pass
    absent = sorted(listed - seen)
    if absent:
        raise _archive_error(archive, f"{len(absent)} files listed in its manifest are missing (first {absent[0]})")
    return manifest, {"git": here, "changed_prepared": changed, "prepared_differences": differences,
                      "left_out_datasets": left_out,
                      "n_left_out": len(seen) - len(mtimes)}, mtimes


def restore(archive, configfiles, directory=".", unverified=False, rerun_changed=False, config=()):
    """Unpack ``archive`` into the run's working directory ``directory``, after checking it belongs there.

    The working tree must be at the archive's commit without uncommitted changes,
    the configuration files and ``--config`` settings those the archive was saved with (same
    contents, same order), and the prepared data present with the archive's
    checksums (prepare them first: ``snakemake --configfile ... --until prepare``).
    The archive is checked whole before any file is restored: gzip's CRC,
    every member's checksum, path (inside ``directory``) and type (regular
    files only). Its files are unpacked into a temporary folder in
    ``directory`` and moved into place all together; on any failure none is
    left behind. No file already in ``directory`` is overwritten.

    Parameters
    ----------
    archive : path-like
    configfiles : sequence of path-like
    directory : path-like, default="."
    unverified : bool, default=False
        Restore an archive saved before archives recorded their members' checksums (refused otherwise):
        gzip's CRC, the member paths and types are still checked.
    rerun_changed : bool, default=False
        Accept prepared data that differ from the archive's: the archived files of every dataset whose
        :data:`JOB_INPUTS` differ are left out, so that its jobs run again; the other differing files
        (read by no archived job) are listed in the record. Refused otherwise.
    config : sequence of str, default=()
        The run's Snakemake ``--config`` settings (``KEY=VALUE``), as given when it was saved.

    Returns
    -------
    dict
        The restore's record (also written to ``results/restored/``): the archive's save time, commit
        and configuration, the restore's time and commit, the files restored, how far back the
        prepared files were dated, whether the files were restored unverified, the prepared files that
        differ (with the start of a diff of each small text one) and the datasets (and number of files)
        left out.

    Raises
    ------
    ValueError
        If the archive is damaged, holds an unsafe or unlisted member or a file that differs from its
        checksum, or has no checksums (without ``unverified``); if the commit, the configuration or the
        prepared data differ from the archive's (without ``rerun_changed``), the working tree has
        uncommitted changes, or a file
        would be overwritten.
    """
    root = Path(directory)
    if not Path(archive).is_file():
        raise _archive_error(archive, "no such file")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".run-archive-restore-", dir=root))
    moved = []
    try:
        try:
            manifest, state, mtimes = _unpack(archive, configfiles, config, root, staging, unverified, rerun_changed)
        except (gzip.BadGzipFile, EOFError, zlib.error, tarfile.TarError) as error:
            raise _archive_error(archive, f"damaged or truncated ({error})") from None
        for name in sorted(mtimes):
            root.joinpath(name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, root / name)
            moved.append(root / name)
    except BaseException:
        for path in moved:
            path.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    aged = [root / path for path in _files(root, PREPARED)]
    shift = 0.0
    if mtimes and aged:
        shift = max(0.0, max(path.stat().st_mtime for path in aged) - min(mtimes.values()) + 1.0)
        for path in aged:
            mtime = path.stat().st_mtime - shift
            os.utime(path, (mtime, mtime))
    saved = {**{key: manifest[key] for key in ("saved_utc", "git", "configuration")}, "config": manifest.get("config", [])}
    record = {"archive": str(archive), "restored_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), **state, "prepared_dated_back_s": shift, "n_files": len(mtimes),
        "unverified": bool(unverified), "saved": saved}
    write_json(root / RESTORED / f"{Path(archive).name}.{record['restored_utc'].replace(':', '')}.json", record)
    return record


def main(argv=None):
    """Command line: ``save`` or ``restore`` an archive (see the module docstring)."""
    # allow_abbrev off: Snakemake's --config must not be read as an abbreviation of --configfile.
    parser = argparse.ArgumentParser(prog="python -m qs3study.tools.run_archive", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("action", choices=("save", "restore"))
    parser.add_argument("archive")
    parser.add_argument("--configfile", nargs="+", required=True, help="the run's configuration files, in order")
    parser.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE",
                        help="the run's Snakemake --config settings, as given")
    parser.add_argument("--directory", default=".", help="the run's working directory (default: here)")
    parser.add_argument("--unverified", action="store_true",
                        help="restore an archive saved before archives recorded their members' checksums")
    parser.add_argument("--rerun-changed", action="store_true",
                        help="accept prepared data that differ from the archive's, leaving out the archived jobs "
                             "of each dataset whose X.npy or y.npy differ (they run again)")
    args = parser.parse_args(argv)
    try:
        if args.action == "save":
            manifest = save(args.archive, args.configfile, args.directory, config=args.config)
        else:
            record = restore(args.archive, args.configfile, args.directory, unverified=args.unverified,
                             rerun_changed=args.rerun_changed, config=args.config)
    except (ValueError, RuntimeError, OSError) as error:
        print(f"run_archive {args.action}: {error}", file=sys.stderr)
        return 1
    if args.action == "save":
        print(f"saved {len(manifest['files'])} files of finished jobs to {args.archive}")
    else:
        print(f"restored {record['n_files']} files (saved {record['saved']['saved_utc']} at commit "
              f"{record['saved']['git']['commit']}); prepared data dated back by "
              f"{record['prepared_dated_back_s']:.0f} s; resume with the run's command and {' '.join(RESUME_ARGS)}")
        if record["changed_prepared"]:
            print(f"prepared files that differ from the archive's: {', '.join(record['changed_prepared'])}; left out "
                  f"{record['n_left_out']} files of {', '.join(record['left_out_datasets']) or 'no dataset'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
