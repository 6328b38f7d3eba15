"""A job's own CPU time (qs3study.runtime.process_cpu_s): its whole process, its children included."""

import subprocess
import sys
import time

from qs3study.runtime import calibration_s, machine_session, process_cpu_s

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {seconds}:\n    pass\n"


def test_it_counts_the_process_from_its_start():
    # a fresh process that imports the study code, then works: the imports count too
    code = ("import time\nfrom qs3study.runtime import calibration_s, machine_session, process_cpu_s\n" + SPIN.format(seconds=0.3)
            + "print(process_cpu_s(), time.process_time())")
    cpu, own = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                         check=True).stdout.split())
    assert own >= 0.3 and cpu >= own - 0.02


def test_it_counts_the_children_the_job_waited_for():
    before, own_before = process_cpu_s(), time.process_time()
    subprocess.run([sys.executable, "-c", SPIN.format(seconds=0.5)], check=True)
    assert process_cpu_s() - before >= 0.5 > time.process_time() - own_before


def test_the_machine_session_is_the_boot_id_and_none_without_one(tmp_path):
    boot = tmp_path / "boot_id"
    boot.write_text("8321f464-e21a-4bb2-b4ad-4839d471f63e\n")
    assert machine_session(boot) == "8321f464-e21a-4bb2-b4ad-4839d471f63e"
    assert machine_session(tmp_path / "none") is None


def test_the_calibration_times_its_reference_computation():
    # Not a speed assertion: the value is a time of real work (a 113 MFLOP product takes well over a
    # millisecond on any CPU), and a repeat on the same machine gives the same order of magnitude.
    first, second = calibration_s(), calibration_s()
    assert 1e-3 < first < 60 and 1e-3 < second < 60
    assert 0.1 < first / second < 10
