"""A run carried across machines (qs3study.tools.run_archive): saved, restored into a fresh directory (resumed
through the pipeline in tests/workflow/test_resume_elsewhere.py)."""

import base64
import io
import json
import os
import re
import tarfile
import time
from pathlib import Path

import pytest

from qs3study.datasets.download import sha256_file
from qs3study.files import read_json
from qs3study.tools import run_archive


def write(root, relative, text="x", mtime=None):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def run_dir(tmp_path):
    """A run's directory as a stopped run leaves it: prepared data, finished and unfinished jobs' files."""
    root = tmp_path / "run"
    write(root, "results/data/d/X.npy", "data", mtime=1_000)
    write(root, "results/downloads/d.json", "{}", mtime=900)
    write(root, "benchmarks/prepare/d.tsv", "s", mtime=1_000)
    write(root, "results/tuning/d/m/trial0.json", "{}", mtime=2_000)
    write(root, "benchmarks/tune/d/m/trial0.tsv", "s", mtime=2_000)
    write(root, "results/runs/d/m/n10/part0/trial0.json", "{}", mtime=3_000)  # a finished training job's folder
    write(root, "results/runs/d/m/n10/part0/batch.json", "{}", mtime=3_000)
    write(root, "results/runs/d/m/n10/part0/.snakemake_timestamp", "", mtime=3_000)
    write(root, "logs/train/d/m/n10/part0.log", "log", mtime=3_000)
    write(root, "results/runs/d/m/n20/part0/trial0.json", "{}")              # a killed job's finished trial,
    write(root, "results/runs/d/m/n20/part0/.trial1.json.tmp", "partial")    # its temporary
    write(root, "results/kept/d/m/n20/part0/trial0.json", "{}", mtime=3_000)  # that trial kept, with its key
    write(root, "results/kept/d/m/n20/part0/key0.json", "{}", mtime=3_000)
    write(root, "results/tuning/d/m/trial1.json", "{}")                      # a killed tuning job's output
    marks = root / ".snakemake" / "incomplete"
    marks.mkdir(parents=True)
    for unfinished in (b"results/runs/d/m/n20/part0", b"results/tuning/d/m/trial1.json"):
        (marks / base64.urlsafe_b64encode(unfinished).decode()).touch()
    config = write(tmp_path, "config.yaml", "name: x\n")
    return root, config


FINISHED = ["benchmarks/tune/d/m/trial0.tsv", "logs/train/d/m/n10/part0.log",
            "results/kept/d/m/n20/part0/key0.json", "results/kept/d/m/n20/part0/trial0.json",
            "results/runs/d/m/n10/part0/.snakemake_timestamp", "results/runs/d/m/n10/part0/batch.json",
            "results/runs/d/m/n10/part0/trial0.json", "results/tuning/d/m/trial0.json"]


def test_save_keeps_finished_jobs_only_and_refuses_a_running_run(run_dir, tmp_path):
    root, config = run_dir
    manifest = run_archive.save(tmp_path / "a.tar.gz", [config], root)
    assert sorted(manifest["files"]) == FINISHED
    assert list(manifest["prepared"]) == ["results/data/d/X.npy"]
    with tarfile.open(tmp_path / "a.tar.gz") as tar:
        assert sorted(tar.getnames()) == sorted([*FINISHED, "run-archive.json"])
    (root / ".snakemake" / "locks").mkdir()
    (root / ".snakemake" / "locks" / "0.input.lock").touch()
    with pytest.raises(RuntimeError, match="stop it"):
        run_archive.save(tmp_path / "b.tar.gz", [config], root)


def fresh(tmp_path, data="data", name="fresh"):
    """A new machine's directory after ``--until prepare``: the data prepared again, now."""
    root, now = tmp_path / name, time.time()
    write(root, "results/downloads/d.json", "{}", mtime=now - 10)
    write(root, "results/data/d/X.npy", data, mtime=now - 5)
    write(root, "benchmarks/prepare/d.tsv", "s", mtime=now)
    return root


