"""Every estimator against hostile or careless input: the clear error, or the fixed result."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn import metrics as skm
from sklearn.exceptions import NotFittedError

from baselines.feature_space import NystromAUC, RFFAUC
from baselines.pnu_auc import MPNUAUC
from baselines.prior import energy_class_prior, split_priors
from baselines.samult import MSAMULT
from baselines.svorex import SVOREX
from qs3orao import QS3ORAO
from qs3orao.engine import memory_plan
from qs3orao.metrics import accuracy, mean_absolute_error
from qs3orao.thresholds import SURROGATES, THRESHOLD_LOSSES, assign_classes, fit_thresholds

ESTIMATORS = {
    "qs3orao": lambda: QS3ORAO(n_iter=20, random_state=0),
    "m-pnu-auc": lambda: MPNUAUC(),
    "m-samult": lambda: MSAMULT(),
    "svorex": lambda: SVOREX(),
    "rff-auc": lambda: RFFAUC(n_random_features=16, random_state=0),
    "nystrom-auc": lambda: NystromAUC(n_landmarks=16, random_state=0),
}


# --- the threshold search refuses non-finite scores (it looped forever) ---------------------------

@pytest.mark.parametrize("loss", THRESHOLD_LOSSES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_thresholds_refuse_non_finite_scores_without_hanging(loss, bad, deadline):
    scores = np.array([0.0, 1.0, bad, 2.0])
    with deadline(10), pytest.raises(ValueError, match="finite.*1 of 4"):
        fit_thresholds(scores, np.array([0, 1, 1, 2]), 3, loss)


# --- one unlabeled marker: exactly -1 ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_negative_labels_other_than_minus_one_are_refused(name, make_problem):
    X, y, _ = make_problem(n=120, n_labeled=60, n_classes=3)
    y[60:70] = -2
    with pytest.raises(ValueError, match=r"negative labels \[-2\].*-1"):
        ESTIMATORS[name]().fit(X, y)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_unsigned_labels_holding_the_wrapped_marker_are_refused(name, dtype, make_problem):
    X, y, _ = make_problem(n=120, n_labeled=60, n_classes=3)
    with pytest.raises(ValueError, match=f"unsigned dtype {np.dtype(dtype)}.*wraps"):
        ESTIMATORS[name]().fit(X, y.astype(dtype))


def test_unsigned_labels_without_the_wrapped_value_are_accepted(make_problem):
    X, y, _ = make_problem(n=120, n_labeled=120, n_classes=3)
    model = QS3ORAO(n_iter=20, tradeoff=1.0, random_state=0).fit(X, y.astype(np.uint8))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])


# --- M-PNU-AUC's class priors: no silent 0.5 --------------------------------------------------------

def test_prior_estimate_survives_features_scaled_by_1e300():
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(2, 1, (300, 2)), rng.normal(-2, 1, (300, 2))
    unl = np.vstack([rng.normal(2, 1, (300, 2)), rng.normal(-2, 1, (700, 2))])
    plain = energy_class_prior(pos, neg, unl)
    assert abs(plain - 0.3) < 0.03
    for factor in (1e300, 1e-300):
        assert energy_class_prior(pos * factor, neg * factor, unl * factor) == pytest.approx(plain, rel=1e-12)


def test_indistinguishable_classes_raise_with_the_estimate_and_why():
    # 1000-dimensional rows, true prior 0.98; the ten negatives are copies of positives, so the
    # labeled classes have a negative estimated energy distance (the estimator used to return 0.5).
    rng = np.random.default_rng(0)
    pos = rng.normal(size=(490, 1000))
    X = np.vstack([pos, pos[:10], rng.normal(size=(500, 1000))])
    codes = np.concatenate([np.ones(490, int), np.zeros(10, int), np.full(500, -1)])
    with pytest.raises(ValueError, match=r"split 0.*490 labeled positives and 10 labeled negatives.*estimated "
                                         r"as -.*indistinguishable.*pass priors"):
        split_priors(X, codes, 2)
    y = codes.copy()
    with pytest.raises(ValueError, match="indistinguishable"):
        MPNUAUC(pnu_mix=0.5).fit(X, y)


# --- memory: the coefficients are counted before anything is allocated ------------------------------

def test_huge_n_iter_is_refused_before_allocating(deadline, make_problem):
    X, y, _ = make_problem(n=60, n_labeled=30, n_classes=3)
    with deadline(20), pytest.raises(ValueError, match=r"n_iter=100000000 .*coefficients.*max_memory"):
        QS3ORAO(n_iter=10**8, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="coefficients"):
        memory_plan(10**8, 32, 3)
    assert memory_plan(10**8, 32, 3, "regenerate", 2 * 10**8 * 64 * 8)[1] is False


# --- predict before fit -------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["predict", "decision_function"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_use_before_fit_raises_not_fitted(name, method):
    with pytest.raises(NotFittedError):
        getattr(ESTIMATORS[name](), method)(np.zeros((3, 3)))


# --- usable class predictions: scale-aware thresholds by default --------------------------------------

def test_default_thresholds_cut_the_scores_into_every_class(make_problem):
    X, y, truth = make_problem(n=600, n_labeled=200, n_classes=5, d=3)
    unlabeled = y == -1
    paper = QS3ORAO(n_iter=300, threshold_loss="hinge", random_state=0).fit(X, y)
    default = QS3ORAO(n_iter=300, random_state=0).fit(X, y)
    scores = default.train_scores_
    # Same scores; the paper's hinge LP (margin 1) puts its thresholds outside them on this scale.
    np.testing.assert_array_equal(paper.train_scores_, scores)
    assert np.unique(paper.predict(X[unlabeled])).size == 1
    assert np.all((default.thresholds_ > scores.min()) & (default.thresholds_ < scores.max()))
    predicted = default.predict(X[unlabeled])
    assert np.unique(predicted).size == 5
    constant = np.full(unlabeled.sum(), np.median(truth[~unlabeled]))
    assert mean_absolute_error(truth[unlabeled], predicted) < 0.5 * mean_absolute_error(truth[unlabeled], constant)


@pytest.mark.parametrize("scale, shift", [(1e-6, 0.0), (1.0, 5.0), (1e6, -3.0)])
def test_ordinal_logistic_thresholds_follow_affine_changes_of_the_scores(scale, shift):
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, 200)
    scores = codes + rng.normal(0, 0.8, 200)
    base = fit_thresholds(scores, codes, 4)
    moved = fit_thresholds(scale * scores + shift, codes, 4)
    np.testing.assert_allclose(moved, scale * base + shift, rtol=1e-7, atol=1e-9 * scale)
    np.testing.assert_array_equal(assign_classes(scale * scores + shift, moved), assign_classes(scores, base))


def test_ordinal_logistic_matches_an_independent_likelihood_fit():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 4, 150)
    scores = 0.01 * (codes + rng.normal(0, 1.0, 150))
    z = (scores - scores.mean()) / scores.std()

    def negative_log_likelihood(params):
        s, cuts = params[0], params[1:]
        total = 0.5 * 1e-4 * s * s
        for j, cut in enumerate(cuts):  # all-threshold: one binary logistic term per threshold and row
            sign = np.where(codes > j, 1.0, -1.0)
            total += np.sum(np.log1p(np.exp(-sign * (s * z - cut))))
        return total

    reference = minimize(negative_log_likelihood, np.array([0.5, -1.0, 0.0, 1.0]), method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000, "maxfev": 20000}).x
    expected = scores.mean() + scores.std() * reference[1:] / reference[0]
    np.testing.assert_allclose(fit_thresholds(scores, codes, 4), expected, rtol=1e-5)


def test_ordinal_logistic_handles_perfectly_ordered_and_constant_scores():
    codes = np.array([0, 0, 1, 1, 2, 2])
    b = fit_thresholds(np.array([0.0, 0.1, 1.0, 1.1, 2.0, 2.1]), codes, 3)
    np.testing.assert_array_equal(assign_classes(np.array([0.0, 0.1, 1.0, 1.1, 2.0, 2.1]), b), codes)
    with pytest.warns(RuntimeWarning, match="no ordinal information"):
        fit_thresholds(np.full(6, 0.3), codes, 3)
    with pytest.warns(RuntimeWarning, match="decrease with the class"):
        reversed_b = fit_thresholds(-np.array([0.0, 0.1, 1.0, 1.1, 2.0, 2.1]), codes, 3)
    assert np.unique(assign_classes(np.linspace(-3, 3, 7), reversed_b)).size == 1


def test_the_papers_surrogates_stay_available(make_problem):
    assert set(SURROGATES) < set(THRESHOLD_LOSSES) and THRESHOLD_LOSSES[0] == "ordinal_logistic"
    X, y, _ = make_problem(n=300, n_labeled=120, n_classes=5, d=3)
    for loss in THRESHOLD_LOSSES:
        assert QS3ORAO(n_iter=30, threshold_loss=loss, random_state=0).fit(X, y).thresholds_.shape == (4,)


def test_label_metrics_agree_with_scikit_learn():
    rng = np.random.default_rng(3)
    truth, predicted = rng.integers(0, 5, 500), rng.integers(0, 5, 500)
    assert mean_absolute_error(truth, predicted) == pytest.approx(skm.mean_absolute_error(truth, predicted))
    assert accuracy(truth, predicted) == pytest.approx(skm.accuracy_score(truth, predicted))
    with pytest.raises(ValueError, match="same length"):
        accuracy(truth, predicted[:-1])


def test_ordinal_logistic_gradient_and_hessian_match_finite_differences():
    from scipy.optimize import approx_fprime, check_grad

    from qs3orao.thresholds import ordinal_logistic_loss

    rng = np.random.default_rng(4)
    codes, z = rng.integers(0, 4, 80), rng.normal(size=80)
    point = rng.normal(size=4)
    assert check_grad(lambda p: ordinal_logistic_loss(p, z, codes, 4)[0],
                      lambda p: ordinal_logistic_loss(p, z, codes, 4)[1], point) < 1e-5
    numeric = np.array([approx_fprime(point, lambda p: ordinal_logistic_loss(p, z, codes, 4)[1][i], 1e-7)
                        for i in range(4)])
    np.testing.assert_allclose(ordinal_logistic_loss(point, z, codes, 4, hessian=True)[2], numeric, atol=1e-4)
