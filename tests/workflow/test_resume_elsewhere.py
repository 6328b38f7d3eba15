"""A run carried across machines through the pipeline: saved with ``qs3study.tools.run_archive``, restored into a
fresh directory, resumed; only its unfinished jobs run again."""

import io
import shutil
import tarfile

import pandas as pd

from pipeline import TINY, deterministic, jobs_of, run_tiny
from qs3study.files import read_json
from qs3study.stages import tables
from qs3study.tools import run_archive


def aged(archive, seconds):
    """``archive`` as if saved ``seconds`` earlier: on another machine, before this checkout was made."""
    with tarfile.open(archive) as tar:
        members = [(member, tar.extractfile(member).read()) for member in tar.getmembers()]
    with tarfile.open(archive, "w:gz") as tar:
        for member, payload in members:
            member.mtime -= seconds
            member.pax_headers.pop("mtime", None)  # else the header's exact time overrides the new one
            tar.addfile(member, io.BytesIO(payload))


def test_a_run_saved_restored_elsewhere_and_resumed_reruns_only_its_unfinished_jobs(tmp_path):
    first = tmp_path / "first"
    run_tiny(first, "--until", "train")
    unfinished = sorted((first / "results" / "runs").rglob("trial1.json"))[0].parent  # a training job's folder
    shutil.rmtree(unfinished)
    run_archive.main(["save", str(tmp_path / "run.tar.gz"), "--configfile", str(TINY), "--directory", str(first)])
    run_tiny(first)  # the same run carried to its end on the first machine: the reference
    aged(tmp_path / "run.tar.gz", 10 * 86_400)  # its outputs older than this checkout's scripts

    second = tmp_path / "second"
    run_tiny(second, "--until", "prepare")
    run_archive.main(["restore", str(tmp_path / "run.tar.gz"), "--configfile", str(TINY), "--directory", str(second)])
    planned = run_tiny(second, "--dry-run", *run_archive.RESUME_ARGS).stdout
    assert jobs_of(planned, "train") == 1 and jobs_of(planned, "tune") == 0 and jobs_of(planned, "prepare") == 0
    run_tiny(second, *run_archive.RESUME_ARGS)
    resumed, reference = (tables.read_results(root / "results" / "tables" / "results.csv") for root in (second, first))
    pd.testing.assert_frame_equal(deterministic(resumed), deterministic(reference))
    manifest = read_json(next((second / "figures").rglob("manifest.json")))
    assert len(manifest["restored"]) == 1 and manifest["restored"][0]["n_files"] > 0
