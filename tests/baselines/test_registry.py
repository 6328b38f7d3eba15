"""The registry and the cross-validated search of the paper's protocol."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from baselines import MSAMULT
from baselines.model_selection import cross_validate_params, split_aucs
from baselines.registry import (METHODS, PAPER_GRID, PNU_MIX_GRID, TRADEOFF_GRID, Method, TuningGrid, make_method,
                                register, tuning_grid, unregister)
from qs3orao import QS3ORAO
from qs3orao.metrics import ordinal_auc


def test_methods_and_grids():
    assert set(METHODS) == {"qs3orao", "m-pnu-auc", "m-samult", "svorex", "rff-auc", "nystrom-auc", "linear-floor",
                            "qs3orao-exact", "qs3orao-converged", "gradient-boosting", "nearest-neighbour"}
    assert {n for n, m in METHODS.items() if m.role == "paper"} == {"qs3orao", "m-pnu-auc", "m-samult", "svorex"}
    for reference in ("linear-floor", "gradient-boosting", "nearest-neighbour"):
        assert METHODS[reference].role == "reference" and METHODS[reference].labeled_only
    assert isinstance(make_method("qs3orao", n_iter=3), QS3ORAO)
    assert PAPER_GRID[0] == 2.0**-3 and PAPER_GRID[-1] == 2.0**3 and len(PAPER_GRID) == 7
    assert TRADEOFF_GRID == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert len(PNU_MIX_GRID) == 21
    assert set(tuning_grid("svorex").grid) == {"gamma", "C"}
    assert tuning_grid("m-pnu-auc").split_param == "pnu_mix" and tuning_grid("m-pnu-auc").separable
    assert tuning_grid("m-samult").separable and not tuning_grid("qs3orao").separable
    with pytest.raises(ValueError, match="unknown method"):
        make_method("svm")


def test_a_role_outside_the_list_is_refused():
    with pytest.raises(ValueError, match="role must be one of"):
        Method("x", MSAMULT, TuningGrid(), "x", "x", role="baseline")


def test_registering_checks_the_entry():
    entry = Method("samult-lite", MSAMULT, TuningGrid(), "lite", "M-SAMULT at lam = 4", params={"lam": 4.0})
    register(entry)
    try:
        assert make_method("samult-lite").lam == 4.0 and make_method("samult-lite", lam=1.0).lam == 1.0
        with pytest.raises(ValueError, match="already registered"):
            register(entry)
    finally:
        unregister("samult-lite")
    with pytest.raises(ValueError, match="lamda"):
        register(Method("typo", MSAMULT, TuningGrid(), "typo", "", params={"lamda": 1.0}))
    with pytest.raises(TypeError, match="Method"):
        register(MSAMULT)
    with pytest.raises(ValueError, match="n_landmark"):
        register(Method("typo", MSAMULT, TuningGrid(), "typo", "", size_param="n_landmark"))

    class Ranker(BaseEstimator):  # scikit-learn style, but without predict_from_scores
        def decision_function(self, X):
            return X[:, 0]

    with pytest.raises(TypeError, match="has no predict_from_scores.*OrdinalEstimator"):
        register(Method("typo", Ranker, TuningGrid(), "typo", ""))
    assert "typo" not in METHODS and "samult-lite" not in METHODS


def test_size_param_names_each_feature_map_knob():
    sized = {name: m.size_param for name, m in METHODS.items() if m.size_param is not None}
    assert sized == {"rff-auc": "n_random_features", "nystrom-auc": "n_landmarks"}
    for name, param in sized.items():
        assert make_method(name, **{param: 24}).get_params()[param] == 24


def test_split_aucs_average_to_the_ordinal_auc():
    rng = np.random.default_rng(0)
    y = rng.integers(4, size=80)
    scores = y + rng.normal(size=80)
    assert np.mean(split_aucs(y, scores, np.arange(4))) == pytest.approx(ordinal_auc(y, scores))


def small_grid(split_param, separable):
    return TuningGrid({"gamma": (1.0, 4.0), "lam": (0.1,)}, split_param, (0.0, 0.5, 1.0), 0.5, separable)


def test_separable_search_reads_each_split_from_the_shared_stage(make_problem):
    X, y, _ = make_problem(n=200, n_labeled=90)
    result = cross_validate_params("m-samult", X, y, small_grid("tradeoff", True), n_folds=3)
    best_gamma = result.best_params["gamma"]
    shared = [r for r in result.table if r["gamma"] == best_gamma and np.ndim(r["tradeoff"]) == 0]
    assert len(shared) == 3 and len(result.table) <= 2 + 2 + 1
    final = [r for r in result.table if r["stage"] == "per-split"][0]
    for j in range(2):
        assert final[f"cv_auc_split_{j}"] == pytest.approx(max(r[f"cv_auc_split_{j}"] for r in shared))
    assert result.best_score == max(r["cv_auc"] for r in result.table)


def test_coordinate_search_for_a_shared_function(make_problem):
    X, y, _ = make_problem(n=200, n_labeled=90)
    result = cross_validate_params("rff-auc", X, y, small_grid("tradeoff", False), n_folds=3,
                                   fixed_params={"n_random_features": 40, "random_state": 0})
    assert len(result.best_params["tradeoff"]) == 2
    assert result.best_score == max(r["cv_auc"] for r in result.table)


def test_unlabeled_rows_stay_in_training_and_held_out_rows_leave(make_problem, monkeypatch):
    X, y, _ = make_problem(n=120, n_labeled=60)
    seen = []
    original = MSAMULT.fit

    def spy(self, X_train, y_train):
        seen.append((len(y_train), int(np.sum(y_train == -1))))
        return original(self, X_train, y_train)

    monkeypatch.setattr(MSAMULT, "fit", spy)
    cross_validate_params("m-samult", X, y, TuningGrid({"gamma": (1.0,), "lam": (1.0,)}), n_folds=3)
    assert seen == [(100, 60)] * 3
