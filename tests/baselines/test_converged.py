"""ConvergedQS3ORAO: the iteration count set by the stated convergence criterion."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from baselines.converged import ConvergedQS3ORAO, relative_change
from baselines.registry import get_method
from qs3orao import QS3ORAO
from qs3orao.engine import train
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
    assert model.n_iter_ == 25 * 2 ** len(model.history_) == model.history_[-1][0] == model.coef_.shape[0]
    # the kept model is the plain fit of that many iterations, up to the rounding of its regrouped steps,
    # and every reading is the plain fit's risk at that count (the doublings of the criterion, refitted)
    plain = QS3ORAO(n_iter=model.n_iter_, step_offset="auto", **PARAMS).fit(X, y)
    np.testing.assert_allclose(model.train_scores_, plain.train_scores_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.decision_function(X[:7]), plain.decision_function(X[:7]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.thresholds_, plain.thresholds_, rtol=0, atol=1e-8)
    for iterations, risk, _ in model.history_:
        refit = QS3ORAO(n_iter=iterations, step_offset="auto", **PARAMS).fit(X, y)
        assert risk == pytest.approx(ordinal_risk(refit.train_scores_, codes, weights)[0], rel=1e-10, abs=0)


@pytest.mark.parametrize("block_storage", ["memory", "regenerate"])
def test_the_run_stops_where_the_criterion_holds_in_the_sparse_plan_too(block_storage):
    # max_memory small enough that the group's rows are sampled rows (the sparse plan), so the readings need
    # the all-row update at the checkpoint; the stopped model's blocks are the first n_iter_ ones.
    from qs3orao.engine import group_plan, memory_plan

    X, y = _problem(n=4000, n_labeled=300)
    params = {**PARAMS, "max_memory": 2**20, "block_storage": block_storage}
    work_bytes, _ = memory_plan(6400, PARAMS["n_components"], X.shape[1], block_storage, 2**20)
    assert not group_plan(X.shape[0], 3 * PARAMS["batch_size"], PARAMS["n_components"], 8, work_bytes)[0]
    model = ConvergedQS3ORAO(n_iter=25, tol=0.02, max_iter=6400, **params).fit(X, y)
    assert model.converged_ and model.n_iter_ < 6400
    plain = QS3ORAO(n_iter=model.n_iter_, step_offset="auto", **params).fit(X, y)
    np.testing.assert_allclose(model.train_scores_, plain.train_scores_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.decision_function(X[:50]), plain.decision_function(X[:50]), rtol=0, atol=1e-10)


def test_the_run_costs_the_final_count_not_the_doublings(monkeypatch):
    import baselines.converged as converged_module
    import qs3orao.engine.steps as engine

    steps = []
    real = engine._group_steps
    monkeypatch.setattr(engine, "_group_steps", lambda *a, **k: steps.append(a[2][0].shape[0]) or real(*a, **k))
    X, y = _problem()
    model = converged_module.ConvergedQS3ORAO(n_iter=25, tol=0.01, max_iter=12800, **PARAMS).fit(X, y)
    assert sum(steps) == model.n_iter_


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


def test_the_unconverged_warning_shows_its_history_as_plain_numbers():
    X, y = _problem()
    with pytest.warns(ConvergenceWarning) as caught:
        ConvergedQS3ORAO(n_iter=50, tol=1e-9, max_iter=200, **PARAMS).fit(X, y)
    message = str(caught[0].message)
    assert "np." not in message and "history (iterations: risk, relative change) 100: " in message


def test_bad_settings_are_refused_and_the_method_is_registered():
    X, y = _problem()
    with pytest.raises(ValueError, match="max_iter must be at least n_iter"):
        ConvergedQS3ORAO(n_iter=400, max_iter=200).fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        ConvergedQS3ORAO(tol=0).fit(X, y)
    assert get_method("qs3orao-converged").estimator is ConvergedQS3ORAO
    with pytest.raises(NotImplementedError, match="one by one"):
        ConvergedQS3ORAO().fit_path(X, y, [{}])
    _, codes, _, weights = check_semisupervised(X, y, tradeoff=0.5)
    engine_params = dict(batch_size=8, n_components=4, gamma=1.0, lam=0.1, theta=15.0, seed=0)
    with pytest.raises(ValueError, match="checkpoints must lie in 1..n_iter=10"):
        train(X, codes, weights, n_iter=10, checkpoints=[5, 20], stop=lambda i, s: False, **engine_params)
    with pytest.raises(ValueError, match="need a stop"):
        train(X, codes, weights, n_iter=10, checkpoints=[5], **engine_params)
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


def test_require_falling_takes_a_small_change_only_once_it_is_falling():
    from baselines.converged import _RiskMonitor

    # relative changes 0.0065, 0.0107, 0.0187, 0.009, 0.005: a slow start, then a settling risk
    risks = [1.0]
    for change in (0.0065, 0.0107, 0.0187, 0.009, 0.005):
        risks.append(risks[-1] / (1 + change))
    stops = {}
    for falling in (False, True):
        monitor = _RiskMonitor(None, None, 0.01, require_falling=falling)
        stops[falling] = next(i for i, risk in enumerate(risks) if monitor.read(i, risk))
    assert stops == {False: 1, True: 4}


def test_require_falling_never_stops_at_the_first_reading_and_keeps_the_plain_fit():
    X, y = _problem()
    first = ConvergedQS3ORAO(n_iter=25, tol=0.5, max_iter=12800, **PARAMS).fit(X, y)
    assert first.converged_ and len(first.history_) == 1
    model = ConvergedQS3ORAO(n_iter=25, tol=0.5, max_iter=12800, require_falling=True, **PARAMS).fit(X, y)
    assert model.converged_ and len(model.history_) >= 2
    (*_, before), (*_, last) = model.history_[-2:]
    assert last <= 0.5 and last < before
    assert model.history_[0] == first.history_[0]  # the same run, read once more
    plain = QS3ORAO(n_iter=model.n_iter_, step_offset="auto", **PARAMS).fit(X, y)
    np.testing.assert_allclose(model.train_scores_, plain.train_scores_, rtol=0, atol=1e-10)


def test_require_falling_unconverged_says_what_it_required():
    X, y = _problem()
    with pytest.warns(ConvergenceWarning, match="or by a change not smaller than the one before"):
        model = ConvergedQS3ORAO(n_iter=50, tol=1e-9, max_iter=200, require_falling=True, **PARAMS).fit(X, y)
    assert not model.converged_
    with pytest.raises(ValueError, match="require_falling must be True or False, got 'yes'"):
        ConvergedQS3ORAO(require_falling="yes").fit(X, y)


def test_its_criterion_params_are_exactly_those_the_plain_estimator_does_not_take():
    # Code that fits the plain QS3ORAO with a converged fit's tuned values drops these keys.
    extra = set(ConvergedQS3ORAO().get_params()) - set(QS3ORAO().get_params())
    assert set(ConvergedQS3ORAO.CRITERION_PARAMS) == extra
    kept = {key: value for key, value in ConvergedQS3ORAO(require_falling=True).get_params().items()
            if key not in ConvergedQS3ORAO.CRITERION_PARAMS}
    assert QS3ORAO(**kept).get_params() == kept
