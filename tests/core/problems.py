"""Small generated semi-supervised ordinal problems shared by the core tests."""

import numpy as np

from qs3study.datasets.generated import make_latent_regression


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


def quality_bar_problem(n_labeled=100, n_unlabeled=300, seed=0):
    """The offset schedule's quality-bar problem: a generated latent function of 2 features cut into 4 equal-frequency classes.

    Returns ``X``, the training labels (``-1`` for unlabeled rows) and the true labels.
    """
    X, latent = make_latent_regression(n_labeled + n_unlabeled, 2, random_state=seed)
    y_true = np.searchsorted(np.quantile(latent, [0.25, 0.5, 0.75]), latent)
    y = y_true.copy()
    y[n_labeled:] = -1
    return X, y, y_true
