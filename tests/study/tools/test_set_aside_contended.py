"""Setting aside the training jobs timed beside another load: what moves, where, and what is refused."""

import json

from qs3study.tools import set_aside_contended as tool


def write_trial(root, job, trial, wall, cpu, status="ok"):
    path = root / tool.RUNS / job / f"trial{trial}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"status": status, "trial_wall_s": wall, "job_cpu_s": cpu, "fit_time": wall}))


def write_companions(root, job):
    for folder, suffix in (("benchmarks/train", ".tsv"), ("logs/train", ".log")):
        path = root / folder / f"{job}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{folder} of {job}\n")


def run(tmp_path):
    contended_job, kept = "sgemm/m-samult/n2000/draw1/part0", "sgemm/m-samult/n2000/part0"
    write_trial(tmp_path, contended_job, 0, wall=100.0, cpu=99.0)
    write_trial(tmp_path, contended_job, 1, wall=300.0, cpu=100.0)
    write_trial(tmp_path, kept, 0, wall=100.0, cpu=95.0)
    write_trial(tmp_path, "sgemm/qs3orao/n2000/part0", 0, wall=8.0, cpu=1.0)
    write_trial(tmp_path, "sgemm/m-pnu-auc/n2000/part0", 0, wall=300.0, cpu=10.0, status="failed")
    for job in (contended_job, kept):
        write_companions(tmp_path, job)
    return contended_job, kept


def test_only_jobs_with_a_finished_long_contended_trial_are_listed(tmp_path):
    contended_job, _ = run(tmp_path)
    assert [str(job) for job in tool.contended_jobs(tmp_path)] == [contended_job]


def test_a_contended_job_moves_whole_with_its_benchmark_and_log(tmp_path, capsys):
    contended_job, kept = run(tmp_path)
    assert tool.main(["--root", str(tmp_path), "--dry-run"]) == 0
    assert (tmp_path / tool.RUNS / contended_job).exists()
    assert contended_job in capsys.readouterr().out

    assert tool.main(["--root", str(tmp_path)]) == 0
    target = tmp_path / tool.SUPERSEDED / contended_job
    assert sorted(path.name for path in target.iterdir()) == ["benchmark.tsv", "job.log", "trial0.json", "trial1.json"]
    assert (target / "benchmark.tsv").read_text() == f"benchmarks/train of {contended_job}\n"
    assert not (tmp_path / tool.RUNS / contended_job).exists()
    assert not (tmp_path / "benchmarks/train" / f"{contended_job}.tsv").exists()
    assert (tmp_path / tool.RUNS / kept / "trial0.json").exists()
    assert (tmp_path / "benchmarks/train" / f"{kept}.tsv").exists()
    assert tool.contended_jobs(tmp_path) == []


def test_a_second_contended_measurement_is_kept_beside_the_first(tmp_path, capsys):
    contended_job, _ = run(tmp_path)
    assert tool.main(["--root", str(tmp_path)]) == 0
    first = (tmp_path / tool.SUPERSEDED / contended_job / "trial1.json").read_text()
    write_trial(tmp_path, contended_job, 0, wall=500.0, cpu=100.0)
    write_trial(tmp_path, "uci_kin40k/m-samult/n2000/part0", 0, wall=500.0, cpu=100.0)

    assert tool.main(["--root", str(tmp_path)]) == 0
    second = tmp_path / "results/superseded/contended-2"
    assert (tmp_path / tool.SUPERSEDED / contended_job / "trial1.json").read_text() == first
    assert json.loads((second / contended_job / "trial0.json").read_text())["trial_wall_s"] == 500.0
    assert (tmp_path / tool.SUPERSEDED / "uci_kin40k/m-samult/n2000/part0" / "trial0.json").exists()
    assert not (second / "uci_kin40k").exists()
    assert tool.superseded_folders(tmp_path) == [tool.SUPERSEDED, second.relative_to(tmp_path)]
    assert [str(job) for job in tool.set_aside_jobs(tmp_path)] == [contended_job, "uci_kin40k/m-samult/n2000/part0"]


def test_a_run_without_trials_has_no_contended_jobs(tmp_path):
    assert tool.contended_jobs(tmp_path) == []


def test_the_targets_name_the_jobs_set_aside_for_snakemake(tmp_path, capsys):
    contended_job, _ = run(tmp_path)
    assert tool.main(["--root", str(tmp_path), "--targets"]) == 0
    assert capsys.readouterr().out == "\n"
    assert tool.main(["--root", str(tmp_path)]) == 0
    assert f"targets: all results/runs/{contended_job}" in capsys.readouterr().out
    assert tool.main(["--root", str(tmp_path), "--targets"]) == 0
    assert capsys.readouterr().out == f"results/runs/{contended_job}\n"
