"""A configuration's cpu_baseline: the variables it sets, what it refuses, and what a process started after it runs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from qs3study.cpu_baseline import BASELINES, cpu_code, cpu_flags, missing_cpu_flags, pin_cpu_baseline

HASWELL_FLAGS = frozenset({"sse4_2", "avx", "avx2", "fma", "bmi2"})
ON_AVX2 = missing_cpu_flags("x86-64-v3") == []


def test_native_sets_nothing_and_x86_64_v3_sets_its_variables():
    environ = {"PATH": "/bin"}
    assert pin_cpu_baseline("native", environ=environ, flags=frozenset()) == {}
    assert environ == {"PATH": "/bin"}
    pinned = pin_cpu_baseline("x86-64-v3", environ=environ, flags=HASWELL_FLAGS)
    assert environ == {"PATH": "/bin", **pinned}
    assert pinned == {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                      "NUMBA_CPU_NAME": "haswell",
                      "NUMBA_CPU_FEATURES": "+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave"}


def test_native_reads_neither_the_cpu_nor_numpy(monkeypatch):
    # a machine without /proc/cpuinfo, or with another NumPy, runs the embedded configuration
    def unreachable():
        raise AssertionError("native needs nothing of the CPU or of NumPy")

    monkeypatch.setattr("qs3study.cpu_baseline.cpu_flags", unreachable)
    monkeypatch.setattr("qs3study.cpu_baseline.numpy_simd", unreachable)
    assert pin_cpu_baseline("native", environ={}) == {}
    assert missing_cpu_flags("native") == []


def test_a_variable_the_environment_sets_to_another_value_is_refused_not_replaced():
    environ = {"OPENBLAS_CORETYPE": "Sandybridge"}
    with pytest.raises(ValueError, match="OPENBLAS_CORETYPE='Sandybridge'.*needs OPENBLAS_CORETYPE='Haswell'"):
        pin_cpu_baseline("x86-64-v3", environ=environ, flags=HASWELL_FLAGS)
    assert environ == {"OPENBLAS_CORETYPE": "Sandybridge"}
    # the same value already set (a job's process re-reading the Snakefile) is no clash
    environ = dict(BASELINES["x86-64-v3"])
    pin_cpu_baseline("x86-64-v3", environ=environ, flags=HASWELL_FLAGS)
    assert environ == BASELINES["x86-64-v3"]


@pytest.mark.parametrize("flags, found", [(frozenset({"sse4_2", "avx"}), "lacks avx2, bmi2, fma"),
                                          (None, "cannot be read")])
def test_a_cpu_that_cannot_run_the_baseline_is_refused(monkeypatch, flags, found):
    monkeypatch.setattr("qs3study.cpu_baseline.cpu_flags", lambda: flags)
    environ = {}
    with pytest.raises(ValueError, match=f"needs the CPU flags avx2, fma, bmi2.*{found}.*cpu_baseline: native"):
        pin_cpu_baseline("x86-64-v3", environ=environ)
    assert environ == {}
    with pytest.raises(ValueError, match="must be one of"):
        pin_cpu_baseline("x86-64-v4", environ=environ, flags=HASWELL_FLAGS)


def test_a_numpy_without_the_left_out_simd_targets_is_refused(monkeypatch):
    # NumPy 1.26 names its AVX-512 targets AVX512F, AVX512_SKX ...: it would ignore X86_V4 and keep them
    monkeypatch.setattr("qs3study.cpu_baseline.numpy_simd",
                        lambda: {"used": ["AVX2", "AVX512F", "AVX512_SKX"], "unused": ["AVX512_SPR"]})
    environ = {}
    with pytest.raises(ValueError, match="SIMD targets AVX512_ICL, X86_V4, which NumPy .* does not have"):
        pin_cpu_baseline("x86-64-v3", environ=environ, flags=HASWELL_FLAGS)
    assert environ == {}


def test_cpu_flags_reads_the_flags_line(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: some CPU\nflags\t\t: fpu sse2 avx2 fma\n\nprocessor\t: 1\n")
    assert cpu_flags(cpuinfo) == {"fpu", "sse2", "avx2", "fma"}
    assert cpu_flags(tmp_path / "absent") is None
    assert missing_cpu_flags("x86-64-v3", flags=cpu_flags(cpuinfo)) == ["bmi2"]


CHILD = """
import json, sys
import numpy as np
import scipy.sparse as sp
from numba.core import config
sys.path.insert(0, sys.argv[1])
from qs3study.cpu_baseline import cpu_code
from qs3study.datasets.text import svd_embedding
matrix = sp.random(300, 200, density=0.05, random_state=np.random.RandomState(0), format="csr")
Z, _ = svd_embedding(matrix, 20, random_state=0)
print(json.dumps({"code": cpu_code(), "numba": [config.CPU_NAME, config.CPU_FEATURES], "svd": Z.tobytes().hex()}))
"""


def child(environ):
    workflow = os.path.join(os.path.dirname(__file__), "..", "..", "workflow")
    out = subprocess.run([sys.executable, "-c", CHILD, workflow], env=environ, capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


@pytest.mark.skipif(not ON_AVX2, reason="this CPU lacks AVX2: the x86-64-v3 baseline cannot run here")
def test_a_process_started_after_the_pin_runs_the_baselines_code_whatever_the_cpu_offers():
    bare = {name: value for name, value in os.environ.items() if name not in BASELINES["x86-64-v3"]}
    pinned = dict(bare)
    pin_cpu_baseline("x86-64-v3", environ=pinned)
    ran = child(pinned)
    assert ran["code"]["variables"] == BASELINES["x86-64-v3"]
    assert {blas["architecture"] for blas in ran["code"]["blas"]} == {"Haswell"}
    assert ran["numba"] == [BASELINES["x86-64-v3"]["NUMBA_CPU_NAME"], BASELINES["x86-64-v3"]["NUMBA_CPU_FEATURES"]]
    # every NumPy target the baseline leaves out is one this NumPy knows (a renamed one would be ignored)
    left_out = BASELINES["x86-64-v3"]["NPY_DISABLE_CPU_FEATURES"].split()
    assert set(left_out) <= set(ran["code"]["numpy_simd"]["unused"])
    assert not set(left_out) & set(ran["code"]["numpy_simd"]["used"])
    # why the baseline exists: another OpenBLAS kernel gives the same SVD to rounding, not to the bit
    other = child({**bare, "OPENBLAS_CORETYPE": "Sandybridge"})
    assert {blas["architecture"] for blas in other["code"]["blas"]} == {"Sandybridge"}
    assert other["svd"] != ran["svd"]
    first, second = (np.frombuffer(bytes.fromhex(run["svd"])) for run in (ran, other))
    np.testing.assert_allclose(first, second, rtol=0, atol=1e-9)


def test_this_process_reports_its_code():
    code = cpu_code()
    assert set(code["variables"]) == {name for settings in BASELINES.values() for name in settings}
    assert code["blas"] and all(blas["library"] for blas in code["blas"])
    assert set(code["numpy_simd"]) == {"used", "unused"}
