"""The practitioner's references: gradient-boosted trees and the nearest labeled neighbour, on known answers."""

import numpy as np
import pytest

from baselines import GradientBoostingReference, NearestNeighbourReference
from qs3orao.metrics import ordinal_auc


def step_problem(n=600, n_labeled=300, seed=0):
    """Four levels set by steps of the first of three uniform features; rows past ``n_labeled`` unlabeled."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.digitize(X[:, 0], [0.25, 0.5, 0.75])
    y_train = y.copy()
    y_train[n_labeled:] = -1
    return X, y_train, y


@pytest.mark.slow
def test_gradient_boosting_ranks_a_step_function_almost_perfectly():
    X, y_train, y = step_problem()
    model = GradientBoostingReference(random_state=0).fit(X, y_train)
    unlabeled = y_train == -1
    assert ordinal_auc(y[unlabeled], model.decision_function(X[unlabeled])) > 0.99
    assert np.mean(model.predict(X[unlabeled]) == y[unlabeled]) > 0.9


def test_gradient_boosting_learns_from_the_labeled_rows_only():
    X, y_train, _ = step_problem()
    scrambled = X.copy()
    scrambled[y_train == -1] = np.random.default_rng(1).uniform(size=scrambled[y_train == -1].shape)
    a = GradientBoostingReference(random_state=0).fit(X, y_train)
    b = GradientBoostingReference(random_state=0).fit(scrambled, y_train)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_gradient_boosting_is_not_a_constant_on_noise():
    rng = np.random.default_rng(2)
    X, y = rng.uniform(size=(400, 3)), rng.integers(0, 3, size=400)
    y_train = y.copy()
    y_train[200:] = -1
    scores = GradientBoostingReference(random_state=0).fit(X, y_train).decision_function(X[200:])
    assert 0.4 < ordinal_auc(y[200:], scores) < 0.6 and np.unique(scores).size > 10


def test_gradient_boosting_fit_twice_is_bit_for_bit():
    X, y_train, _ = step_problem(seed=3)
    params = {"learning_rate": 0.3, "max_leaf_nodes": 7, "l2_regularization": 1.0, "random_state": 5}
    a = GradientBoostingReference(**params).fit(X, y_train).decision_function(X)
    b = GradientBoostingReference(**params).fit(X, y_train).decision_function(X)
    assert a.tobytes() == b.tobytes()


def test_gradient_boosting_takes_whole_floats_from_a_grid_and_refuses_others():
    X, y_train, _ = step_problem()
    GradientBoostingReference(max_leaf_nodes=7.0, max_iter=5).fit(X, y_train)
    with pytest.raises(TypeError, match="max_leaf_nodes must be an integer"):
        GradientBoostingReference(max_leaf_nodes=7.5).fit(X, y_train)
    with pytest.raises(ValueError, match="max_leaf_nodes must be an integer >= 2"):
        GradientBoostingReference(max_leaf_nodes=1).fit(X, y_train)
    with pytest.raises(ValueError, match="l2_regularization must be a finite number >= 0"):
        GradientBoostingReference(l2_regularization=-1.0).fit(X, y_train)
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        GradientBoostingReference(learning_rate=0.0).fit(X, y_train)


def test_nearest_neighbour_is_exact_on_duplicated_rows():
    X, y_train, y = step_problem(n=400, n_labeled=200)
    # the unlabeled rows are the labeled ones again, in another order
    order = np.random.default_rng(4).permutation(200)
    X = np.vstack([X[:200], X[:200][order]])
    y = np.concatenate([y[:200], y[:200][order]])
    y_train = np.concatenate([y[:200], np.full(200, -1)])
    model = NearestNeighbourReference().fit(X, y_train)
    np.testing.assert_array_equal(model.decision_function(X[200:]), y[200:].astype(float))
    np.testing.assert_array_equal(model.predict(X[200:]), y[200:])
    assert ordinal_auc(y[200:], model.decision_function(X[200:])) == 1.0


def test_nearest_neighbour_breaks_ties_by_the_first_labeled_row():
    X = np.array([[0.0], [2.0], [1.0], [1.0]])
    # the query 1.0 is at distance 1 from both labeled rows; the first (label 0) wins, in either order
    assert NearestNeighbourReference().fit(X, np.array([0, 1, -1, -1])).predict(X[2:]).tolist() == [0, 0]
    assert NearestNeighbourReference().fit(X[[1, 0, 2, 3]], np.array([1, 0, -1, -1])).predict(X[2:]).tolist() == [1, 1]


def test_nearest_neighbour_averages_its_neighbours_and_refuses_too_many():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [0.4]])
    y = np.array([0, 1, 2, 2, -1])
    model = NearestNeighbourReference(n_neighbors=3).fit(X, y)
    assert model.decision_function(X[4:]).tolist() == [1.0]
    with pytest.raises(ValueError, match="exceeds the 4 labeled rows"):
        NearestNeighbourReference(n_neighbors=5).fit(X, y)


def test_nearest_neighbour_in_chunks_equals_one_block(monkeypatch):
    X, y_train, _ = step_problem()
    model = NearestNeighbourReference(n_neighbors=3).fit(X, y_train)
    whole = model.decision_function(X)
    monkeypatch.setattr("baselines.nearest_neighbour.chunk_rows", lambda _: 7)
    assert model.decision_function(X).tobytes() == whole.tobytes()
