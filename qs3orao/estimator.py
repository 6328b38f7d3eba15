"""The QS3ORAO estimator (Shi, Gu, Li and Huang, AAAI 2020), scikit-learn style."""

from __future__ import annotations

import copy

import numpy as np

from .base import OrdinalEstimator
from .divergence import DivergenceError
from .engine import BLOCK_STORAGE, resolve_n_jobs, resolve_step_backend, train, train_path
from .kernels import resolve_seed
from .curvature import data_curvature_bound
from .schedule import check_step_offset, resolve_step_offset
from .thresholds import ORDINAL_LOGISTIC, check_threshold_loss, fit_thresholds
from .trig import TRIG_BACKENDS
from .validation import (UNLABELED, check_memory_budget, check_path_settings, check_positive, check_semisupervised,
                         check_semisupervised_tradeoff, check_shared_params, plain)

__all__ = ["QS3ORAO"]

_DTYPES = {"float64": np.float64, "float32": np.float32}


class QS3ORAO(OrdinalEstimator):
    """Quadruply stochastic gradient semi-supervised ordinal regression AUC optimisation.

    Minimises ``lam/2 ||f||^2 + mean_j R^j_PNU(f)`` (the paper's Equation (10)
    with the squared pairwise loss) over the Gaussian RKHS by doubly stochastic
    functional gradients: every iteration samples, for each split ``j``,
    ``batch_size`` positives (class > j), negatives (class <= j) and unlabeled
    rows (also where ``tradeoff`` gives these no weight, so the rows drawn do not
    depend on it), draws one block of ``n_components`` random frequencies from its seed,
    takes the step ``eta_t = theta / (t + step_offset)`` and shrinks every
    earlier coefficient by ``1 - eta_t * lam``.  The thresholds then minimise
    the all-threshold loss over the labeled rows.

    Parameters
    ----------
    n_iter : int, default=1000
        Number of iterations ``t``.
    batch_size : int, default=16
        Rows sampled per data source (positive, negative, unlabeled) and split
        per iteration.  Within a batch all pairs are used, which is unbiased and
        reduces to the paper's single sample when ``batch_size=1``.
    n_components : int, default=32
        Random frequencies drawn per iteration (``2 * n_components`` features).
    gamma : float, default=1.0
        Kernel parameter of ``k(x, x') = exp(-gamma ||x - x'||^2)``.
    lam : float, default=1.0
        Regularisation ``lambda > 0``.
    theta : float, optional
        Step-size scale, ``eta_t = theta / (t + step_offset)``.  Default
        ``1.5 / lam``, the middle of the range ``theta * lam in (1, 2)`` of the
        paper's theorem.
    step_offset : float >= 0, "auto" or "auto-data", default=0
        ``t0`` of the step ``eta_t = theta / (t + t0)``.  0 is the paper's
        schedule, whose first steps expand the error when
        ``theta * (lam + h) > 2`` (``h`` the risk's curvature, up to
        ``4 mean_j (2 - gamma^j)``): at small ``lam`` the scores blow up.
        "auto" is the smallest ``t0`` with ``eta_1 (lam + h_bar) <= 1`` for the
        data-free curvature bound ``h_bar`` of
        :func:`qs3orao.schedule.curvature_bound`, so that every step contracts
        the error.  "auto-data" takes the same rule with a data-based bound
        on the full risk's curvature that holds with probability at least
        0.99 (:func:`qs3orao.curvature.data_curvature_bound`, drawn from the
        training rows with ``seed_``): a smaller ``t0`` under which every
        expected step contracts, not every sampled one.  Any ``t0`` keeps the
        O(1/t) rate under the same condition ``theta * lam in (1, 2)``; see
        :mod:`qs3orao.schedule`.
    tradeoff : float or array-like of shape (k - 1,), default=0.5
        ``gamma^j`` in [0, 1]: weight of the labeled-only AUC risk of split ``j``.
    threshold_loss : {"ordinal_logistic", "hinge", "squared_hinge", "logistic"}, default="ordinal_logistic"
        How the thresholds are fitted (:func:`qs3orao.thresholds.fit_thresholds`):
        "ordinal_logistic" fits a scale and the cut-points jointly, so the
        thresholds follow the scale of ``f``; "hinge" is the paper's linear
        program (margin 1, not scale-aware).
    classes : array-like, optional
        The full ordered label set, when some levels have no labeled row.
    block_storage : {"auto", "memory", "regenerate"}, default="auto"
        Keep the frequency blocks for prediction, or regenerate them from their
        seeds; "auto" keeps them when they fit in ``max_memory`` beside the
        feature buffers.
    max_memory : int, default=256 MiB
        Memory budget, a finite number of bytes > 0, of what training holds
        beyond the data and the scores (and of the models :meth:`fit_path`
        returns): the ``n_iter x 2 n_components`` coefficients (a fit whose
        coefficients exceed it is refused before anything is allocated),
        feature buffers (half of the rest, at most 32 MiB; twice that with
        ``n_jobs > 1``, which computes the next group's features during the
        current group's steps) and the kept frequency blocks.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the random-feature projections and their ``cos``/``sin``;
        scores and coefficients stay float64.  "float32" is faster and changes
        the scores by about ``1e-7`` times their scale.
    n_jobs : int, optional
        Threads over which the passes over all rows are split by rows; None
        means 1, -1 all available cores, other values must be >= 1 and are
        capped at the available cores and at the number of rows (one thread
        per core at most: more only wait for each other).  With a given
        ``n_jobs`` the result does not depend on the scheduling, but the row
        chunks depend on the resolved ``n_jobs``, which
        may change the scores by rounding (measured up to 7e-16 of their
        scale): a bit-for-bit repeat needs the same ``n_jobs``.
    trig_backend : {"auto", "numba", "numpy"}, default="auto"
        How the ``cos``/``sin`` passes are computed (:mod:`qs3orao.trig`): numpy,
        or a fused loop compiled with numba (faster in float64; the optional
        dependency ``qs3orao[fast]``).  The results agree to rounding
        (``1e-12``).  "auto" takes numba in float64 when it can be imported; the backend
        used is recorded in ``trig_backend_``.  "numba" without numba raises
        ImportError.
    step_backend : {"numpy", "numba"}, default="numpy"
        How the steps are taken (:func:`qs3orao.engine.resolve_step_backend`):
        numpy calls per step, or a whole group of steps in one loop compiled
        with numba (faster where the steps, not the features, are the cost:
        few components and a few thousand rows).  The results
        agree to rounding.  No "auto", so that a fit's bits never depend on
        what is installed; "numba" without numba raises ImportError.
    random_state : int, numpy Generator or None
        Seed of the row sampling and of every frequency block.
    verbose : bool, default=False
        Print iterations per second and time left to stderr.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    thresholds_ : ndarray of shape (k - 1,)
    threshold_intervals_ : ndarray of shape (k - 1, 2)
        Minimiser interval of each threshold (a point for strictly convex losses).
    coef_ : ndarray of shape (n_iter, 2 * n_components)
        The coefficients ``alpha_i`` of the final function.
    train_scores_ : ndarray of shape (n_samples,)
        ``f`` at the training rows, as maintained by the training loop.
    n_iter_ : int
    theta_ : float
        The step scale used.
    tradeoff_ : ndarray of shape (k - 1,)
        The split weights used.
    step_offset_ : float
        The offset ``t0`` used (the chosen one under "auto").
    trig_backend_ : str
        The trigonometric backend used, "numba" or "numpy".
    seed_ : int
        The resolved seed; refitting with ``random_state=seed_`` reproduces the fit.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from qs3orao import QS3ORAO
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 2))
    >>> y = np.digitize(X.sum(axis=1), [0.7, 1.0, 1.3])
    >>> y[100:] = -1
    >>> model = QS3ORAO(n_iter=200, gamma=2.0, random_state=0).fit(X, y)
    >>> model.thresholds_.shape
    (3,)
    """

    #: The parameters :meth:`fit_path` may vary between settings (all others are shared).
    PATH_PARAMS = ("lam", "tradeoff", "theta", "step_offset")
    #: The tuning uses :meth:`fit_path` for any group of at least this many settings.
    PATH_MIN_SETTINGS = 2

    def __init__(self, *, n_iter=1000, batch_size=16, n_components=32, gamma=1.0, lam=1.0, theta=None,
                 step_offset=0, tradeoff=0.5, threshold_loss=ORDINAL_LOGISTIC, classes=None, block_storage="auto",
                 max_memory=256 * 2**20, dtype="float64", n_jobs=None, trig_backend="auto", step_backend="numpy",
                 random_state=None, verbose=False):
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.n_components = n_components
        self.gamma = gamma
        self.lam = lam
        self.theta = theta
        self.step_offset = step_offset
        self.tradeoff = tradeoff
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.block_storage = block_storage
        self.max_memory = max_memory
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.trig_backend = trig_backend
        self.step_backend = step_backend
        self.random_state = random_state
        self.verbose = verbose

    def _check_params(self):
        for name in ("n_iter", "batch_size", "n_components"):
            check_positive(getattr(self, name), name, integer=True)
        for name in ("gamma", "lam"):
            check_positive(getattr(self, name), name)
        if self.theta is not None:
            check_positive(self.theta, "theta")
        check_threshold_loss(self.threshold_loss)
        if self.block_storage not in BLOCK_STORAGE:
            raise ValueError(f"block_storage must be one of {BLOCK_STORAGE}, got {plain(self.block_storage)}")
        check_memory_budget(self.max_memory, "max_memory")
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {tuple(_DTYPES)}, got {plain(self.dtype)}")
        resolve_n_jobs(self.n_jobs)
        # The value only: resolving "auto" would import and compile numba, which the fit does anyway.
        if not isinstance(self.trig_backend, str) or self.trig_backend not in TRIG_BACKENDS:
            raise ValueError(f"trig_backend must be one of {TRIG_BACKENDS}, got {plain(self.trig_backend)}")
        resolve_step_backend(self.step_backend)
        check_step_offset(self.step_offset)
        check_shared_params(self)

    def fit(self, X, y):
        """Fit on labeled rows (ordinal labels) and unlabeled rows (``y == -1``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._check_params()
        X, codes, self.classes_, weights = check_semisupervised(X, y, tradeoff=self.tradeoff, classes=self.classes)
        self.seed_ = resolve_seed(self.random_state)
        self._resolve_schedule(weights, X, codes)
        model, train_scores = train(
            X, codes, weights, batch_size=self.batch_size, n_components=self.n_components, gamma=float(self.gamma),
            lam=float(self.lam), theta=self.theta_, seed=self.seed_, step_offset=self.step_offset_,
            **self._run_length(codes, weights), **self._engine_options())
        return self._finish(X, codes, model, train_scores,
                            self._fit_thresholds(train_scores, codes, self.classes_.size))

    def _run_length(self, codes, weights):
        """The engine's ``n_iter`` (a subclass may add ``checkpoints`` and ``stop`` to end the run earlier)."""
        return {"n_iter": self.n_iter}

    def fit_path(self, X, y, settings):
        """Fit one model per setting of ``lam``, ``tradeoff``, ``theta`` and ``step_offset`` in one pass.

        Every other parameter, and the seed, is shared: the sampled rows, the
        frequency blocks and their features are computed once for all settings
        (:func:`qs3orao.engine.train_path`), in one pass when their ``S x n_iter x
        2 n_components`` coefficients take at most half of ``max_memory``, else
        in as few passes as keep them there (regenerating the frequency blocks
        under ``block_storage="auto"``, which each pass would otherwise keep
        apart).  The returned coefficients must fit in ``max_memory``: a call
        whose models would not is refused before any work.  Training also holds ``S`` score
        vectors of length ``n_samples``.  Each returned model equals
        ``clone(self).set_params(**setting).fit(X, y)`` to rounding, with
        ``random_state`` resolved once (``seed_`` is the same for all).  The
        default ``theta`` (``1.5 / lam``) and ``step_offset="auto"`` are
        resolved per setting, as ``fit`` does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        settings : sequence of dict
            Each maps some of :attr:`PATH_PARAMS` to values; missing ones keep this estimator's.

        Returns
        -------
        list
            Per setting, the fitted :class:`QS3ORAO`, or the
            :class:`qs3orao.DivergenceError` that setting raised (the others are
            unaffected: they are what their own fit gives).  With
            ``step_backend="numba"`` the error may name another iteration than
            the setting's own fit does (:func:`qs3orao.engine.train_path`).

        Raises
        ------
        ValueError
            If a setting names a parameter outside :attr:`PATH_PARAMS`,
            ``settings`` is empty or the models' coefficients exceed
            ``max_memory``; any invalid value as ``fit`` raises it.
        TypeError
            If ``settings`` is not a list of dicts (a single dict, for example).
        """
        settings = check_path_settings(settings, self.PATH_PARAMS)
        self._check_params()
        per_pass, block_storage = self._path_passes(len(settings))
        # clone(self).set_params(**setting), built without clone's signature inspection per call, which
        # would cost more than building the estimators of a long path.
        params = self.get_params(deep=False)
        estimators = [type(self)(**copy.deepcopy({**params, **setting})) for setting in settings]
        for estimator in estimators:
            estimator._check_params()
        X, codes, classes, _ = check_semisupervised(X, y, tradeoff=1.0, classes=self.classes)
        seed = resolve_seed(self.random_state)
        for estimator in estimators:
            estimator.classes_, estimator.seed_ = classes, seed
            estimator._resolve_schedule(check_semisupervised_tradeoff(estimator.tradeoff, codes, classes.size - 1),
                                        X, codes)
        fitted = []
        for start in range(0, len(estimators), per_pass):
            batch = estimators[start:start + per_pass]
            models, train_scores = train_path(
                X, codes, np.array([e.tradeoff_ for e in batch]), lams=[float(e.lam) for e in batch],
                thetas=[e.theta_ for e in batch], step_offsets=[e.step_offset_ for e in batch],
                n_iter=self.n_iter, batch_size=self.batch_size, n_components=self.n_components,
                gamma=float(self.gamma), seed=seed, **{**self._engine_options(), "block_storage": block_storage})
            # Every fitted setting's thresholds at once (the fits' Newton steps evaluated together, on n_jobs threads).
            kept = [g for g, model in enumerate(models) if not isinstance(model, DivergenceError)]
            if kept:
                thresholds, intervals = self._fit_thresholds(train_scores[:, kept].T, codes, classes.size)
                for g, threshold, interval in zip(kept, thresholds, intervals):
                    models[g] = batch[g]._finish(X, codes, models[g], train_scores[:, g], (threshold, interval))
            fitted += models
        return fitted

    def _path_passes(self, n_settings):
        """Settings per pass of :meth:`fit_path` and its block storage; refuse models beyond ``max_memory``.

        A pass takes as many settings as keep their coefficients within half of
        ``max_memory`` (at least one).
        """
        setting_bytes = self.n_iter * 2 * self.n_components * 8
        if n_settings * setting_bytes > self.max_memory:
            raise ValueError(
                f"fit_path over {n_settings} settings would return models whose coefficients take "
                f"{n_settings * setting_bytes / 2**20:.3g} MiB ({n_settings} x n_iter={self.n_iter} x "
                f"2 n_components={2 * self.n_components} float64), more than max_memory="
                f"{self.max_memory / 2**20:.3g} MiB; pass fewer settings per call, lower n_iter or n_components, "
                f"or raise max_memory")
        per_pass = max(1, int(self.max_memory // (2 * setting_bytes)))
        several = per_pass < n_settings
        return per_pass, "regenerate" if several and self.block_storage == "auto" else self.block_storage

    def _resolve_schedule(self, weights, X, codes):
        """Set ``tradeoff_``, ``theta_`` and ``step_offset_`` for the validated split weights and training rows."""
        self.tradeoff_ = weights
        self.theta_ = 1.5 / self.lam if self.theta is None else float(self.theta)
        self.step_offset_ = resolve_step_offset(
            self.step_offset, theta=self.theta_, lam=float(self.lam), tradeoff=weights,
            data_curvature=lambda: data_curvature_bound(X, codes, weights, gamma=float(self.gamma),
                                                        random_state=self.seed_).bound)

    def _engine_options(self):
        return dict(block_storage=self.block_storage, max_memory=self.max_memory, dtype=_DTYPES[self.dtype],
                    n_jobs=self.n_jobs, trig_backend=self.trig_backend, step_backend=self.step_backend,
                    verbose=self.verbose)

    def _fit_thresholds(self, train_scores, codes, n_classes):
        """``(thresholds, intervals)`` of the labeled rows' scores (``train_scores`` of shape (n,) or (S, n))."""
        labeled = codes != UNLABELED
        return fit_thresholds(train_scores[..., labeled], codes[labeled], n_classes, self.threshold_loss,
                              return_intervals=True, n_jobs=resolve_n_jobs(self.n_jobs))

    def _finish(self, X, codes, model, train_scores, thresholds):
        """Store the trained model, its scores at the training rows and its ``(thresholds, intervals)``."""
        self._model, self.train_scores_ = model, np.ascontiguousarray(train_scores)
        self.thresholds_, self.threshold_intervals_ = thresholds
        self.coef_ = self._model.coef
        self.trig_backend_ = self._model.trig_backend
        self.n_iter_ = model.coef.shape[0]
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """The latent ranking function ``f(x)``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        return self._model.decision_function(X)
