"""ConvergedQS3ORAO: the iteration count set by the stated convergence criterion (issue 19)."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from baselines.converged import ConvergedQS3ORAO, relative_change
from baselines.registry import get_method
from qs3orao import QS3ORAO
from qs3orao.objective import ordinal_risk
from qs3orao.validation import check_semisupervised


def _problem(n=300, n_labeled=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.digitize(X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=n), [0.5, 0.9, 1.3])
    y[n_labeled:] = -1
    return X, y


PARAMS = dict(gamma=2.0, lam=0.1, batch_size=8, n_components=4, random_state=0)


def test_stops_at_the_first_doubling_that_moves_the_risk_less_than_tol():
    X, y = _problem()
    model = ConvergedQS3ORAO(n_iter=25, tol=0.01, max_iter=12800, **PARAMS).fit(X, y)
    assert model.converged_ and model.history_[-1][2] <= 0.01 and len(model.history_) >= 2
    assert all(change > 0.01 for *_, change in model.history_[:-1])
    _, codes, _, weights = check_semisupervised(X, y, tradeoff=0.5)
    assert model.history_[-1][1] == ordinal_risk(model.train_scores_, codes, weights)[0]
    assert model.n_iter_ == 25 * 2 ** len(model.history_) == model.history_[-1][0]
    # the kept model is the plain fit of that many iterations, bit for bit
    plain = QS3ORAO(n_iter=model.n_iter_, step_offset="auto", **PARAMS).fit(X, y)
    np.testing.assert_array_equal(model.train_scores_, plain.train_scores_)
    np.testing.assert_array_equal(model.decision_function(X[:7]), plain.decision_function(X[:7]))
    np.testing.assert_array_equal(model.thresholds_, plain.thresholds_)


def test_a_tighter_tolerance_needs_more_iterations():
    X, y = _problem()
    loose = ConvergedQS3ORAO(n_iter=25, tol=0.05, max_iter=25600, **PARAMS).fit(X, y)
    tight = ConvergedQS3ORAO(n_iter=25, tol=0.002, max_iter=25600, **PARAMS).fit(X, y)
    assert tight.n_iter_ > loose.n_iter_


def test_reaching_max_iter_unconverged_warns_and_says_so():
    X, y = _problem()
    with pytest.warns(ConvergenceWarning, match="risk still moved"):
        model = ConvergedQS3ORAO(n_iter=50, tol=1e-9, max_iter=200, **PARAMS).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 200 and len(model.history_) == 2


def test_bad_settings_are_refused_and_the_method_is_registered():
    X, y = _problem()
    with pytest.raises(ValueError, match="max_iter must be at least n_iter"):
        ConvergedQS3ORAO(n_iter=400, max_iter=200).fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        ConvergedQS3ORAO(tol=0).fit(X, y)
    assert get_method("qs3orao-converged").estimator is ConvergedQS3ORAO
    assert ConvergedQS3ORAO().step_offset == "auto"


def test_relative_change():
    assert relative_change(1.0, 1.0) == 0.0
    assert relative_change(0.9, 1.0) == pytest.approx(0.1)
    assert relative_change(1.0, 0.0) == np.inf and relative_change(0.0, 0.0) == 0.0


def test_every_qs3orao_parameter_is_a_parameter_of_the_converged_fit():
    import inspect

    own = set(inspect.signature(ConvergedQS3ORAO.__init__).parameters)
    assert set(inspect.signature(QS3ORAO.__init__).parameters) <= own
    assert ConvergedQS3ORAO(trig_backend="numpy").get_params()["trig_backend"] == "numpy"
