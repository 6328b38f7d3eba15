"""Small generated semi-supervised ordinal problems shared by the core tests."""

import numpy as np


def ordinal_problem(n=200, n_labeled=60, d=3, k=4, seed=0):
    """A nonlinear latent function cut into ``k`` equal-frequency classes.

    Returns ``X``, the training labels (``-1`` for unlabeled rows) and the true labels.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    latent = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    y_true = np.searchsorted(np.quantile(latent, np.linspace(0, 1, k + 1)[1:-1]), latent)
    y = y_true.copy()
    y[n_labeled:] = -1
    return X, y, y_true
