"""Small generated problems shared by the engine tests."""

import numpy as np

from qs3orao.engine import train


def make_problem(n, d, k, n_labeled, seed):
    """Uniform features, every class labeled at least twice, the rest unlabeled."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    codes = np.full(n, -1)
    codes[:n_labeled] = np.concatenate([np.arange(k), np.arange(k), rng.integers(k, size=n_labeled - 2 * k)])
    return X, codes


def fit_problem(n=600, d=3, k=4, n_iter=40, **kwargs):
    X, codes = make_problem(n, d, k, n // 3, seed=1)
    params = dict(n_iter=n_iter, batch_size=5, n_components=8, gamma=1.0, lam=0.5, theta=3.0, seed=11)
    return X, codes, train(X, codes, np.full(k - 1, 0.4), **params, **kwargs)
