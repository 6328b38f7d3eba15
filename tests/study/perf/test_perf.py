"""The perf stage's throughput rows: one evaluation pass through the engine's public model."""

import numpy as np
import pytest

from qs3study.perf.summary import (EXACT_BASELINES, compiled_steps_ratio, grid_pass_ratio, lam_path_ratio,
                                   throughput_vs_gemm)


@pytest.mark.requires_numba
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


def test_lam_path_rows_time_every_path_solver_against_its_own_solve():
    rows = lam_path_ratio(n_samples=120, n_features=3, n_classes=3, n_labeled=60, gamma=0.5,
                          lams=[2.0 ** e for e in range(-4, 2)], tradeoff=0.5, pnu_mix=0.0, repeat=1)
    assert [name for name, _, _ in rows] == [f"lam_path_ratio[{m}]" for m in
                                              ("M-PNU-AUC", "M-SAMULT", "exact", "RFF-AUC", "Nystroem-AUC")]
    for name, ratio, detail in rows:
        assert np.isfinite(ratio) and ratio > 0
        gap = float(detail.rsplit(": ", 1)[1])  # the path's model at the first lam against its own solve
        assert gap < 1e-8, (name, detail)


@pytest.mark.requires_numba
def test_compiled_steps_row_times_both_backends_on_the_same_converged_fit():
    params = dict(n_iter=100, max_iter=400, tol=0.01, n_components=4, batch_size=4, gamma=0.5, lam=0.01,
                  step_offset="auto", n_jobs=1)
    [(name, ratio, detail)] = compiled_steps_ratio(n_samples=400, n_features=3, n_classes=3, n_labeled=100,
                                                   params=params, repeat=1)
    assert name == "compiled_steps_ratio" and np.isfinite(ratio) and ratio > 0
    kept = detail.split("iterations kept ")[1].split(";")[0]
    numpy_count, numba_count = (int(part.split()[0]) for part in kept.split(" and "))
    assert numpy_count == numba_count
    assert float(detail.rsplit(": ", 1)[1]) < 1e-12


@pytest.mark.requires_numba
def test_grid_pass_rows_time_the_path_and_the_products_it_cannot_avoid():
    params = dict(n_iter=40, n_components=4, batch_size=2, gamma=0.5, step_offset="auto", n_jobs=1)
    rows = grid_pass_ratio(n_samples=300, n_features=3, n_classes=3, n_labeled=60, params=params,
                           lams=[0.5, 2.0], tradeoffs=[0.0, 0.5, 1.0], step_backends=["numpy", "numba"], repeat=1)
    assert [name for name, _, _ in rows] == ["grid_pass_ratio[6]", "grid_pass_floor[6]",
                                             "grid_pass_ratio[6,numba]", "grid_pass_floor[6,numba]"]
    assert all(np.isfinite(value) and value > 0 for _, value, _ in rows)
    for (_, _, path), (_, _, floor), backend in zip(rows[0::2], rows[1::2], ["numpy", "numba"]):
        assert f"step_backend={backend};" in path and f"step_backend={backend};" in floor
        assert float(path.rsplit("= ", 1)[1]) < 1e-11
        # 6 settings x 300 rows x 40 steps (three products of 16 blocks: 48) x 8 features, 2 flops each
        assert floor.split("flops = ")[1].startswith(f"{2 * 6 * 300 * 48 * 8:.4g} at ")
    assert rows[1][2].split(" / ")[0] == rows[3][2].split(" / ")[0]  # one timing of the products for both


def test_the_crossover_sweep_times_and_bounds_the_exact_baselines_fast_solvers():
    # Their low-memory solvers would run past the budget at which the sweep records them as stopped.
    assert {name: make().low_memory for name, make in EXACT_BASELINES.items()} == {"M-PNU-AUC": False,
                                                                                  "M-SAMULT": False}
