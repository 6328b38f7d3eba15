"""The perf stage's throughput rows: one evaluation pass through the engine's public model."""

import numpy as np

from qs3study.perf import throughput_vs_gemm


def test_throughput_rows_time_each_backend_and_say_which_ran():
    rows = throughput_vs_gemm(n_samples=2000, n_features=5, n_components=4, n_blocks=3, n_jobs=1, repeat=1)
    names = [name for name, _, _ in rows]
    assert names == ["throughput_vs_gemm", "throughput_vs_gemm[numpy]", "throughput_vs_gemm[numba]",
                     "throughput_vs_gemm_float32", "throughput_vs_gemm_float32[numpy]",
                     "throughput_vs_gemm_float32[numba]"]
    details = dict((name, detail) for name, _, detail in rows)
    assert "trig_backend=auto (ran numba)" in details["throughput_vs_gemm"]
    assert "trig_backend=auto (ran numpy)" in details["throughput_vs_gemm_float32"]
    assert all(np.isfinite(value) and value > 0 for _, value, _ in rows)
