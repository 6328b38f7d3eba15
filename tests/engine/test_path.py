"""One pass over many settings (engine.train_path, QS3ORAO.fit_path) against separate fits."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from qs3orao import QS3ORAO, DivergenceError, engine
from qs3orao.engine import path, plan, train_path

from .problems import make_problem

# Short fits often end far from f* or with a reversed threshold scale; both warn, as they should.
pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

WEIGHTS = [0.0, 0.3, 1.0]


def same_groups():
    """The path and the own compiled fits take the plan's group length (compiled_group_length's differs between
    them: in the path it counts the unlabeled rows of every split some setting weighs).

    A divergence is caught at a step's sampled rows or at a group's end, so the
    same error (iteration and scores) needs the same groups.
    """
    return mock.patch.object(plan, "compiled_group_length", side_effect=lambda group, **_: group)


@st.composite
def path_problems(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(2 * k + 2, 80))
    X, codes = make_problem(n, draw(st.integers(1, 3)), k, draw(st.integers(2 * k, n - 1)), draw(st.integers(0, 99)))
    y = codes.copy()
    weights = st.one_of(st.sampled_from(WEIGHTS), st.lists(st.sampled_from(WEIGHTS), min_size=k - 1, max_size=k - 1))
    grid = draw(st.lists(st.fixed_dictionaries({"lam": st.sampled_from([0.125, 1.0, 8.0]), "tradeoff": weights}),
                         min_size=1, max_size=6))
    base = dict(n_iter=draw(st.integers(1, 25)), batch_size=draw(st.integers(1, 3)),
                n_components=draw(st.integers(1, 5)), gamma=draw(st.sampled_from([0.5, 2.0])),
                step_offset=draw(st.sampled_from([0.0, 3.0, "auto"])), random_state=draw(st.integers(0, 2**31)),
                block_storage=draw(st.sampled_from(["memory", "regenerate"])), n_jobs=draw(st.sampled_from([1, 2])),
                step_backend=draw(st.sampled_from(["numpy", "numba"])))
    return X, y, grid, base


def assert_same_fit(path_fit, own_fit, X):
    scale = np.abs(own_fit.train_scores_).max() + 1e-300
    np.testing.assert_allclose(path_fit.train_scores_, own_fit.train_scores_, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(path_fit.decision_function(X), own_fit.decision_function(X), rtol=0, atol=1e-11 * scale)
    assert (path_fit.theta_, path_fit.step_offset_, path_fit.seed_) == (own_fit.theta_, own_fit.step_offset_,
                                                                        own_fit.seed_)


@pytest.mark.slow
@pytest.mark.requires_numba
@given(problem=path_problems(), dense=st.booleans(), group=st.integers(1, 9))
@settings(max_examples=40, deadline=None)
def test_fit_path_equals_separate_fits(problem, dense, group):
    """Every setting of one pass is its own fit to rounding, under either group plan and any weighed splits."""
    X, y, grid, base = problem
    estimator = QS3ORAO(**base)
    with mock.patch.object(plan, "group_plan", return_value=(dense, group)), same_groups():
        fits = estimator.fit_path(X, y, grid)
    for setting, path_fit in zip(grid, fits):
        own = clone(estimator).set_params(**setting)
        try:
            with same_groups():
                own.fit(X, y)
        except DivergenceError as error:
            assert isinstance(path_fit, DivergenceError) and str(path_fit) == str(error)
            continue
        assert_same_fit(path_fit, own, X)
        assert path_fit.get_params() == own.get_params()


def test_path_models_own_their_parameters_as_clones_do():
    """fit_path builds each model as clone(self).set_params(**setting) does: equal parameters, none of them
    the estimator's object or another model's (a list trade-off changed on one model leaves the rest alone)."""
    X, y = make_problem(60, 2, 3, 30, seed=4)
    estimator = QS3ORAO(n_iter=5, tradeoff=[0.5, 0.25], random_state=0)
    fits = estimator.fit_path(X, y, [dict(lam=0.5), dict(lam=2.0)])
    for setting, fit in zip([dict(lam=0.5), dict(lam=2.0)], fits):
        assert fit.get_params() == clone(estimator).set_params(**setting).get_params()
    assert fits[0].tradeoff is not estimator.tradeoff and fits[0].tradeoff is not fits[1].tradeoff


def test_a_path_whose_every_setting_diverges_returns_the_errors_alone():
    X, y = make_problem(300, 2, 4, 100, seed=2)
    fits = QS3ORAO(n_iter=200, gamma=2.0, random_state=3).fit_path(X, y, [dict(lam=1e-3), dict(lam=1e-3, tradeoff=0.5)])
    assert all(isinstance(fit, DivergenceError) for fit in fits)


@pytest.mark.parametrize("step_backend", ["numpy", pytest.param("numba", marks=pytest.mark.requires_numba)])
def test_a_diverging_setting_is_reported_alone_and_leaves_the_others_unchanged(step_backend):
    X, y = make_problem(300, 2, 4, 100, seed=2)
    estimator = QS3ORAO(n_iter=200, gamma=2.0, random_state=3, step_backend=step_backend)  # the paper's schedule blows up at lam = 1e-3
    grid = [dict(lam=1.0), dict(lam=1e-3), dict(lam=0.125, tradeoff=1.0)]
    with same_groups():
        fits = estimator.fit_path(X, y, grid)
    with pytest.raises(DivergenceError) as raised, same_groups():
        clone(estimator).set_params(lam=1e-3).fit(X, y)
    assert isinstance(fits[1], DivergenceError) and str(fits[1]) == str(raised.value)
    for i in (0, 2):
        own = clone(estimator).set_params(**grid[i]).fit(X, y)
        assert_same_fit(fits[i], own, X)
        assert np.isfinite(fits[i].train_scores_).all()


def test_settings_with_and_without_unlabeled_weights_share_one_stream_each_its_own_fit():
    """tradeoff = 1 weighs no unlabeled rows; its own fit draws them all the same, so the pass has one stream."""
    X, y = make_problem(200, 2, 3, 60, seed=4)
    estimator = QS3ORAO(n_iter=30, gamma=1.0, random_state=5, step_offset="auto")
    grid = [dict(tradeoff=1.0), dict(tradeoff=0.0), dict(tradeoff=[1.0, 0.4]), dict(tradeoff=1.0, lam=0.5)]
    for setting, path_fit in zip(grid, estimator.fit_path(X, y, grid)):
        assert_same_fit(path_fit, clone(estimator).set_params(**setting).fit(X, y), X)


def test_the_seed_is_resolved_once_for_all_settings():
    X, y = make_problem(120, 2, 3, 40, seed=1)
    fits = QS3ORAO(n_iter=10, random_state=None).fit_path(X, y, [dict(lam=1.0), dict(lam=2.0)])
    assert fits[0].seed_ == fits[1].seed_
    again = QS3ORAO(n_iter=10, lam=2.0, random_state=fits[1].seed_).fit(X, y)
    assert_same_fit(fits[1], again, X)


@pytest.mark.parametrize("grid, message", [([], "at least one"), ([dict(gamma=2.0)], "may vary only"),
                                           ([dict(lam=-1.0)], "lam"), ([dict(tradeoff=[0.5, 0.5, 0.5])], "tradeoff")])
def test_fit_path_rejects_bad_settings(grid, message):
    X, y = make_problem(60, 2, 3, 20, seed=0)
    with pytest.raises(ValueError, match=message):
        QS3ORAO(n_iter=5).fit_path(X, y, grid)


def test_fit_path_needs_unlabeled_rows_for_a_weight_below_one():
    X, y = make_problem(60, 2, 3, 60, seed=0)
    with pytest.raises(ValueError, match="no unlabeled rows"):
        QS3ORAO(n_iter=5).fit_path(X, y, [dict(tradeoff=1.0), dict(tradeoff=0.5)])


def test_train_path_checks_one_entry_per_setting_and_the_coefficient_memory():
    X, codes = make_problem(60, 2, 3, 20, seed=0)
    common = dict(n_iter=10, batch_size=2, n_components=4, gamma=1.0, seed=0)
    with pytest.raises(ValueError, match="one entry per setting"):
        train_path(X, codes, np.full((2, 2), 0.5), lams=[1.0], thetas=[1.5, 1.5], step_offsets=[0, 0], **common)
    with pytest.raises(ValueError, match="for 1000 settings"):
        train_path(X, codes, np.full((1000, 2), 0.5), lams=np.ones(1000), thetas=np.ones(1000),
                   step_offsets=np.zeros(1000), **common, max_memory=2**19)


@pytest.mark.slow
@pytest.mark.parametrize("step_backend", ["numpy", pytest.param("numba", marks=pytest.mark.requires_numba)])
def test_float32_features_give_each_setting_its_own_float32_fit(step_backend):
    X, y = make_problem(400, 3, 4, 120, seed=6)
    estimator = QS3ORAO(n_iter=60, gamma=2.0, dtype="float32", random_state=1, step_offset="auto",
                        step_backend=step_backend)
    grid = [dict(lam=0.25, tradeoff=0.0), dict(lam=2.0, tradeoff=1.0)]
    for setting, path_fit in zip(grid, estimator.fit_path(X, y, grid)):
        own = clone(estimator).set_params(**setting).fit(X, y)
        # float32 features: the products round at ~1e-7 of the scale, in a different order in the path
        np.testing.assert_allclose(path_fit.train_scores_, own.train_scores_, rtol=0,
                                   atol=1e-5 * np.abs(own.train_scores_).max())


def test_settings_beyond_the_memory_budget_take_several_passes_with_the_same_results():
    X, y = make_problem(200, 2, 3, 60, seed=7)
    estimator = QS3ORAO(n_iter=20, n_components=4, random_state=2, step_offset="auto")
    grid = [dict(lam=lam) for lam in (0.25, 0.5, 1.0, 2.0, 4.0)]
    one_setting = 20 * 2 * 4 * 8
    small = clone(estimator).set_params(max_memory=5 * one_setting)  # two settings per pass, all five within it
    with mock.patch.object(engine, "train_path", wraps=engine.train_path) as spy, \
            mock.patch("qs3orao.estimator.train_path", new=spy):
        fits = small.fit_path(X, y, grid)
    assert [len(call.kwargs["lams"]) for call in spy.call_args_list] == [2, 2, 1]
    for setting, path_fit in zip(grid, fits):
        assert_same_fit(path_fit, clone(small).set_params(**setting).fit(X, y), X)


@pytest.mark.slow
@pytest.mark.parametrize("step_backend", ["numpy", pytest.param("numba", marks=pytest.mark.requires_numba)])
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("group, detected", [(7, "by a step's sampled rows"), (95, "by the all-row check")])
def test_a_setting_diverging_inside_or_at_the_end_of_a_group_is_its_own_fit(dense, group, detected, step_backend):
    """The diverging setting reports its own fit's error (same iteration), the others are their own fits."""
    X, y = make_problem(300, 2, 4, 100, seed=2)
    estimator = QS3ORAO(n_iter=200, gamma=2.0, random_state=3, step_backend=step_backend)
    grid = [dict(lam=1.0), dict(lam=1e-3), dict(lam=0.125, tradeoff=1.0), dict(lam=2e-3, tradeoff=0.0)]
    with mock.patch.object(plan, "group_plan", return_value=(dense, group)), same_groups():
        fits = estimator.fit_path(X, y, grid)
        for setting, path_fit in zip(grid, fits):
            try:
                own = clone(estimator).set_params(**setting).fit(X, y)
            except DivergenceError as error:
                assert isinstance(path_fit, DivergenceError) and str(path_fit) == str(error)
                continue
            assert_same_fit(path_fit, own, X)
    iterations = {fit.iteration for fit in fits if isinstance(fit, DivergenceError)}
    assert len(iterations) == 2 and isinstance(fits[0], QS3ORAO) and isinstance(fits[2], QS3ORAO)
    if detected == "by the all-row check":
        assert fits[1].iteration == 95
    else:
        assert all(i % group for i in iterations)


