"""Time to accuracy on a real unlabeled pool: the reading of the tuned run, the rows, the Pareto plot."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from qs3orao import QS3ORAO
from qs3study.perf.pool_time_to_accuracy import (LABELS, plot_pareto, pool_problem, pool_time_to_accuracy_rows,
                                            run_pool, time_to_accuracy, tuned_settings)

REPO_ROOT = Path(__file__).resolve().parents[3]
REDUCED = yaml.safe_load((Path(__file__).parent / "perf_reduced.yaml").read_text())["perf"]["pool_time_to_accuracy"]
RESULTS = REPO_ROOT / REDUCED["results_csv"]


def point(method, time, auc, value=1):
    return dict(dataset="d", pool=10, method=method, knob="k", value=value, time=time, cpu_time=time, auc=auc,
                note="")


def test_time_to_accuracy_is_the_fastest_point_within_the_tolerance_of_the_best():
    points = [point("a", 1.0, 0.80), point("a", 4.0, 0.896, 2), point("a", 9.0, 0.899, 3),
              point("b", 2.0, 0.900), point("c", 0.5, 0.70), point("c", np.nan, np.nan, 2)]
    best, reached = time_to_accuracy(points, 0.005)
    assert best["method"] == "b" and best["auc"] == 0.900
    assert reached["a"]["time"] == 4.0 and reached["b"]["time"] == 2.0 and reached["c"] is None
    points[1]["cpu_time"] = 20.0
    _, by_cpu = time_to_accuracy(points, 0.005, clock="cpu_time")
    assert by_cpu["a"]["value"] == 3 and by_cpu["b"]["value"] == 1


def test_tuned_settings_are_read_from_the_committed_reproduction():
    params, scale = tuned_settings(RESULTS, "sgemm", "qs3orao", 0)
    assert params["lam"] == 0.125 and params["n_iter"] == 2000 and scale > 0
    with pytest.raises(ValueError, match="no row of method 'qs3orao-auto'"):
        tuned_settings(RESULTS, "sgemm", "qs3orao-auto", 0)


@pytest.mark.slow
def test_reduced_pool_gives_every_method_a_row_and_a_pareto_plot(shared_mirror, tmp_path):
    figure = tmp_path / "pareto.png"
    settings = dict(REDUCED, results_csv=RESULTS, cache_dir=tmp_path / "cache", mirror=shared_mirror)
    rows = pool_time_to_accuracy_rows(**settings, figure_paths=[figure])
    values = {name: (value, detail) for name, value, detail in rows}
    assert set(values) == {"best_auc[road3d_subset]"} | {f"{clock}[road3d_subset,{m}]" for m in LABELS
                                                         for clock in ("time_to_accuracy", "cpu_time_to_accuracy")}
    best = values["best_auc[road3d_subset]"][0]
    assert 0.5 < best <= 1.0
    for method in LABELS:
        value, detail = values[f"time_to_accuracy[road3d_subset,{method}]"]
        assert np.isfinite(value) == detail.startswith("fastest within 0.005")
        if np.isfinite(value):
            auc = float(detail.split(", AUC ")[1].split(",")[0])
            assert best - 0.005 <= auc <= best
    assert figure.stat().st_size > 0


def road3d_rows_changed(source, method, change, path):
    """``source``'s road3d_subset rows of ``method``, each changed in place by ``change``, as the table ``path``."""
    with open(source, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["dataset"] == "road3d_subset" and r["method"] == method]
    for r in rows:
        change(r)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_split_other_than_the_tuned_run_is_refused(shared_mirror, tmp_path):
    pool = pool_problem("road3d_subset", cache_dir=tmp_path / "cache", mirror=shared_mirror)
    _, scale = tuned_settings(RESULTS, "road3d_subset", "rff-auc", 0)
    assert np.isclose(scale, pool.scale, rtol=1e-9, atol=0)
    shifted = road3d_rows_changed(RESULTS, "rff-auc", lambda r: r.update(gamma_scale=str(2 * float(r["gamma_scale"]))),
                                  tmp_path / "results.csv")
    with pytest.raises(ValueError, match="not the tuned run's"):
        run_pool(pool, results_csv=shifted, trial=0, n_iters=[10], feature_sizes={"rff-auc": [8]},
                 exact_unlabeled=[], memory_budget_mb=64, methods=("rff-auc",))


BEST = REPO_ROOT / "figures" / "reproduction-best" / "results.csv"


def test_best_effort_values_fit_both_schedules_without_the_convergence_criterion(shared_mirror, tmp_path):
    # The best-effort table records the converged QS3ORAO (its stopping criterion beside n_iter); n_iter is the
    # knob here, and the plain estimator takes none of the criterion's keys.
    params, _ = tuned_settings(BEST, "road3d_subset", "qs3orao", 0)
    assert {"tol", "max_iter", "require_falling"} <= set(params)
    pool = pool_problem("road3d_subset", cache_dir=tmp_path / "cache", mirror=shared_mirror)
    points = run_pool(pool, results_csv=BEST, trial=0, n_iters=[100, 400], feature_sizes={}, exact_unlabeled=[],
                      memory_budget_mb=1024, n_jobs=1, methods=("qs3orao", "qs3orao-auto"))
    auto = [p for p in points if p["method"] == "qs3orao-auto"]
    assert [p["value"] for p in auto] == [100, 400] and all(0.5 < p["auc"] <= 1.0 for p in auto)
    assert all(set(p["params"]) <= set(QS3ORAO().get_params()) for p in points)


def test_a_diverging_paper_schedule_is_one_point_with_its_reason(shared_mirror, tmp_path):
    # At a lam far below the paper grid's the paper's step theta / t diverges on road3d; the stable step does not.
    def small_lam(row):
        row["params"] = json.dumps({**json.loads(row["params"]), "lam": 2.0**-16})

    table = road3d_rows_changed(BEST, "qs3orao", small_lam, tmp_path / "results.csv")
    pool = pool_problem("road3d_subset", cache_dir=tmp_path / "cache", mirror=shared_mirror)
    points = run_pool(pool, results_csv=table, trial=0, n_iters=[100, 400], feature_sizes={}, exact_unlabeled=[],
                      memory_budget_mb=1024, n_jobs=1, methods=("qs3orao", "qs3orao-auto"))
    paper, auto = ([p for p in points if p["method"] == label] for label in ("qs3orao", "qs3orao-auto"))
    assert len(paper) == 1 and np.isnan(paper[0]["auc"]) and paper[0]["note"].startswith("diverged")
    assert [p["value"] for p in auto] == [100, 400] and all(0.5 < p["auc"] <= 1.0 for p in auto)


def test_a_method_keeps_its_colour_in_every_panel_when_it_has_no_point_in_one(tmp_path):
    # On SGEMM the paper's step diverged at every n_iter: the other methods' lines shifted colour there,
    # so the legend (drawn beside the last panel) named them wrongly.
    points = [dict(point(method, 1.0 + i, 0.80 + 0.01 * i), dataset=dataset)
              for dataset in ("d1", "d2") for i, method in enumerate(LABELS)]
    for p in points:
        if p["dataset"] == "d1" and p["method"] == "qs3orao":
            p.update(time=np.nan, cpu_time=np.nan, auc=np.nan, note="diverged")
    drawn = plot_pareto(points, [tmp_path / "pareto.png"], 0.005)
    assert set(drawn["d1"]) == set(LABELS) - {"qs3orao"} and set(drawn["d2"]) == set(LABELS)
    assert all(drawn["d1"][method] == drawn["d2"][method] for method in drawn["d1"])
    assert len(set(drawn["d2"].values())) == len(LABELS)
