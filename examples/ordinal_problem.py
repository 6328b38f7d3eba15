"""A small semi-supervised ordinal problem, generated with numpy alone, for the examples.

A smooth nonlinear function of three uniform features plus a little noise is
cut at its quintiles into five ordered classes.  The first ``n_labeled`` rows
keep their class; the others are marked unlabeled with ``-1``, the
scikit-learn convention that :class:`qs3orao.QS3ORAO` follows.
"""

import numpy as np
from scipy.spatial.distance import pdist

N_CLASSES = 5


def make_problem(n_samples=600, n_labeled=100, seed=0):
    """Features, training labels and true labels of a generated 5-class ordinal problem.

    Parameters
    ----------
    n_samples : int, default=600
        Rows in all, labeled and unlabeled.
    n_labeled : int, default=100
        Rows that keep their class.
    seed : int, default=0
        Seed of the features and the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
    y : ndarray of shape (n_samples,)
        Classes ``0 .. 4`` for the labeled rows, ``-1`` for the unlabeled ones.
    y_true : ndarray of shape (n_samples,)
        The classes of every row, to score the unlabeled ones.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_samples, 3))
    latent = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * X[:, 2] + 0.1 * rng.standard_normal(n_samples)
    cuts = np.quantile(latent, np.arange(1, N_CLASSES) / N_CLASSES)
    y_true = np.digitize(latent, cuts)
    y = np.full(n_samples, -1)
    y[:n_labeled] = y_true[:n_labeled]
    return X, y, y_true


def relative_gamma(X, scale=1.0):
    """``scale / median ||x - x'||^2`` over the pairs of rows of ``X``: a kernel parameter on the data's scale.

    With ``k(x, x') = exp(-gamma ||x - x'||^2)`` and ``scale=1``, a typical pair of
    rows has ``k = exp(-1)``, whatever the units of the features.
    """
    return scale / np.median(pdist(X, "sqeuclidean"))
