"""scikit-learn's estimator checks over every registered method, expected failures listed with their reasons.

The checks fit on fully labeled ``y`` (no ``-1``). In a semi-supervised
setting the methods refuse such data by design (a trade-off weight below one,
or ``pnu_mix != 0``, needs unlabeled rows: an explicit ``ValueError``, tested in
test_validation.py), so every method is checked in its labeled-only setting (``tradeoff=1``,
or ``pnu_mix=0`` for M-PNU-AUC), which runs the same code paths on the labeled rows.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from baselines.registry import METHODS, make_method

LABELED_ONLY = {
    "qs3orao": {"tradeoff": 1.0, "n_iter": 20, "n_components": 4, "random_state": 0},
    "m-pnu-auc": {"pnu_mix": 0.0},
    "m-samult": {"tradeoff": 1.0},
    "svorex": {},
    "rff-auc": {"tradeoff": 1.0, "n_random_features": 20, "random_state": 0},
    "nystrom-auc": {"tradeoff": 1.0, "n_landmarks": 20, "random_state": 0},
    "linear-floor": {},
    "gradient-boosting": {"min_samples_leaf": 2, "max_iter": 20, "random_state": 0},
    "nearest-neighbour": {},
    "qs3orao-exact": {"tradeoff": 1.0},
    "qs3orao-converged": {"tradeoff": 1.0, "n_iter": 20, "max_iter": 40, "tol": 10.0, "n_components": 4,
                          "random_state": 0},
}
BUILT_IN = ("qs3orao", "m-pnu-auc", "m-samult", "svorex", "rff-auc", "nystrom-auc", "linear-floor", "qs3orao-exact",
            "qs3orao-converged", "gradient-boosting", "nearest-neighbour")

ORDINAL_LABELS = ("labels are checked as ordinal integers: an object y is refused with 'y must hold integer "
                  "ordinal labels ..., got dtype object', not with scikit-learn's 'Unknown label type' wording")
def expected_failures(estimator):
    """Check name -> reason, for the checks this estimator is known to fail."""
    return {"check_dtype_object": ORDINAL_LABELS}


def test_every_built_in_method_is_checked():
    assert set(BUILT_IN) <= set(METHODS) and set(LABELED_ONLY) == set(BUILT_IN)


@parametrize_with_checks([make_method(name, **LABELED_ONLY[name]) for name in BUILT_IN],
                         expected_failed_checks=expected_failures, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_fixed_feature_methods_are_not_transformers():
    for name in ("rff-auc", "nystrom-auc"):
        assert not hasattr(make_method(name), "transform")


@pytest.mark.parametrize("name", BUILT_IN)
def test_predict_is_predict_from_scores_of_decision_function(name, make_problem):
    X, _, y = make_problem(n=120, n_classes=4, d=3)
    model = make_method(name, **LABELED_ONLY[name]).fit(X, y)
    scores = model.decision_function(X)
    labels = model.predict(X)
    np.testing.assert_array_equal(model.predict_from_scores(scores), labels)
    # The labels follow the scores given (here the rows reversed), not a new evaluation of the model.
    np.testing.assert_array_equal(model.predict_from_scores(scores[::-1]), labels[::-1])
    for bad in (scores[:, None] if scores.ndim == 1 else scores[:, 0], np.column_stack([scores, scores])):
        with pytest.raises(ValueError, match="scores have the shape"):
            model.predict_from_scores(bad)
