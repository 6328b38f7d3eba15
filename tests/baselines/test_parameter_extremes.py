"""The estimators' parameters at their extremes: huge step offsets and thetas end, parameters that fail every
fit are refused before the data is read, the linear floor solves unscaled features."""


import numpy as np
import pytest

from baselines.linear_floor import LinearFloor
from baselines.registry import make_method
from qs3orao import QS3ORAO
from qs3orao.metrics import binary_auc
from qs3orao.schedule import auto_step_offset

RNG = np.random.default_rng(21)


def _ordinal(n=200, unlabeled_from=100, scale=1.0):
    X = RNG.uniform(size=(n, 3))
    y = np.digitize(X.sum(axis=1), [1.0, 1.5, 2.0])
    y[unlabeled_from:] = -1
    return X * scale, y

# --- hang and huge numbers --------------------------------------------------------------------------

@pytest.mark.parametrize("theta", [3e21, 1e300])
def test_auto_step_offset_returns_for_huge_theta(theta, deadline):
    with deadline(10):
        offset = auto_step_offset(theta, 1.0, [0.5, 0.5, 0.5])  # QS3ORAO's default lam, four classes
    stiffness = 1.0 + 6.0
    assert theta / (1.0 + offset) * stiffness <= 1.0  # the defining inequality holds exactly


def test_qs3orao_with_auto_offset_and_theta_1e300_fits(deadline):
    X, y = _ordinal()
    with deadline(20):
        model = QS3ORAO(n_iter=20, step_offset="auto", theta=1e300, random_state=0).fit(X, y)
    assert np.isfinite(model.step_offset_) and model.step_offset_ > 1e300


def test_auto_offset_whose_product_overflows_is_a_clear_error():
    with pytest.raises(ValueError, match="theta.*overflows"):
        auto_step_offset(1e308, 0.1, [0.5])


def test_step_offset_as_a_huge_python_int():
    X, y = _ordinal()
    model = QS3ORAO(n_iter=20, step_offset=10**30, random_state=0).fit(X, y)
    assert model.step_offset_ == float(10**30)
    with pytest.raises(ValueError, match="step_offset.*does not fit in a float"):
        QS3ORAO(step_offset=10**400).fit(X, y)


# --- parameters that fail every fit are refused by the data-free checks ------------------------------

@pytest.mark.parametrize("method, params, complaint", [
    ("qs3orao", {"step_offset": "Auto"}, "step_offset"),
    ("qs3orao", {"step_offset": -3}, "step_offset"),
    ("qs3orao", {"step_offset": float("nan")}, "step_offset"),
    ("qs3orao", {"tradeoff": 1.5}, "tradeoff values must lie in"),
    ("qs3orao", {"random_state": "abc"}, "random_state"),
    ("qs3orao", {"classes": [[0, 1]]}, "classes"),
    ("qs3orao", {"classes": [1]}, "at least two"),
    ("m-pnu-auc", {"pnu_mix": 5}, "pnu_mix values must lie in"),
    ("m-pnu-auc", {"random_state": "abc"}, "random_state"),
    ("m-samult", {"tradeoff": 1.5}, "tradeoff values must lie in"),
    ("qs3orao-exact", {"tradeoff": 1.5}, "tradeoff values must lie in"),
    ("qs3orao-exact", {"classes": [2, 1]}, "classes"),
    ("qs3orao-converged", {"tradeoff": 1.5}, "tradeoff values must lie in"),
    ("rff-auc", {"random_state": "abc"}, "random_state"),
    ("nystrom-auc", {"tradeoff": -0.5}, "tradeoff values must lie in"),
    ("svorex", {"classes": [2, 1]}, "classes"),
    ("linear-floor", {"alpha": -1.0}, "alpha must be > 0"),
])
def test_check_params_refuses_what_every_fit_would_refuse(method, params, complaint):
    with pytest.raises((TypeError, ValueError), match=complaint):
        make_method(method, **params)._check_params()


# --- the linear floor on unscaled features -----------------------------------------------------------

def test_linear_floor_on_features_of_size_1e20_solves_the_same_problem():
    X, y = _ordinal(300, 150)
    scale = 2.0**67  # about 1.5e20; a power of two, so X * scale is exact
    big = LinearFloor(alpha=1.0).fit(X * scale, y)
    # The independent route: the same problem on unit-scale features, with the penalty divided by scale^2.
    small = LinearFloor(alpha=1.0 / scale**2).fit(X, y)
    np.testing.assert_allclose(big.coef_ * scale, small.coef_, rtol=1e-9)
    np.testing.assert_allclose(big.thresholds_, small.thresholds_, rtol=1e-9)
    truth = np.digitize(X[150:].sum(axis=1), [1.0, 1.5, 2.0])
    assert binary_auc(truth > 1, big.decision_function(X[150:] * scale)) > 0.9
    assert np.unique(big.predict(X[150:] * scale)).size > 1


def test_linear_floor_on_unit_features_is_unchanged():
    X, y = _ordinal(300, 150)
    from mord import LogisticAT
    labeled = y != -1
    reference = LogisticAT(alpha=1.0, max_iter=1000).fit(X[labeled], y[labeled])
    np.testing.assert_array_equal(LinearFloor(alpha=1.0).fit(X, y).coef_, reference.coef_)