@pytest.mark.parametrize("step_backend", ["numpy", pytest.param("numba", marks=pytest.mark.requires_numba)])
@pytest.mark.parametrize("dense", [True, False])
def test_a_scale_factor_hitting_zero_inside_a_group_is_folded_as_in_the_own_fit(dense, step_backend):
    """theta lam = i + step_offset zeroes the factor 1 - eta_i lam at step i: everything stored before it is zeroed."""
    X, y = make_problem(200, 2, 3, 60, seed=7)
    estimator = QS3ORAO(n_iter=30, gamma=2.0, random_state=4, step_offset=0.0, step_backend=step_backend)
    grid = [dict(lam=1.0, theta=5.0), dict(lam=0.5, theta=6.0, tradeoff=1.0), dict(lam=0.5), dict(lam=1.0, theta=1.0)]
    with mock.patch.object(plan, "group_plan", return_value=(dense, 8)), same_groups():
        for setting, path_fit in zip(grid, estimator.fit_path(X, y, grid)):
            assert_same_fit(path_fit, clone(estimator).set_params(**setting).fit(X, y), X)


@pytest.mark.parametrize("step_backend, shortened",
                         [("numpy", False), pytest.param("numba", True, marks=pytest.mark.requires_numba)])
def test_the_compiled_path_shortens_its_groups_by_the_rows_the_pass_reads(step_backend, shortened):
    """compiled_group_length decides the compiled path's group length, from the rows the pass reads per step."""
    X, codes = make_problem(120, 2, 3, 60, seed=3)
    tradeoffs = np.array([[1.0, 0.5], [1.0, 1.0], [1.0, 1.0]])  # the second split's unlabeled rows: 2 + 3 rows
    ends = []  # of the groups, as the progress report sees them
    with mock.patch.object(plan, "group_plan", return_value=(True, 9)), \
            mock.patch.object(plan, "compiled_group_length", return_value=4) as rule, \
            mock.patch.object(path, "Progress", side_effect=lambda *a: mock.Mock(update=ends.append)):
        train_path(X, codes, tradeoffs, lams=np.ones(3), thetas=np.ones(3), step_offsets=np.zeros(3), n_iter=10,
                   batch_size=2, n_components=3, gamma=1.0, seed=0, step_backend=step_backend)
    assert ends == ([4, 8, 10] if shortened else [9, 10])
    if shortened:
        assert rule.call_args.kwargs["rows_per_step"] == 2 * (2 + 3)


