import numpy as np
import pytest
from sklearn.base import clone

from qs3orao import QS3ORAO, exact_solution, ordinal_auc

from .problems import ordinal_problem


@pytest.fixture(scope="module")
def problem():
    return ordinal_problem(n=300, n_labeled=100, k=4)


@pytest.fixture(scope="module")
def fitted(problem):
    X, y, _ = problem
    return QS3ORAO(n_iter=150, n_components=8, gamma=2.0, random_state=7).fit(X, y)


def test_same_seed_gives_bit_identical_fits(problem, fitted):
    X, y, _ = problem
    again = clone(fitted).fit(X, y)
    np.testing.assert_array_equal(again.coef_, fitted.coef_)
    np.testing.assert_array_equal(again.decision_function(X), fitted.decision_function(X))
    np.testing.assert_array_equal(again.thresholds_, fitted.thresholds_)
    other = clone(fitted).set_params(random_state=8).fit(X, y)
    assert not np.array_equal(other.coef_, fitted.coef_)


def test_decision_function_reproduces_the_training_scores(problem, fitted):
    X, _, _ = problem
    np.testing.assert_allclose(fitted.decision_function(X), fitted.train_scores_, atol=1e-12)


@pytest.mark.parametrize("storage", ["memory", "regenerate"])
def test_block_storage_gives_the_same_function(problem, fitted, storage):
    X, y, _ = problem
    model = clone(fitted).set_params(block_storage=storage).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X), fitted.decision_function(X), atol=1e-12)


def test_fitted_attributes_and_predictions(problem, fitted):
    X, y, y_true = problem
    assert fitted.classes_.tolist() == [0, 1, 2, 3]
    assert fitted.thresholds_.shape == (3,) and np.all(np.diff(fitted.thresholds_) > 0)
    assert fitted.coef_.shape == (150, 16) and fitted.n_iter_ == 150
    assert set(np.unique(fitted.predict(X))) <= {0, 1, 2, 3}
    assert fitted.score(X, y_true) == pytest.approx(ordinal_auc(y_true, fitted.decision_function(X)))
    assert fitted.score(X, y) == pytest.approx(ordinal_auc(y[y >= 0], fitted.train_scores_[y >= 0]))
    assert fitted.score(X, y_true) > 0.8


def test_labels_need_not_be_zero_based(problem):
    X, y, _ = problem
    shifted = np.where(y >= 0, 10 * y + 3, -1)
    a = QS3ORAO(n_iter=20, n_components=4, random_state=0).fit(X, y)
    b = QS3ORAO(n_iter=20, n_components=4, random_state=0).fit(X, shifted)
    assert b.classes_.tolist() == [3, 13, 23, 33]
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(b.predict(X), np.asarray([3, 13, 23, 33])[a.predict(X)])


def test_supervised_fit_needs_no_unlabeled_rows(problem):
    X, y, _ = problem
    labeled = y >= 0
    model = QS3ORAO(n_iter=20, n_components=4, tradeoff=1.0, random_state=0).fit(X[labeled], y[labeled])
    assert model.thresholds_.shape == (3,)


def test_verbose_progress_goes_to_stderr_only_when_asked(problem, capsys):
    X, y, _ = problem
    QS3ORAO(n_iter=5, n_components=2, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
    QS3ORAO(n_iter=5, n_components=2, random_state=0, verbose=True).fit(X, y)
    assert "it/s" in capsys.readouterr().err


@pytest.mark.parametrize("make_input, params, message", [
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y), {}, "NaN or infinity"),
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.inf, X), y), {}, "NaN or infinity"),
    (lambda X, y: (X, y[:-1]), {}, "mismatched lengths"),
    (lambda X, y: (X, np.where(y >= 0, 1, -1)), {}, "at least two ordinal classes"),
    (lambda X, y: (X, y), {"classes": [0, 1, 2, 3, 4]}, "split 3"),
    (lambda X, y: (X[y >= 0], y[y >= 0]), {"tradeoff": 0.5}, "no unlabeled rows"),
    (lambda X, y: (X, y + 0.5 * (y >= 0)), {}, "integer"),
    (lambda X, y: (X, y), {"lam": 0.0}, "lam must be > 0"),
    (lambda X, y: (X, y), {"lam": -1.0}, "lam must be > 0"),
    (lambda X, y: (X, y), {"gamma": 0}, "gamma must be > 0"),
    (lambda X, y: (X, y), {"n_iter": 0}, "n_iter must be > 0"),
    (lambda X, y: (X, y), {"tradeoff": 1.5}, r"tradeoff values must lie in \[0, 1\]"),
    (lambda X, y: (X, y), {"tradeoff": [0.5, -0.1, 0.5]}, r"tradeoff values must lie in \[0, 1\]"),
    (lambda X, y: (X, y), {"tradeoff": [0.5, 0.5]}, "one per split"),
    (lambda X, y: (X, y), {"threshold_loss": "cubic"}, "threshold_loss"),
])
def test_bad_input_raises_a_clear_error(problem, make_input, params, message):
    X, y, _ = problem
    X_bad, y_bad = make_input(X, y)
    with pytest.raises(ValueError, match=message):
        QS3ORAO(**{"n_iter": 2, "n_components": 2, **params}).fit(X_bad, y_bad)


