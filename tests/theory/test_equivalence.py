"""The rate's equivalence test and its design calculator, on synthetic runs with the design's noise."""

import pathlib

import numpy as np
import pytest
from scipy import stats

from qs3study.claims.design import load_design
from qs3study.claims.equivalence import (equivalence_classes, estimate_noise, expected_half_width, power,
                                         slope_standard_error, tost_p_values)
from qs3study.theory.convergence import bootstrap_slopes, checkpoints

DESIGN = pathlib.Path(__file__).resolve().parents[2] / "workflow" / "config" / "theory.yaml"


@pytest.fixture(scope="module")
def rate():
    return load_design(DESIGN)["v2"]["rate"]


def design_marks(rate):
    return checkpoints(int(rate["n_iter"]), int(rate["n_checkpoints"]), window_from=float(rate["window_from"]),
                       window_points=int(rate["window_points"]))


def synthetic_runs(rng, marks, seeds, slope, sigma, ell):
    """Per-seed errors ``t^slope exp(noise)``, the noise Gaussian with the calculator's covariance."""
    x = np.log(marks.astype(float))
    covariance = sigma ** 2 * np.exp(-np.abs(np.subtract.outer(x, x)) / ell)
    noise = rng.multivariate_normal(np.zeros(x.size), covariance, size=seeds)
    return np.exp(slope * x + noise)


def test_tost_is_the_interval_inside_the_margin():
    z = stats.norm.ppf(0.95)
    for slope, se in [(-1.0, 0.05), (-1.1, 0.05), (-0.85, 0.05), (-1.0, 0.2), (-0.7, 0.02)]:
        inside = -1.2 < slope - z * se and slope + z * se < -0.8
        assert (tost_p_values(slope, se, target=-1.0, margin=0.2)["equivalent"] < 0.05) == inside
    assert tost_p_values(-0.5, 0.05, target=-1.0, margin=0.2)["slower"] < 1e-6
    assert tost_p_values(-1.5, 0.05, target=-1.0, margin=0.2)["faster"] < 1e-6
    assert np.isnan(tost_p_values(float("nan"), 0.1, target=-1.0, margin=0.2)["equivalent"])


def test_classes_adjust_only_the_difference_claims():
    labels, p = equivalence_classes([-1.0, -0.5, -1.5, -1.0, -0.75, -0.78], [0.05, 0.05, 0.05, 0.3, 0.01, 0.01],
                                    target=-1.0, margin=0.2, alpha=0.05)
    assert labels.tolist() == ["consistent", "slower", "faster", "inconclusive", "slower", "inconclusive"]
    assert p["slower"][5] < 0.05 < p["holm_slower"][5]  # slower alone, not after Holm over six cells
    assert (p["holm_slower"] >= p["slower"]).all()


def test_calculator_limits():
    marks = np.geomspace(500, 8000, 16)
    x = np.log(marks)
    independent = 0.7 / np.sqrt(10 * ((x - x.mean()) ** 2).sum())
    assert slope_standard_error(marks, 10, sigma=0.7, ell=1e-9) == pytest.approx(independent)
    # a deviation shared by every checkpoint moves the level, not the slope
    assert slope_standard_error(marks, 10, sigma=0.7, ell=1e9) < 1e-4
    assert expected_half_width(marks, 10, sigma=0.7, ell=0.5, alpha=0.05) == pytest.approx(
        stats.norm.ppf(0.95) * slope_standard_error(marks, 10, sigma=0.7, ell=0.5))
    assert power(marks, 4, sigma=0.7, ell=0.5, alpha=0.05, margin=0.2) < power(
        marks, 64, sigma=0.7, ell=0.5, alpha=0.05, margin=0.2)


def test_calculator_matches_simulation_and_recovers_the_noise():
    rng = np.random.default_rng(0)
    marks = np.unique(np.geomspace(500, 8000, 16).round().astype(int))
    runs = synthetic_runs(rng, marks, 4000, -1.0, 0.75, 0.6)
    x = np.log(marks)
    per_seed = np.log(runs) @ (x - x.mean()) / ((x - x.mean()) @ (x - x.mean()))
    assert per_seed.std(ddof=1) == pytest.approx(slope_standard_error(marks, 1, sigma=0.75, ell=0.6), rel=0.05)
    sigma, ell = estimate_noise(marks, runs, fit_from=0.0)
    assert sigma == pytest.approx(0.75, rel=0.05) and ell == pytest.approx(0.6, rel=0.15)


def test_design_half_width_is_below_the_margin(rate):
    criteria = rate["criteria"]
    marks = design_marks(rate)
    window = marks[marks >= criteria["fit_from"] * marks[-1]]
    assert window[-1] / window[0] >= 16
    options = dict(sigma=criteria["noise_sigma"], ell=criteria["noise_ell"], alpha=criteria["alpha"])
    assert expected_half_width(window, rate["seeds"], **options) < criteria["margin"]
    assert power(window, rate["seeds"], **options, margin=criteria["margin"]) >= criteria["power"]


@pytest.mark.parametrize("slope, expected", [(-1.0, "consistent"), (-0.5, "slower")])
def test_synthetic_runs_at_the_design(rate, slope, expected):
    """200 synthetic cells with the design's seeds, checkpoints and noise, analysed as the study will be."""
    criteria = rate["criteria"]
    marks = design_marks(rate)
    rng = np.random.default_rng(1)
    labels = []
    for replicate in range(200):
        runs = synthetic_runs(rng, marks, int(rate["seeds"]), slope, criteria["noise_sigma"], criteria["noise_ell"])
        fitted, boot, _ = bootstrap_slopes(marks, runs, fit_from=criteria["fit_from"], n_boot=criteria["bootstrap"],
                                           seed=replicate)
        label, _ = equivalence_classes([fitted], [float(np.std(boot, ddof=1))], target=criteria["rate_target"],
                                       margin=criteria["margin"], alpha=criteria["alpha"])
        labels.append(label[0])
    assert np.mean(np.array(labels) == expected) >= criteria["power"]
