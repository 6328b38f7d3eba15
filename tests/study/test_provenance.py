"""Run times in the manifest: job time, CPU time and wall time from Snakemake benchmark records, and the
CPU time the jobs recorded themselves."""

import json
import math
import os

from qs3study.provenance import job_times, jobs_cpu_s

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _record(path, seconds, cpu, end):
    path.write_text(HEADER + f"{seconds}\t0:00:00\t100\t200\t50\t60\t0\t0\t90\t{cpu}\n")
    os.utime(path, (end, end))
    return path


def test_job_cpu_and_wall_times_add_up(tmp_path):
    a = _record(tmp_path / "a.tsv", 10.0, 19.5, end=1000.0)   # ran 990..1000 on two threads
    b = _record(tmp_path / "b.tsv", 4.0, 3.5, end=1002.0)     # ran 998..1002
    c = _record(tmp_path / "c.tsv", 1.0, 0, end=1001.0)       # too short to measure: a CPU time of 0, not missing
    times = job_times([a, b, c], now=1010.0)
    assert times == {"job_s": 15.0, "cpu_s": 23.0, "wall_time_s": 20.0, "busy_s": 12.0, "n_jobs": 3}


def test_a_pause_between_jobs_counts_in_the_wall_time_not_in_the_busy_time(tmp_path):
    a = _record(tmp_path / "a.tsv", 10.0, 9.0, end=1000.0)    # ran 990..1000, then the run was stopped
    b = _record(tmp_path / "b.tsv", 5.0, 4.0, end=90_005.0)   # resumed a day later: ran 90000..90005
    c = _record(tmp_path / "c.tsv", 3.0, 2.0, end=90_004.0)   # inside b's interval
    times = job_times([b, a, c], now=90_010.0)
    assert times["wall_time_s"] == 89_020.0 and times["busy_s"] == 15.0


def test_an_unmeasured_cpu_time_shows_as_nan(tmp_path):
    times = job_times([_record(tmp_path / "a.tsv", 1.0, "NA", end=5.0)], now=6.0)
    assert times["job_s"] == 1.0 and times["cpu_s"] != times["cpu_s"]


def test_no_records_give_no_wall_time():
    assert job_times([]) == {"job_s": 0.0, "cpu_s": 0.0, "wall_time_s": None, "busy_s": None, "n_jobs": 0}


def test_the_jobs_own_cpu_times_add_up_and_a_missing_one_shows_as_nan(tmp_path):
    paths = []
    for name, record in (("a", {"job_cpu_s": 2.5}), ("b", {"job_cpu_s": 40.0}), ("old", {"fit_time": 1.0})):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(record))
    assert jobs_cpu_s(paths[:2]) == 42.5 and jobs_cpu_s([]) == 0.0
    assert math.isnan(jobs_cpu_s(paths))


def test_a_training_jobs_own_cpu_is_read_from_its_batch_record(tmp_path):
    paths = []
    for name, record in (("a", {"own_cpu_s": 1.75, "trials": [0, 1]}), ("b", {"own_cpu_s": 2.0, "trials": [0]})):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(record))
    assert jobs_cpu_s(paths, "own_cpu_s") == 3.75 and math.isnan(jobs_cpu_s(paths))
