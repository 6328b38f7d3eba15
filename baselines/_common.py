"""What the baselines share beyond :class:`qs3orao.base.OrdinalEstimator`: parameter checks, kernel maps, per-split models."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from qs3orao.base import OrdinalEstimator
from qs3orao.kernels import gaussian_kernel
from qs3orao.thresholds import check_threshold_loss, fit_thresholds
from qs3orao.validation import UNLABELED, check_path_settings

from ._budget import FLOAT_BYTES, chunk_rows
from .kernel_cache import cached, caching

__all__ = ["ChunkedKernel", "LamPath", "SplitwiseModel", "check_threshold_loss", "check_split_values", "kernel_map",
           "kernel_scores", "in_chunks"]


def check_split_values(values, n_splits, name, low, high, *, open_ends=False):
    """A scalar or ``n_splits`` values in ``[low, high]`` (or ``(low, high)``), as a vector."""
    out = np.asarray(values, dtype=np.float64)
    if out.ndim == 0:
        out = np.full(n_splits, float(out))
    if out.shape != (n_splits,):
        raise ValueError(f"{name} must be a scalar or {n_splits} values (one per split), got shape {out.shape}")
    inside = (out > low) & (out < high) if open_ends else (out >= low) & (out <= high)
    if not np.all(inside):
        ends = "()" if open_ends else "[]"
        raise ValueError(f"{name} values must lie in {ends[0]}{low}, {high}{ends[1]}, got {out.tolist()}")
    return out


def kernel_map(centres, gamma):
    """``x -> [k(x, c_1), ..., k(x, c_b)]`` with the project's kernel ``exp(-gamma ||x - c||^2)``."""
    return lambda X: gaussian_kernel(X, centres, gamma=gamma)


def kernel_scores(X, centres, gamma, coef):
    """``kernel_map(centres, gamma)(X) @ coef`` by :func:`in_chunks`, the kernel features kept in a search."""
    return in_chunks(kernel_map(centres, gamma), X, centres.shape[0], coef, key=("kernel map", (centres,), (gamma,)))


def in_chunks(features, X, n_outputs, coef, *, key=None):
    """``features(X) @ coef`` evaluated in row chunks (``coef`` of shape (b,) or (b, m)).

    ``features`` maps rows to their ``n_outputs`` features.  With ``key``, the
    ``(kind, arrays, scalars)`` that identify the map as
    :func:`baselines.kernel_cache.cached` takes them, inside a
    :func:`baselines.kernel_cache.reuse_kernels` block the features of ``X``
    are kept, chunk by chunk, and a later call for the same rows and map (the
    next ``lam`` or trade-off of a search) multiplies them without computing
    them again: the same products of the same values.
    """
    step = chunk_rows(n_outputs)
    spans = [(start, min(start + step, X.shape[0])) for start in range(0, X.shape[0], step)]
    if key is not None and caching():
        kind, arrays, scalars = key
        kept = cached(f"{kind} features", (X, *arrays), scalars, lambda: _chunk_features(features, X, spans, n_outputs))
        chunk = lambda start, stop: kept[start:stop]  # noqa: E731
    else:
        chunk = lambda start, stop: features(X[start:stop])  # noqa: E731
    out = np.empty((X.shape[0],) + coef.shape[1:])
    for start, stop in spans:
        out[start:stop] = chunk(start, stop) @ coef
    return out


def _chunk_features(features, X, spans, n_outputs):
    """``features(X)``, computed chunk by chunk over ``spans`` as :func:`in_chunks` computes them."""
    kept = np.empty((X.shape[0], n_outputs))
    for start, stop in spans:
        kept[start:stop] = features(X[start:stop])
    return kept


class ChunkedKernel:
    """The ``n x n`` kernel matrix of rows ``X``, never held: its rows are computed when asked.

    It offers what :func:`qs3orao.quadratic.solve_kernel_expansion` reads of a
    kernel matrix: ``shape``, row blocks ``K[rows]`` and products ``K @ M`` (by
    :func:`in_chunks`, one row chunk of the kernel at a time, never kept, also in
    a search).  Each product computes the kernel again: ``O(n^2 d)`` time for a
    chunk's memory.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    gamma : float
        Kernel parameter of ``exp(-gamma ||x - x'||^2)``.
    """

    def __init__(self, X, gamma):
        self.X = X
        self.shape = (X.shape[0], X.shape[0])
        self._rows_of = kernel_map(X, gamma)

    def __getitem__(self, rows):
        """Rows ``K[rows]`` (a slice or an index array), shape ``(len(rows), n)``."""
        return self._rows_of(self.X[rows])

    def __matmul__(self, M):
        """``K @ M`` for ``M`` of shape (n,) or (n, m)."""
        return in_chunks(self._rows_of, self.X, self.shape[0], M)


