"""The trigonometric backends: the compiled loops against numpy, and how the backend is chosen."""

from unittest import mock

import numpy as np
import pytest

from qs3orao import QS3ORAO, trig
from qs3orao.engine import RandomFeatureModel, train
from qs3orao.trig import REDUCTION_LIMIT, resolve_trig_backend

from .problems import fit_problem, make_problem

ULP_TOLERANCE = 4e-16


@pytest.mark.requires_numba
def test_numba_is_installed_with_the_test_extra():
    # The test extra pulls in qs3orao[fast], so the numba path is tested, not skipped.
    assert resolve_trig_backend("numba") == "numba"
    assert resolve_trig_backend("auto") == "numba"
    # In float32 numpy's vectorised sin/cos are faster than the loop, which computes in float64.
    assert resolve_trig_backend("auto", np.float32) == "numpy"
    assert resolve_trig_backend("numba", np.float32) == "numba"
    X, y = make_problem(300, 3, 3, 100, seed=0)
    assert QS3ORAO(n_iter=20, random_state=0).fit(X, y).trig_backend_ == "numba"


@pytest.mark.requires_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_sincos_matches_numpy_over_the_whole_range(dtype):
    rng = np.random.default_rng(0)
    quarter_turns = np.arange(-4000, 4001) * (np.pi / 4)
    values = np.concatenate([rng.normal(size=20_000) * s for s in (1e-8, 1.0, 30.0, 1e3, 1e5)]
                            + [quarter_turns, np.nextafter(quarter_turns, np.inf), [0.0, -0.0, REDUCTION_LIMIT,
                                                                                   -REDUCTION_LIMIT]])
    for chunk in (values, np.array([3e6, 1.0, -2.5])):  # the second is beyond the reduction: C library
        proj = chunk.astype(dtype)
        expected_cos, expected_sin = np.cos(proj.astype(np.float64)), np.sin(proj.astype(np.float64))
        sin_out = np.empty_like(proj)
        trig._kernels()[0](proj, sin_out)
        tolerance = ULP_TOLERANCE if dtype == np.float64 else 1e-7
        np.testing.assert_allclose(proj, expected_cos, rtol=0, atol=tolerance)
        np.testing.assert_allclose(sin_out, expected_sin, rtol=0, atol=tolerance)


@pytest.mark.requires_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_accumulate_equals_the_numpy_pass(dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(700, 9)).astype(dtype)
    omega = (rng.normal(size=(96, 9)) * 0.3).astype(dtype)
    cos_coef, sin_coef = rng.normal(size=(2, 96)).astype(dtype)
    start = rng.normal(size=700)
    fused, plain = start.copy(), start.copy()
    trig.accumulate(fused, X, omega, cos_coef, sin_coef, "numba")
    trig.accumulate(plain, X, omega, cos_coef, sin_coef, "numpy")
    bound = np.abs(cos_coef).sum() + np.abs(sin_coef).sum()
    np.testing.assert_allclose(fused, plain, rtol=0, atol=1e-12 * bound if dtype == np.float64 else 1e-5 * bound)
    assert not np.array_equal(fused, start)


@pytest.mark.requires_numba
@pytest.mark.parametrize("scale", [1.0, 1e7])
def test_fused_accumulate_sums_the_features_of_given_projections(scale):
    # Same projections on both sides (at 1e7, beyond the reduction, the C library's sin and cos run);
    # through X the projections themselves differ in their last bits between the two matrix products.
    rng = np.random.default_rng(2)
    proj_t = rng.normal(size=(50, 300)) * scale
    cos_coef, sin_coef = rng.normal(size=(2, 50))
    out = np.zeros(300)
    trig._kernels()[1](proj_t, cos_coef, sin_coef, out)
    expected = np.cos(proj_t).T @ cos_coef + np.sin(proj_t).T @ sin_coef
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-13 * (np.abs(cos_coef).sum() + np.abs(sin_coef).sum()))


def test_features_refuse_buffers_they_cannot_write_in_place():
    X, omega = np.ones((4, 2)), np.ones((3, 2))
    cos_out = np.empty((3, 4)).T
    with pytest.raises(ValueError, match="C-contiguous"):
        trig.features(X, omega, cos_out, np.empty((4, 3)), "numba")


@pytest.mark.requires_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_training_on_either_backend_gives_the_same_fit(dtype):
    # The sparse plan (small budget) exercises both the step features and the all-row accumulation.
    X, _, (fused, scores_fused) = fit_problem(n=3000, d=6, n_iter=60, max_memory=2**16, dtype=dtype,
                                              trig_backend="numba")
    _, _, (plain, scores_plain) = fit_problem(n=3000, d=6, n_iter=60, max_memory=2**16, dtype=dtype,
                                              trig_backend="numpy")
    assert (fused.trig_backend, plain.trig_backend) == ("numba", "numpy")
    tolerance = (1e-12 if dtype == np.float64 else 1e-5) * np.abs(scores_plain).max()
    np.testing.assert_allclose(scores_fused, scores_plain, rtol=0, atol=tolerance)
    np.testing.assert_allclose(fused.decision_function(X), plain.decision_function(X), rtol=0, atol=tolerance)


def test_auto_without_numba_chooses_numpy_and_says_so():
    X, codes = make_problem(300, 3, 3, 100, seed=0)
    y = codes.copy()
    with mock.patch.object(trig, "_kernels", side_effect=ImportError("no numba here")):
        assert resolve_trig_backend("auto") == "numpy"
        model = QS3ORAO(n_iter=20, random_state=0).fit(X, y)
        assert model.trig_backend_ == "numpy"
        with pytest.raises(ImportError, match="trig_backend='numba' needs numba"):
            QS3ORAO(n_iter=20, trig_backend="numba", random_state=0).fit(X, y)
        assert RandomFeatureModel(seed=0, gamma=1.0, n_features=3, coef=np.zeros((1, 4))).trig_backend == "numpy"


@pytest.mark.parametrize("bad", ["fast", None, 1])
def test_unknown_backend_is_refused(bad):
    X, codes = make_problem(100, 2, 3, 40, seed=0)
    with pytest.raises(ValueError, match="trig_backend must be one of"):
        train(X, codes, np.full(2, 0.5), n_iter=2, batch_size=2, n_components=2, gamma=1.0, lam=1.0, theta=1.0,
              seed=0, trig_backend=bad)
