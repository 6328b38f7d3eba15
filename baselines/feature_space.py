r"""The paper's objective solved exactly in a fixed D-dimensional feature space.

The scalable alternative a reader would try before doubly stochastic
gradients: draw a feature map ``phi`` of size ``D`` once (random Fourier
features, or a whitened Nystrom basis of ``D`` landmarks), then minimise

.. math::

    \frac{\lambda}{2}\|w\|^2 + \frac{1}{k-1}\sum_j \Big[\gamma^j L(P_j, N_j)
    + (1 - \gamma^j)\big(L(P_j, U) + L(U, N_j) - \tfrac12\big)\Big],
    \qquad f(x) = w^T \phi(x),

exactly.  With the squared pairwise loss this is one ``D x D`` linear system
built from per-class feature sums and second moments
(:func:`qs3orao.quadratic.solve_feature_space`): O(n D^2 + D^3) time and
O(n d + D^2) memory, with no pairwise loop.  ``||w||^2`` is the RKHS norm of
``f`` in both maps, so the problem is QS3ORAO's, restricted to the span of
``phi``; with every training row as a Nystrom landmark it is the exact ``f*``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params
from qs3orao.kernels import fourier_features, frequency_block, gaussian_kernel, resolve_seed
from qs3orao.thresholds import fit_thresholds

from ._budget import FLOAT_BYTES, check_budget, chunk_bytes
from qs3orao.base import OrdinalEstimator

from ._common import LamPath, check_threshold_loss, in_chunks
from .kernel_cache import cached, caching
from qs3orao.quadratic import GroupMoments, ordinal_pairwise_risk, solve_feature_space, solve_feature_space_path

__all__ = ["RFFAUC", "NystromAUC", "NYSTROM_RCOND"]

#: Eigenvalues of ``K_mm`` below ``NYSTROM_RCOND * max eigenvalue`` are dropped by the whitening.
NYSTROM_RCOND = 1e-10


class _FeatureSpaceAUC(LamPath, OrdinalEstimator):
    """Shared fit of :class:`RFFAUC` and :class:`NystromAUC`; subclasses build the map."""

    #: The map and the moments (``O(n D^2)``) do not depend on ``lam`` and one ``D x D``
    #: eigendecomposition serves every value. Measured single-threaded at n = 1400, D = 1024 (CPU time
    #: of the path / one fit): Nystroem 1.6 for 2 values and 2.5 for 7, RFF 2.5 for 2 and 3.7 for 7
    #: (RFF's map is cheaper, so the eigendecomposition weighs more); the tuning takes the path from 4.
    PATH_MIN_SETTINGS = 4

    _name = None
    _chunk_copies = None
    _size_param = None  # the parameter that sets the number D of map features

    def _store(self, size, gamma, lam, tradeoff, threshold_loss, classes, random_state, memory_budget):
        setattr(self, self._size_param, size)
        self.gamma = gamma
        self.lam = lam
        self.tradeoff = tradeoff
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.random_state = random_state
        self.memory_budget = memory_budget

    def _check_params(self):
        check_positive(self._size, self._size_param, integer=True)
        check_positive(self.gamma, "gamma")
        check_positive(self.lam, "lam")
        check_threshold_loss(self.threshold_loss)
        check_shared_params(self)

    @property
    def _size(self):
        return getattr(self, self._size_param)

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`).

        The map of the requested width (``n_random_features`` or ``n_landmarks``), one weighted
        ``D x D`` moment (which becomes the system) and the row chunks.
        """
        D = self._n_features_out(n_samples, self._size)
        return (self._map_bytes(n_features, D) + GroupMoments.nbytes(1, n_classes + 1, D)
                + FLOAT_BYTES * (2 * n_samples) + chunk_bytes(n_samples, D, copies=self._chunk_copies))

    def fit(self, X, y):
        """Fit on labeled rows (ordinal labels) and unlabeled rows (``y == -1``).

        Returns
        -------
        self
        """
        X, codes, moments = self._prepare(X, y)
        return self._finish(X, codes, moments, solve_feature_space(moments, self.risk_, self.lam))

    def _prepare(self, X, y, path=False):
        """Validate, check the memory budget (of the path solver with ``path``), draw the map, sum the moments."""
        self._check_params()
        X, codes, self.classes_, self.tradeoff_ = check_semisupervised(
            X, y, tradeoff=self.tradeoff, classes=self.classes)
        self._check_components(X.shape[0])
        D = self._n_features_out(X.shape[0], self._size)
        k = self.classes_.size
        # In a search (a reuse_kernels block) the moments are kept per class (k + 1 of them), since the
        # trade-offs change, and so are the rows' features (baselines._common.in_chunks).
        extra = self.path_extra_bytes(D, path) + (FLOAT_BYTES * D * (k * D + X.shape[0]) if caching() else 0)
        self.memory_estimate_ = check_budget(
            self._name, self.estimate_memory(*X.shape, k) + extra, self.memory_budget)
        self.seed_ = resolve_seed(self.random_state)
        self._build_map(X)
        self.risk_ = ordinal_pairwise_risk(k, self.tradeoff_)
        if caching():
            moments = cached(f"{self._name} moments", (X, codes), (self.gamma, self._size, self.seed_),
                             lambda: GroupMoments.accumulate(self._features, X, codes, self.n_map_features_))
        else:
            moments = GroupMoments.accumulate(self._features, X, codes, self.n_map_features_, self.risk_)
        return X, codes, moments

    def _map_key(self):
        """The map's ``key`` for :func:`baselines._common.in_chunks`: the arrays and scalars that determine it."""
        return self._name, self._map_arrays(), (self.gamma,)

    def _solve_path(self, moments, codes, lams):
        """Weights ``w`` for every ``lam``, shape ``(len(lams), D)``."""
        return solve_feature_space_path(moments, self.risk_, lams)

    def _finish(self, X, codes, moments, coef):
        self.coef_ = coef
        self.train_scores_ = in_chunks(self._features, X, self.n_map_features_, self.coef_, key=self._map_key())
        labeled = codes != UNLABELED
        self.thresholds_, self.threshold_intervals_ = fit_thresholds(
            self.train_scores_[labeled], codes[labeled], self.classes_.size, self.threshold_loss,
            return_intervals=True)
        self.n_features_in_ = X.shape[1]
        return self

    def feature_map(self, X):
        """The fitted feature map ``phi(X)``, shape ``(n_samples, n_map_features_)``.

        Not ``transform``: the estimator is a ranker, not a scikit-learn transformer.
        """
        return self._features(self._check_X(X))

    def decision_function(self, X):
        """The ranking function ``f(x) = w^T phi(x)``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        return in_chunks(self._features, X, self.n_map_features_, self.coef_, key=self._map_key())


class RFFAUC(_FeatureSpaceAUC):
    """The paper's objective solved exactly on ``D`` fixed random Fourier features.

    ``D / 2`` frequencies ``omega ~ N(0, 2 gamma I)`` are drawn once (block 0 of
    :func:`qs3orao.kernels.frequency_block`, from ``random_state``) and give the
    map ``[cos(omega x), sin(omega x)] / sqrt(D / 2)``, whose inner products
    estimate ``exp(-gamma ||x - x'||^2)``.  QS3ORAO after ``t`` iterations of
    ``m`` frequencies uses ``D = 2 t m`` features, so equal ``D`` compares the
    same function class.

    Parameters
    ----------
    n_random_features : int, default=512
        Number of features ``D`` (even: the cos and sin of ``D / 2`` frequencies).
    gamma, lam, tradeoff, threshold_loss, classes :
        As in :class:`qs3orao.QS3ORAO`.
    random_state : int, numpy Generator or None
        Seed of the frequencies.
    memory_budget : int, optional
        Bytes the fit may allocate; None means half of the available memory.

    Attributes
    ----------
    classes_, thresholds_, threshold_intervals_, train_scores_, tradeoff_, n_features_in_
        As in :class:`qs3orao.QS3ORAO`.
    omega_ : ndarray of shape (D / 2, n_features)
    coef_ : ndarray of shape (D,)
    n_map_features_ : int
        ``D``.
    seed_ : int
    memory_estimate_ : int
    """

    _name = "RFF-AUC"
    _chunk_copies = 3  # projection, its cos and sin, their concatenation
    _size_param = "n_random_features"

    def __init__(self, *, n_random_features=512, gamma=1.0, lam=1.0, tradeoff=0.5, threshold_loss="ordinal_logistic",
                 classes=None, random_state=None, memory_budget=None):
        self._store(n_random_features, gamma, lam, tradeoff, threshold_loss, classes, random_state, memory_budget)

    @staticmethod
    def _n_features_out(n_samples, size):
        return size

    @staticmethod
    def _map_bytes(n_features, D):
        return FLOAT_BYTES * (D // 2) * n_features

    def _check_components(self, n_samples):
        if self.n_random_features % 2:
            raise ValueError(f"n_random_features must be even (cos and sin of n_random_features / 2 "
                             f"frequencies), got {self.n_random_features}")

    def _build_map(self, X):
        self.omega_ = frequency_block(self.seed_, 0, self.n_random_features // 2, X.shape[1], self.gamma)
        self.n_map_features_ = self.n_random_features

    def _map_arrays(self):
        return (self.omega_,)

    def _features(self, X):
        return fourier_features(X, self.omega_)


class NystromAUC(_FeatureSpaceAUC):
    r"""The paper's objective solved exactly on a whitened Nystrom basis of ``D`` landmarks.

    ``D`` landmarks ``Z`` are drawn without replacement from all training rows,
    labeled and unlabeled; the map is ``phi(x) = k(x, Z) V diag(s)^{-1/2}`` from
    the eigendecomposition ``K_ZZ = V diag(s) V^T``, keeping the eigenvalues
    above ``NYSTROM_RCOND * max(s)`` (a stable ``K_ZZ^{-1/2}``: dropped
    directions are those the landmarks cannot resolve in floating point).
    Then ``phi(x)^T phi(x')`` is the Nystrom approximation of the kernel and
    ``||w||`` the RKHS norm of ``f = w^T phi``; with every training row a
    landmark the solution is the exact minimiser ``f*``.

    Parameters
    ----------
    n_landmarks : int, default=512
        Number of landmarks ``D``; capped at the number of training rows, with a warning.
    gamma, lam, tradeoff, threshold_loss, classes :
        As in :class:`qs3orao.QS3ORAO`.
    random_state : int, numpy Generator or None
        Seed of the landmark draw.
    memory_budget : int, optional
        Bytes the fit may allocate; None means half of the available memory.

    Attributes
    ----------
    classes_, thresholds_, threshold_intervals_, train_scores_, tradeoff_, n_features_in_
        As in :class:`qs3orao.QS3ORAO`.
    landmarks_ : ndarray of shape (D, n_features)
    whitening_ : ndarray of shape (D, rank)
    coef_ : ndarray of shape (rank,)
    n_map_features_ : int
        The rank kept by the whitening.
    seed_ : int
    memory_estimate_ : int
    """

    _name = "Nystrom-AUC"
    _chunk_copies = 2  # kernel block and its whitened product
    _size_param = "n_landmarks"

    def __init__(self, *, n_landmarks=512, gamma=1.0, lam=1.0, tradeoff=0.5, threshold_loss="ordinal_logistic",
                 classes=None, random_state=None, memory_budget=None):
        self._store(n_landmarks, gamma, lam, tradeoff, threshold_loss, classes, random_state, memory_budget)

    @staticmethod
    def _n_features_out(n_samples, size):
        return min(size, n_samples)

    @staticmethod
    def _map_bytes(n_features, D):
        # landmarks and the whitening; K_ZZ, which is freed before the moments exist, has the moments' size
        return FLOAT_BYTES * (D * n_features + D * D + D)

    def _check_components(self, n_samples):
        if self.n_landmarks > n_samples:
            warnings.warn(f"n_landmarks={self.n_landmarks} exceeds the {n_samples} training rows; "
                          f"using every row as a landmark", UserWarning, stacklevel=3)

    def _build_map(self, X):
        nystrom = cached("Nystroem map", (X,), (self.gamma, self.n_landmarks, self.seed_),
                         lambda: _nystrom_map(X, self.n_landmarks, self.gamma, self.seed_))
        self.landmarks_, self.whitening_ = nystrom.landmarks, nystrom.whitening
        self.n_map_features_ = self.whitening_.shape[1]

    def _map_arrays(self):
        # The whitening is a function of the landmarks and gamma.
        return (self.landmarks_,)

    def _features(self, X):
        return gaussian_kernel(X, self.landmarks_, gamma=self.gamma) @ self.whitening_


@dataclass(frozen=True)
class _NystromMap:
    landmarks: np.ndarray
    whitening: np.ndarray


def _nystrom_map(X, n_landmarks, gamma, seed):
    """``min(n_landmarks, n)`` landmarks drawn from the rows of ``X`` and the whitening ``K_mm^{-1/2}``."""
    D = min(n_landmarks, X.shape[0])
    rng = np.random.default_rng(seed)
    landmarks = X[np.sort(rng.choice(X.shape[0], D, replace=False))]
    K = gaussian_kernel(landmarks, gamma=gamma)
    # K is symmetric, so its transpose is the same matrix in the column-major order LAPACK wants.
    eigenvalues, vectors = linalg.eigh(K.T, overwrite_a=True, check_finite=False)
    del K
    first = np.searchsorted(eigenvalues, NYSTROM_RCOND * eigenvalues[-1], side="right")
    whitening = vectors[:, first:]
    whitening /= np.sqrt(eigenvalues[first:])
    return _NystromMap(landmarks, whitening)
