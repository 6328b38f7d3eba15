"""A job's own CPU time (qs3study.runtime.process_cpu_s): its whole process, its children included."""

import subprocess
import sys
import time

from qs3study.runtime import process_cpu_s

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {seconds}:\n    pass\n"


def test_it_counts_the_process_from_its_start():
    # a fresh process that imports the study code, then works: the imports count too
    code = ("import time\nfrom qs3study.runtime import process_cpu_s\n" + SPIN.format(seconds=0.3)
            + "print(process_cpu_s(), time.process_time())")
    cpu, own = map(float, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                         check=True).stdout.split())
    assert own >= 0.3 and cpu >= own - 0.02


def test_it_counts_the_children_the_job_waited_for():
    before, own_before = process_cpu_s(), time.process_time()
    subprocess.run([sys.executable, "-c", SPIN.format(seconds=0.5)], check=True)
    assert process_cpu_s() - before >= 0.5 > time.process_time() - own_before