@pytest.mark.requires_numba
def test_the_compiled_path_in_its_own_groups_equals_the_own_compiled_fits():
    """Without aligning the groups (the path's shortened by the rows it reads), every setting is its own fit."""
    X, y = make_problem(600, 3, 4, 150, seed=5)
    estimator = QS3ORAO(n_iter=120, n_components=3, gamma=1.0, random_state=6, step_offset="auto",
                        step_backend="numba")
    grid = [dict(lam=lam, tradeoff=t) for lam in (0.25, 2.0) for t in (0.0, 0.6, 1.0)]
    with mock.patch.object(plan, "compiled_group_length", wraps=plan.compiled_group_length) as rule:
        fits = estimator.fit_path(X, y, grid)
    assert rule.call_args.kwargs["rows_per_step"] == 16 * 3 * 3  # 3 splits' rows of each kind, batch 16
    for setting, path_fit in zip(grid, fits):
        assert_same_fit(path_fit, clone(estimator).set_params(**setting).fit(X, y), X)


def test_fit_path_refuses_models_beyond_the_memory_budget_before_any_work():
    X, y = make_problem(60, 2, 3, 20, seed=0)
    grid = [dict(lam=2.0 ** k) for k in range(20)]
    one_setting = 50 * 2 * 4 * 8
    estimator = QS3ORAO(n_iter=50, n_components=4, max_memory=10 * one_setting)
    with mock.patch("qs3orao.estimator.train_path") as spy, \
            pytest.raises(ValueError, match=r"20 settings.* 0\.061 MiB .*max_memory=0\.0305 MiB"):
        estimator.fit_path(X, y, grid)
    assert not spy.called


@pytest.mark.slow
def test_fit_path_returns_models_within_the_memory_budget():
    X, y = make_problem(200, 2, 3, 60, seed=7)
    grid = [dict(lam=lam) for lam in (0.25, 0.5, 1.0, 2.0, 4.0)]
    n_iter, m = 4000, 8
    one_setting = n_iter * 2 * m * 8
    # Two settings per pass, each pass with room for its frequency blocks (n_iter x m x 2 floats) beside them:
    # three passes would return three copies of the blocks.
    max_memory = int(5.9 * one_setting)
    fits = QS3ORAO(n_iter=n_iter, n_components=m, random_state=0, max_memory=max_memory).fit_path(X, y, grid)
    arrays = {id(a): a.nbytes for fit in fits for a in (fit.coef_, fit._model.blocks) if a is not None}
    assert sum(arrays.values()) <= max_memory


def test_fit_path_says_a_single_dict_is_not_a_list_of_settings():
    X, y = make_problem(60, 2, 3, 20, seed=0)
    with pytest.raises(TypeError, match=r"settings must be a list of dicts.*a single dict.*\[\{'lam': 0.5\}\]"):
        QS3ORAO(n_iter=5).fit_path(X, y, {"lam": 0.5})
