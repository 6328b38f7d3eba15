"""The step schedule: the curvature bound against the exact Hessian, the "auto" offset, its validation."""

import numpy as np
import pytest

from qs3orao import QS3ORAO
from qs3orao.validation import check_semisupervised
from qs3orao.kernels import gaussian_kernel
from qs3orao.objective import ordinal_risk_hessian
from qs3orao.schedule import auto_step_offset, curvature_bound, resolve_step_offset

from .problems import ordinal_problem


@pytest.mark.parametrize("tradeoff", [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [0.2, 0.9, 0.4]])
@pytest.mark.parametrize("gamma", [0.1, 3.0, 1e3])
def test_curvature_bound_holds_for_full_and_sampled_risks(tradeoff, gamma):
    """The largest eigenvalue of H K (the risk's curvature in the RKHS) never exceeds the bound."""
    rng = np.random.default_rng(0)
    bound = curvature_bound(tradeoff)
    for n, n_labeled in [(60, 25), (7, 4)]:  # the full risk, and a batch of one row per source and split
        X, y, _ = ordinal_problem(n=n, n_labeled=n_labeled, k=4, seed=int(rng.integers(100)))
        y[:4] = np.arange(4)
        _, codes, _, weights = check_semisupervised(X, y, tradeoff=tradeoff)
        H = ordinal_risk_hessian(codes, weights)
        curvature = np.max(np.linalg.eigvals(H @ gaussian_kernel(X, gamma=gamma)).real)
        assert curvature <= bound * (1 + 1e-12)


def test_curvature_bound_is_attained_by_far_apart_pairs():
    """Two rows with k = 0 between them: a single pair's curvature is exactly 4, the bound's per-pair value."""
    X = np.array([[0.0], [100.0]])
    codes = np.array([0, 1])
    H = ordinal_risk_hessian(codes, np.array([1.0]))
    curvature = np.max(np.linalg.eigvalsh(H @ gaussian_kernel(X, gamma=1.0)))
    assert curvature == pytest.approx(curvature_bound([1.0]))


@pytest.mark.parametrize("theta, lam", [(30.0, 0.05), (1.5e4, 1e-4), (1.5, 1.0), (0.1, 1.0), (3.0, 0.5)])
def test_auto_offset_is_the_smallest_contracting_one(theta, lam):
    tradeoff = [0.5, 0.3]
    stiffness = lam + curvature_bound(tradeoff)
    t0 = auto_step_offset(theta, lam, tradeoff)
    assert theta / (1 + t0) * stiffness <= 1
    assert t0 == 0 or theta / t0 * stiffness > 1


def test_estimator_records_the_auto_offset():
    X, y, _ = ordinal_problem()
    model = QS3ORAO(n_iter=5, lam=0.05, tradeoff=0.5, step_offset="auto", random_state=0).fit(X, y)
    assert model.step_offset_ == auto_step_offset(30.0, 0.05, [0.5, 0.5, 0.5]) == 181


@pytest.mark.parametrize("value, error", [("fast", ValueError), (-1.0, ValueError), (np.inf, ValueError),
                                          (True, TypeError), (None, TypeError), ([1], TypeError)])
def test_bad_step_offset_is_rejected(value, error):
    with pytest.raises(error, match="step_offset"):
        resolve_step_offset(value, theta=1.0, lam=1.0, tradeoff=[0.5])
    X, y, _ = ordinal_problem()
    with pytest.raises(error, match="step_offset"):
        QS3ORAO(n_iter=2, step_offset=value).fit(X, y)
