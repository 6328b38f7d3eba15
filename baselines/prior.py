r"""Class-prior estimation by energy-distance minimisation (Kawakubo, du Plessis and Sugiyama, 2016).

The unlabeled marginal is modelled as ``theta p_P + (1 - theta) p_N`` and
``theta`` minimises the energy distance to the unlabeled sample,

.. math::

    D(\theta) = 2 E\|x_q - x_U\| - E\|x_q - x_q'\| - E\|x_U - x_U'\|,
    \qquad q = \theta P + (1 - \theta) N,

a convex quadratic in ``theta`` with the closed-form minimiser

.. math::

    \hat\theta = \frac{A_{PN} - A_{NN} + A_{NU} - A_{PU}}{2 A_{PN} - A_{PP} - A_{NN}}

clipped to [0, 1], where ``A_{XY}`` is the mean Euclidean distance between the
two samples.  This is what PNU-AUC's original code (``EneCPE.m``) computes for
two classes, except that the within-sample means ``A_PP`` and ``A_NN`` here
leave out the zero self-distances (U-statistics), which removes an O(1/n)
bias towards the smaller class.

For the ordinal splits every ``A`` is a weighted combination of the class-to-
class and class-to-unlabeled distance sums, so all ``k - 1`` priors cost one
pass over the (labeled x all) distances, computed in row chunks.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from qs3orao.validation import UNLABELED, check_features

from ._budget import chunk_rows

__all__ = ["energy_class_prior", "labeled_frequency_priors", "split_priors"]


def _distance_sums(X, codes, n_classes):
    """``S[c, c']`` (labeled classes) and ``T[c]`` (class to unlabeled) sums of Euclidean distances."""
    labeled = np.flatnonzero(codes != UNLABELED)
    unlabeled = codes == UNLABELED
    S = np.zeros((n_classes, n_classes))
    T = np.zeros(n_classes)
    column_codes = codes[labeled]
    step = chunk_rows(X.shape[0])
    for start in range(0, labeled.size, step):
        rows = labeled[start:start + step]
        dist = cdist(X[rows], X)
        to_labeled = dist[:, labeled]
        for c in range(n_classes):
            in_class = codes[rows] == c
            S[c] += np.bincount(column_codes, weights=to_labeled[in_class].sum(axis=0), minlength=n_classes)
            T[c] += dist[np.ix_(in_class, unlabeled)].sum()
    return S, T


def split_priors(X, y_codes, n_classes):
    """Energy-distance estimate of ``P(class > j)`` among the unlabeled rows, for every split ``j``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y_codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``; ``-1`` for unlabeled rows.
    n_classes : int

    Returns
    -------
    ndarray of shape (k - 1,)
        Unclipped estimates in [0, 1].

    Raises
    ------
    ValueError
        If there are no unlabeled rows, a split has fewer than two labeled
        rows on one side (the within-sample distance is then undefined), or
        the estimated energy distance between a split's labeled positives and
        negatives is not positive (the two classes are indistinguishable in
        the sample, so the prior is not identified).

    Notes
    -----
    The estimate is invariant to the scale of ``X`` (every ``A`` scales
    alike), so ``X`` is divided by its largest absolute value first: the
    distances of features as large as ``1e300`` would overflow otherwise.
    """
    counts = np.bincount(y_codes[y_codes != UNLABELED], minlength=n_classes).astype(np.float64)
    n_u = float(np.sum(y_codes == UNLABELED))
    if n_u == 0:
        raise ValueError("class-prior estimation needs unlabeled rows (y == -1)")
    largest = np.abs(X).max()
    S, T = _distance_sums(X / largest if largest > 0 else X, y_codes, n_classes)
    priors = np.empty(n_classes - 1)
    for j in range(n_classes - 1):
        pos, neg = slice(j + 1, None), slice(0, j + 1)
        n_p, n_n = counts[pos].sum(), counts[neg].sum()
        if n_p < 2 or n_n < 2:
            raise ValueError(f"split {j} has {int(n_p)} positive and {int(n_n)} negative labeled rows; "
                             "estimating its class prior needs at least two of each (or pass priors)")
        a_pn = S[pos, neg].sum() / (n_p * n_n)
        a_pp = S[pos, pos].sum() / (n_p * (n_p - 1))
        a_nn = S[neg, neg].sum() / (n_n * (n_n - 1))
        a_pu = T[pos].sum() / (n_p * n_u)
        a_nu = T[neg].sum() / (n_n * n_u)
        spread = 2.0 * a_pn - a_pp - a_nn
        if not spread > 0:
            raise ValueError(
                f"split {j}: the class prior cannot be estimated: the energy distance between its "
                f"{int(n_p)} labeled positives and {int(n_n)} labeled negatives is estimated as {spread:.3g} "
                f"(mean distances positive-negative {a_pn:.6g}, positive-positive {a_pp:.6g}, "
                f"negative-negative {a_nn:.6g}), so the two classes are indistinguishable in these "
                "features; pass priors explicitly")
        priors[j] = np.clip((a_pn - a_nn + a_nu - a_pu) / spread, 0.0, 1.0)
    return priors


def labeled_frequency_priors(y_codes, n_classes):
    """``P(class > j)`` for every split ``j``, read off the labeled rows' class frequencies.

    When the labeled rows are a uniform random sample of the same population
    as the unlabeled ones (as the benchmark's splits draw them), these
    frequencies are unbiased estimates of the unlabeled rows' class priors,
    with no assumption on the features.

    Parameters
    ----------
    y_codes : ndarray of int, shape (n,)
        Class codes ``0..k-1``; ``-1`` for unlabeled rows.
    n_classes : int

    Returns
    -------
    ndarray of shape (k - 1,)

    Raises
    ------
    ValueError
        If there are no labeled rows.

    Examples
    --------
    >>> import numpy as np
    >>> labeled_frequency_priors(np.array([0, 0, 1, 2, -1, -1]), 3).tolist()
    [0.5, 0.25]
    """
    labeled = y_codes[y_codes != UNLABELED]
    if labeled.size == 0:
        raise ValueError("labeled-frequency priors need labeled rows (y != -1)")
    counts = np.bincount(labeled, minlength=n_classes).astype(np.float64)
    above = counts[::-1].cumsum()[::-1][1:]  # rows of class > j, j = 0..k-2
    return above / labeled.size


def energy_class_prior(X_positive, X_negative, X_unlabeled):
    """Energy-distance estimate of the positive class prior of an unlabeled sample.

    Parameters
    ----------
    X_positive, X_negative, X_unlabeled : array-like of shape (n_*, d)

    Returns
    -------
    float
        The estimate of ``P(y = +1)`` in the unlabeled sample, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> pos, neg = rng.normal(2, 1, (300, 2)), rng.normal(-2, 1, (300, 2))
    >>> unl = np.vstack([rng.normal(2, 1, (300, 2)), rng.normal(-2, 1, (700, 2))])
    >>> round(energy_class_prior(pos, neg, unl), 1)
    0.3
    """
    # split_priors divides the rows by their largest value itself: any finite scale is fine here.
    parts = [check_features(A, name=name, distances=False) for A, name in
             ((X_positive, "X_positive"), (X_negative, "X_negative"), (X_unlabeled, "X_unlabeled"))]
    codes = np.concatenate([np.full(len(parts[0]), 1), np.full(len(parts[1]), 0), np.full(len(parts[2]), UNLABELED)])
    return float(split_priors(np.vstack(parts), codes, 2)[0])