def test_restore_keeps_the_jobs_times_and_dates_the_prepared_files_back(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    target = fresh(tmp_path)
    record = run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert record["n_files"] == len(FINISHED) and record["prepared_dated_back_s"] > 0
    for path in FINISHED:
        assert (target / path).stat().st_mtime == (root / path).stat().st_mtime
    assert not (target / "results/runs/d/m/n20").exists() and not (target / "results/tuning/d/m/trial1.json").exists()
    dated = {p: (target / p).stat().st_mtime for p in ("results/downloads/d.json", "results/data/d/X.npy")}
    assert max(dated.values()) < 2_000  # older than the oldest restored file, so no job reruns
    assert dated["results/data/d/X.npy"] - dated["results/downloads/d.json"] == pytest.approx(5.0, abs=1e-3)
    records = list((target / "results" / "restored").glob("*.json"))
    assert len(records) == 1 and read_json(records[0])["saved"]["configuration"][0]["path"] == str(config)


def test_restore_refuses_another_configuration_other_data_and_overwriting(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    other = write(tmp_path, "other.yaml", "name: y\n")
    with pytest.raises(ValueError, match="configuration"):
        run_archive.restore(tmp_path / "a.tar.gz", [other], fresh(tmp_path, name="f1"))
    with pytest.raises(ValueError, match="--until prepare"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], tmp_path / "empty")
    with pytest.raises(ValueError, match="differ"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], fresh(tmp_path, data="other data", name="f2"))
    target = fresh(tmp_path, name="f3")
    write(target, "results/tuning/d/m/trial0.json", "{}")
    with pytest.raises(ValueError, match="already exist"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert (target / "results/tuning/d/m/trial0.json").read_text() == "{}"


def test_the_runs_config_settings_are_part_of_its_configuration(run_dir, tmp_path, capsys):
    # A run started with snakemake ... --config name=scale-paper is restored with the same settings.
    root, config = run_dir
    archive = str(tmp_path / "a.tar.gz")
    assert run_archive.main(["save", archive, "--configfile", str(config), "--config", "name=scale",
                             "--directory", str(root)]) == 0
    for i, other in enumerate([[], ["--config", "name=other"], ["--config", "name=scale", "trials=1"]]):
        assert run_archive.main(["restore", archive, "--configfile", str(config), *other,
                                 "--directory", str(fresh(tmp_path, name=f"f{i}"))]) == 1
        assert "--config" in capsys.readouterr().err
    target = fresh(tmp_path)
    assert run_archive.main(["restore", archive, "--configfile", str(config), "--config", "name=scale",
                             "--directory", str(target)]) == 0
    record = read_json(next((target / "results" / "restored").glob("*.json")))
    assert record["saved"]["config"] == ["name=scale"]
    with pytest.raises(ValueError, match="KEY=VALUE"):
        run_archive.save(tmp_path / "b.tar.gz", [config], root, config=["scale"])


def test_an_archive_saved_before_settings_were_recorded_restores_without_any(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    rewritten(tmp_path / "a.tar.gz", without_manifest_key("config"))
    with pytest.raises(ValueError, match=r"--config \(none\), not \['name=x'\]"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], fresh(tmp_path, name="f1"), config=["name=x"])
    assert run_archive.restore(tmp_path / "a.tar.gz", [config], fresh(tmp_path))["saved"]["config"] == []


@pytest.mark.parametrize("here", [{"commit": "b" * 40, "dirty": False}, {"commit": "a" * 40, "dirty": True}])
def test_restore_refuses_another_commit_or_uncommitted_changes(run_dir, tmp_path, monkeypatch, here):
    # The resumed run skips Snakemake's code trigger (RESUME_ARGS), so restore itself guards the code.
    root, config = run_dir
    monkeypatch.setattr(run_archive, "git_state", lambda directory: {"commit": "a" * 40, "dirty": False})
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    monkeypatch.setattr(run_archive, "git_state", lambda directory: here)
    with pytest.raises(ValueError, match="clean clone of that commit"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], fresh(tmp_path))