def test_wrong_types_raise_type_errors(problem):
    X, y, _ = problem
    with pytest.raises(TypeError, match="n_iter"):
        QS3ORAO(n_iter=2.5).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        QS3ORAO(n_iter=2, n_components=2, random_state=0).fit(X, y).decision_function(X[:, :2])


def test_matches_the_exact_solution_on_a_small_problem():
    X, y, y_true = ordinal_problem(n=600, n_labeled=150, d=3, k=4, seed=4)
    params = dict(gamma=2.0, lam=0.25, tradeoff=0.5)
    exact = exact_solution(X, y, **params)
    model = QS3ORAO(n_iter=2000, n_components=32, random_state=0, **params).fit(X, y)
    unl = y < 0
    auc_exact = ordinal_auc(y_true[unl], exact.train_scores[unl])
    auc_model = ordinal_auc(y_true[unl], model.train_scores_[unl])
    assert abs(auc_model - auc_exact) < 0.01
    gap = np.mean((model.train_scores_ - exact.train_scores) ** 2) / np.mean(exact.train_scores ** 2)
    assert gap < 0.01


@pytest.mark.parametrize("max_memory", [float("nan"), float("inf"), 0, -1, "256MiB", None, np.float64("nan")])
def test_max_memory_must_be_a_finite_positive_number(problem, max_memory):
    X, y, _ = problem
    with pytest.raises(ValueError, match="max_memory must be a finite positive number of bytes") as error:
        QS3ORAO(n_iter=2, n_components=2, max_memory=max_memory).fit(X, y)
    assert "np." not in str(error.value)


@pytest.mark.parametrize("scale", [1e300, 1e160])
def test_features_whose_squared_distances_overflow_are_refused(problem, scale):
    X, y, _ = problem
    with pytest.raises(ValueError, match=r"X holds values up to [0-9.]+e\+[0-9]+: .*overflow.*rescale X"):
        QS3ORAO(n_iter=2, n_components=2, random_state=0).fit(X * scale, y)


@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_features_at_extreme_but_representable_scales_fit_as_rescaled_data(problem, scale):
    X, y, y_true = problem
    scaled = QS3ORAO(n_iter=150, n_components=8, gamma=2.0 / scale**2, random_state=7).fit(X * scale, y)
    unscaled = QS3ORAO(n_iter=150, n_components=8, gamma=2.0, random_state=7).fit(X, y)
    unl = y < 0
    assert abs(ordinal_auc(y_true[unl], scaled.train_scores_[unl])
               - ordinal_auc(y_true[unl], unscaled.train_scores_[unl])) < 0.02


@pytest.mark.parametrize("params, message", [
    ({"lam": np.float64(-3.0)}, "lam must be > 0, got -3.0"),
    ({"gamma": np.float64(0.0)}, "gamma must be > 0, got 0.0"),
    ({"n_jobs": np.int64(-4)}, "n_jobs must be None, -1 .* got -4"),
    ({"max_memory": np.float64(-1.0)}, "max_memory must be .* got -1.0"),
    ({"step_offset": np.float64(-2.0)}, "step_offset"),
    ({"tradeoff": np.array([np.float64(2.0)] * 3)}, "tradeoff"),
    ({"classes": np.array([2, 1, 0])}, "classes"),
])
def test_messages_show_numpy_values_as_plain_numbers(problem, params, message):
    X, y, _ = problem
    with pytest.raises(ValueError, match=message) as error:
        QS3ORAO(n_iter=2, n_components=2, **params).fit(X, y)
    assert "np." not in str(error.value)