class LamPath:
    """``fit_path`` over ``lam`` for an estimator whose fit is ``_prepare``, a solve, ``_finish``.

    The estimator provides ``_prepare(X, y, path) -> (X, codes, prepared)``
    (everything ``lam`` does not change), ``_solve_path(prepared, codes, lams)``
    (the coefficients of every ``lam``, from one factorisation) and
    ``_finish(X, codes, prepared, coef)``.
    """

    #: The parameters :meth:`fit_path` may vary between settings: one eigendecomposition serves the whole
    #: ``lam`` path (:mod:`qs3orao.quadratic`).
    PATH_PARAMS = ("lam",)
    #: The tuning fits fewer values than this one by one.  Where each value is an LU solve (M-PNU-AUC's
    #: feature-space systems), one eigendecomposition costs several of them, so the path pays off for
    #: the 24 values of a long grid, not for the paper's 7.  The kernel expansions, whose single solve
    #: is a Cholesky factorisation of the weighed rows, set their own (``timing/lam_path_break_even.py``
    #: measures the break-even).
    PATH_MIN_SETTINGS = 12

    @staticmethod
    def path_extra_bytes(side, path):
        """Bytes a ``lam`` path holds beyond one fit's memory estimate.

        The path solvers of :mod:`qs3orao.quadratic` decompose one symmetric
        ``side x side`` system and keep its eigenvectors.  A kernel expansion's
        path (:func:`qs3orao.quadratic.solve_kernel_expansion_path`) also holds
        the kernel's root ``R`` that turns ``H K`` into the symmetric ``R H R``;
        the system itself takes the place of the one a single fit factorises.
        So the path counts two more ``side x side`` float arrays: the
        eigenvectors and the kernel's root.  A fixed feature map's path
        (:func:`qs3orao.quadratic.solve_feature_space_path`) is counted alike,
        an allowance: there the system is the ``D x D`` moment a single fit
        holds too (at n = 1000, D = 600 the path's traced peak was no higher
        than one fit's).

        Parameters
        ----------
        side : int
            The system's side: the training rows of a kernel expansion, ``D`` of a feature map.
        path : bool
            Whether the fit is a path (``fit_path``); a single fit holds nothing extra.

        Returns
        -------
        int
        """
        return 2 * FLOAT_BYTES * side * side if path else 0

    def fit_path(self, X, y, settings):
        """Fit one model per ``lam`` of ``settings``, the whole path from one eigendecomposition.

        Each returned model equals ``clone(self).set_params(**setting).fit(X, y)``
        up to the solves' rounding (both are backward stable; their scores differ
        by at most the conditioning of the system, about ``1 / lam`` times the rounding).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        settings : sequence of dict
            Each ``{"lam": value}`` (or empty, keeping this estimator's ``lam``).

        Returns
        -------
        list
            The fitted models, one per setting.
        """
        settings = check_path_settings(settings, self.PATH_PARAMS)
        fits = [clone(self).set_params(**setting) for setting in settings]
        for fit in fits:
            fit._check_params()
        template = clone(self)
        X, codes, prepared = template._prepare(X, y, path=True)
        coefs = template._solve_path(prepared, codes, [float(fit.lam) for fit in fits])
        fitted = {name: value for name, value in vars(template).items() if name.endswith("_")}
        for fit, coef in zip(fits, coefs):
            fit.__dict__.update(fitted)
            fit._finish(X, codes, prepared, coef)
        return fits


class SplitwiseModel(LamPath, OrdinalEstimator):
    """Shared tail of M-PNU-AUC and M-SAMULT: one function ``f_j`` per split ``j``.

    ``decision_function`` returns the ``k - 1`` columns ``f_j(x)``.  The
    squared pairwise loss is blind to a constant shift of ``f_j``, so each
    ``f_j`` gets its own threshold, fitted like QS3ORAO's thresholds (the
    all-threshold loss, here with one threshold) on the split's labeled rows;
    ``predict`` counts the splits whose threshold ``x`` passes.
    """

    def _fit_thresholds(self, train_scores, codes):
        labeled = codes != UNLABELED
        self.thresholds_ = np.array([
            fit_thresholds(train_scores[labeled, j], (codes[labeled] > j).astype(np.int64), 2,
                           self.threshold_loss)[0]
            for j in range(train_scores.shape[1])])

    def decision_function(self, X):
        """Scores ``f_j(x) = sum_i coef_[j, i] k(centres_[i], x)`` of every split.

        Returns
        -------
        ndarray of shape (n_samples, k - 1)
        """
        X = self._check_X(X)
        return kernel_scores(X, self.centres_, self.gamma, self.coef_.T)

    def predict_from_scores(self, scores):
        """Ordinal labels ``classes_[#{j : f_j(x) > threshold_j}]`` from the ``k - 1`` score columns."""
        scores = self._check_scores(scores, columns=self.thresholds_.size)
        return self.classes_[(scores > self.thresholds_).sum(axis=1)]