def rewritten(archive, change):
    """Rewrite ``archive`` member by member: ``change(name, payload, manifest)`` returns the new list of
    ``(TarInfo, payload)`` for a member (the manifest, already parsed, may be edited in place)."""
    with tarfile.open(archive) as tar:
        members = [(member, tar.extractfile(member).read()) for member in tar.getmembers()]
    manifest = json.loads(members[0][1])
    body = [new for member, payload in members[1:] for new in change(member, payload, manifest)]
    payload = json.dumps(manifest).encode()
    info = tarfile.TarInfo(run_archive.MANIFEST_MEMBER)
    info.size = len(payload)
    with tarfile.open(archive, "w:gz") as tar:
        for member, data in [(info, payload), *body]:
            tar.addfile(member, io.BytesIO(data) if member.isfile() else None)


def without_manifest_key(key):
    """A :func:`rewritten` change that drops ``key`` from the manifest: an archive saved before it was recorded."""
    def change(member, payload, manifest):
        manifest.pop(key, None)
        return [(member, payload)]
    return change


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_restore_refuses_an_archive_whose_gzip_check_fails_and_writes_nothing(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    data = bytearray((tmp_path / "a.tar.gz").read_bytes())
    data[-8] ^= 0x01  # one bit of the gzip trailer's CRC-32
    (tmp_path / "a.tar.gz").write_bytes(bytes(data))
    target = fresh(tmp_path)
    before = listing(target)
    with pytest.raises(ValueError, match=r"a\.tar\.gz.*CRC"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert listing(target) == before


def test_restore_refuses_a_member_whose_checksum_differs(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)

    def tamper(member, payload, manifest):
        if member.name == "results/tuning/d/m/trial0.json":
            payload = b"[]"
            member.size = len(payload)
        return [(member, payload)]

    rewritten(tmp_path / "a.tar.gz", tamper)
    target = fresh(tmp_path)
    before = listing(target)
    with pytest.raises(ValueError, match="results/tuning/d/m/trial0.json.*checksum"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert listing(target) == before


@pytest.mark.parametrize("bad", ["traversal", "absolute", "outside link", "device"])
def test_restore_refuses_an_unsafe_member_listed_last_before_writing_anything(run_dir, tmp_path, bad):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    name = {"traversal": "results/../../evil.json", "absolute": "/tmp/evil.json", "outside link": "results/link",
            "device": "results/dev"}[bad]

    def append(member, payload, manifest):
        if member.name != sorted(manifest["files"])[-1]:
            return [(member, payload)]
        evil = tarfile.TarInfo(name)
        if bad == "outside link":
            evil.type, evil.linkname = tarfile.SYMTYPE, "/etc/passwd"
        elif bad == "device":
            evil.type = tarfile.CHRTYPE
        else:
            evil.size = 2
        manifest["files"].append(name)
        manifest.setdefault("sha256", {})[name] = "0" * 64
        return [(member, payload), (evil, b"{}")]

    rewritten(tmp_path / "a.tar.gz", append)
    target = fresh(tmp_path)
    before = listing(target)
    with pytest.raises(ValueError, match=name.lstrip("/").split("/")[-1]):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert listing(target) == before  # no good file written, no restore record
    assert not (tmp_path / "evil.json").exists()


@pytest.mark.parametrize("damage", ["truncated", "not gzip", "no manifest", "manifest not json",
                                    "manifest lacks keys"])
def test_a_damaged_archive_is_named_in_a_one_line_error(run_dir, tmp_path, capsys, damage):
    root, config = run_dir
    archive = tmp_path / "a.tar.gz"
    run_archive.save(archive, [config], root)
    data = archive.read_bytes()
    if damage == "truncated":
        archive.write_bytes(data[:len(data) // 2])
    elif damage == "not gzip":
        archive.write_bytes(b"not an archive")
    else:
        with tarfile.open(archive) as tar:
            members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
        with tarfile.open(archive, "w:gz") as tar:
            for member, payload in members:
                if member.name == run_archive.MANIFEST_MEMBER and damage != "no manifest":
                    payload = b"{not json" if damage == "manifest not json" else b"{}"
                    member.size = len(payload)
                if member.name != run_archive.MANIFEST_MEMBER or damage != "no manifest":
                    tar.addfile(member, io.BytesIO(payload))
    target = fresh(tmp_path)
    before = listing(target)
    with pytest.raises(ValueError, match=r"a\.tar\.gz"):
        run_archive.restore(archive, [config], target)
    assert listing(target) == before
    assert run_archive.main(["restore", str(archive), "--configfile", str(config), "--directory", str(target)]) == 1
    err = capsys.readouterr().err
    assert "a.tar.gz" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_archive_without_checksums_is_refused_unless_restored_unverified(run_dir, tmp_path):
    root, config = run_dir
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    rewritten(tmp_path / "a.tar.gz", without_manifest_key("sha256"))
    target = fresh(tmp_path)
    with pytest.raises(ValueError, match=r"a\.tar\.gz.*no checksums.*--unverified"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    assert not (target / "results" / "restored").exists()
    record = run_archive.restore(tmp_path / "a.tar.gz", [config], target, unverified=True)
    assert record["n_files"] == len(FINISHED) and record["unverified"]
    assert (target / "results/tuning/d/m/trial0.json").read_text() == "{}"


def test_save_records_every_members_checksum(run_dir, tmp_path):
    root, config = run_dir
    manifest = run_archive.save(tmp_path / "a.tar.gz", [config], root)
    assert sorted(manifest["sha256"]) == FINISHED
    assert manifest["sha256"]["results/tuning/d/m/trial0.json"] == sha256_file(root / "results/tuning/d/m/trial0.json")


def test_restore_with_rerun_changed_leaves_out_the_jobs_of_data_that_differ(run_dir, tmp_path):
    # Dataset d's X.npy differs on the new machine: its jobs read it, so they must run again. Dataset e's
    # checks.csv differs too, but no job reads it: e's jobs are restored.
    root, config = run_dir
    write(root, "results/data/e/X.npy", "e data", mtime=1_000)
    write(root, "results/data/e/checks.csv", "old", mtime=1_000)
    write(root, "results/tuning/e/m/trial0.json", "{}", mtime=2_000)
    run_archive.save(tmp_path / "a.tar.gz", [config], root)
    target = fresh(tmp_path, data="other data")
    write(target, "results/data/e/X.npy", "e data")
    write(target, "results/data/e/checks.csv", "new")
    with pytest.raises(ValueError, match="--rerun-changed(.|\n)*results/data/e/checks.csv:\n  @@ -1 \\+1 @@\n  -old\n  \\+new"):
        run_archive.restore(tmp_path / "a.tar.gz", [config], target)
    record = run_archive.restore(tmp_path / "a.tar.gz", [config], target, rerun_changed=True)
    assert record["changed_prepared"] == ["results/data/d/X.npy", "results/data/e/checks.csv"]
    # how a small text file differs travels in the manifest; the arrays' contents do not
    assert record["prepared_differences"] == {"results/data/e/checks.csv": ["@@ -1 +1 @@", "-old", "+new"]}
    assert record["left_out_datasets"] == ["d"] and record["n_left_out"] == len(FINISHED)
    assert record["n_files"] == 1 and (target / "results/tuning/e/m/trial0.json").is_file()
    assert not any((target / path).exists() for path in FINISHED)
    assert not list(target.glob(".run-archive-restore-*"))


def test_job_inputs_are_the_prepared_files_the_job_rules_read():
    # JOB_INPUTS decides which archived jobs a changed prepared file invalidates: it must name every
    # prepare output that a tuning or training job takes as input.
    rules = Path(__file__).parents[3] / "workflow" / "rules"
    read = set(re.findall(r"rules\.prepare\.output\.(\w+)", (rules / "train.smk").read_text()))
    outputs = dict(re.findall(r"(\w+)=f\"\{RESULTS\}/data/\{\{dataset\}\}/([\w.]+)\"", (rules / "data.smk").read_text()))
    assert read and {outputs[key] for key in read} == set(run_archive.JOB_INPUTS)
