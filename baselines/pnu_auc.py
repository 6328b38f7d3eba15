"""M-PNU-AUC: PNU-AUC (Sakai, Niu and Sugiyama, 2018) trained once per ordinal split."""

from __future__ import annotations

import warnings

import numpy as np

from qs3orao.validation import UNLABELED, check_positive, check_semisupervised, check_shared_params, plain
from qs3orao.kernels import resolve_seed

from ._budget import FLOAT_BYTES, check_budget, chunk_bytes, takes_low_memory
from ._common import SplitwiseModel, check_split_values, check_threshold_loss, kernel_map, kernel_scores
from .kernel_cache import cached, caching
from qs3orao.quadratic import GroupMoments, pnu_risk, solve_feature_space, solve_feature_space_path
from .prior import labeled_frequency_priors, split_priors

__all__ = ["MPNUAUC", "PRIOR_RANGE", "PRIOR_SOURCES"]

PRIOR_RANGE = (0.01, 0.99)
#: How ``priors`` may be obtained when not given as numbers.
PRIOR_SOURCES = ("energy_distance", "labeled_frequency")


class MPNUAUC(SplitwiseModel):
    r"""Multi-class PNU-AUC: one semi-supervised AUC model per ordinal split.

    For split ``j`` (positives: class ``> j``, negatives: class ``<= j``, plus
    every unlabeled row) it minimises, in closed form,

    .. math::

        \frac{\lambda}{2}\|\alpha_j\|^2 + R^{\mathrm{mix}_j}_{PNU}(f_j), \qquad
        f_j(x) = \sum_{c} \alpha_{j,c} \exp(-\gamma \|x - x_c\|^2),

    where ``R_PNU`` combines the PN risk with the prior-corrected PU risk
    (``pnu_mix >= 0``) or NU risk (``pnu_mix < 0``), see
    :func:`qs3orao.quadratic.pnu_risk`.  As in the original code
    (``PNU_AUC_SL.m``) the model is linear in Gaussian basis functions with an
    ``l2`` penalty on the coefficients (not the RKHS norm) and the risk's
    pairwise means come from per-set feature means and second moments, so each
    split is one ``b x b`` linear system.  The original's ``lambda`` equals
    ``lam / 2`` here and its width ``sigma`` equals ``1 / sqrt(2 gamma)``.

    Parameters
    ----------
    gamma : float, default=1.0
        Kernel parameter of ``exp(-gamma ||x - x'||^2)``.
    lam : float, default=1.0
        Weight ``lambda`` of ``lambda/2 ||alpha||^2``.
    pnu_mix : float or array-like of shape (k - 1,), default=0.0
        PN/PU (``pnu_mix > 0``) or PN/NU (``pnu_mix < 0``) combination weight in [-1, 1],
        per split or shared; ``0`` is supervised PN-AUC.  Sakai et al. call it ``eta``;
        here ``eta`` is only the step size ``eta_t`` of QS3ORAO.
    priors : array-like of shape (k - 1,), "energy_distance" or "labeled_frequency", optional
        Known ``P(class > j)`` among the unlabeled rows, in (0, 1), or how to
        estimate them: "energy_distance" (the default, also for None) by
        energy-distance minimisation (:func:`baselines.prior.split_priors`, as
        PNU-AUC's original code does), "labeled_frequency" from the labeled
        rows' class frequencies (:func:`baselines.prior.labeled_frequency_priors`,
        unbiased when the labeled rows are a uniform sample).  Estimates are
        clipped to ``PRIOR_RANGE``, with a warning, since the PU and NU risks
        divide by the prior and its complement.
    n_basis : int, optional
        Number of kernel centres drawn from all training rows (the original
        code's ``n_basis``).  Default: every training row is a centre, the exact
        setting, O(n^3) time and O(k n^2) memory (O(n^2) with ``low_memory``).
    threshold_loss : {"ordinal_logistic", "hinge", "squared_hinge", "logistic"}, default="ordinal_logistic"
        Surrogate for the per-split thresholds used by ``predict``.
    classes : array-like, optional
        The full ordered label set.
    random_state : int, numpy Generator or None
        Seed of the centre subsample (used only with ``n_basis``).
    memory_budget : int, optional
        Bytes the fit may allocate; None means half of the available memory.
    low_memory : bool or None, default=None
        True: each split's ``b x b`` system is summed from the kernel rows on its
        own (one ``b x b`` matrix instead of one per class; one pass over the rows
        per split); False: the per-class moments are summed once and every split's
        system is their weighted sum (one pass); None: the latter when it fits
        ``memory_budget``, else the former.  Both give the same model to rounding.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    centres_ : ndarray of shape (b, n_features)
    coef_ : ndarray of shape (k - 1, b)
    priors_ : ndarray of shape (k - 1,)
        The priors used (NaN when no unlabeled rows were given).
    pnu_mix_ : ndarray of shape (k - 1,)
    thresholds_ : ndarray of shape (k - 1,)
    train_scores_ : ndarray of shape (n_samples, k - 1)
    memory_estimate_ : int
        Bytes the fit was estimated to allocate.
    low_memory_ : bool
        Whether the fit took the low-memory solver.
    n_features_in_ : int
    """

    def __init__(self, *, gamma=1.0, lam=1.0, pnu_mix=0.0, priors=None, n_basis=None, threshold_loss="ordinal_logistic",
                 classes=None, random_state=None, memory_budget=None, low_memory=None):
        self.gamma = gamma
        self.lam = lam
        self.pnu_mix = pnu_mix
        self.priors = priors
        self.n_basis = n_basis
        self.threshold_loss = threshold_loss
        self.classes = classes
        self.random_state = random_state
        self.memory_budget = memory_budget
        self.low_memory = low_memory

    def estimate_memory(self, n_samples, n_features, n_classes, n_labeled=None):
        """Bytes a fit allocates (the signature of :mod:`baselines._budget`), with the solver it takes.

        The fast solver holds one ``b x b`` moment per class and for the unlabeled rows
        (``b``: ``n_basis`` or every row) and the system; the low-memory one a split's
        system and a second ``b x b`` matrix (a path's eigenvectors, or the system made
        again when a non-convex risk falls back from Cholesky).  Both add the centres,
        the scores, and the larger of the row chunks of the prior estimation (labeled x
        all distances) and of the moment pass.  Unlabeled rows (``n_labeled < n_samples``)
        add their moment and the prior estimation, so the default, every row labeled, is
        no upper bound.
        """
        fast, low = self._solver_bytes(n_samples, n_features, n_classes, n_labeled)
        return low if takes_low_memory(self.low_memory, fast, self.memory_budget) else fast

    def _solver_bytes(self, n_samples, n_features, n_classes, n_labeled):
        """Bytes of the fast and of the low-memory solver (see :meth:`estimate_memory`)."""
        b = n_samples if self.n_basis is None else min(self.n_basis, n_samples)
        n_labeled = n_samples if n_labeled is None else n_labeled
        n_atoms = n_classes + int(n_labeled < n_samples)
        prior_chunk = chunk_bytes(n_labeled, n_samples, copies=3) if n_labeled < n_samples else 0
        shared = (FLOAT_BYTES * (b * n_features + 2 * n_classes * n_samples)
                  + max(prior_chunk, chunk_bytes(n_samples, b, copies=2)))
        return (GroupMoments.nbytes(n_atoms, n_atoms, b) + FLOAT_BYTES * b * b + shared,
                GroupMoments.nbytes(2, n_atoms, b) + shared)

    def _check_params(self):
        check_positive(self.gamma, "gamma")
        check_positive(self.lam, "lam")
        check_threshold_loss(self.threshold_loss)
        if self.n_basis is not None:
            check_positive(self.n_basis, "n_basis", integer=True)
        if isinstance(self.priors, str) and self.priors not in PRIOR_SOURCES:
            raise ValueError(f"priors must be numbers or one of {PRIOR_SOURCES}, got {plain(self.priors)}")
        check_shared_params(self)

    def _resolve_priors(self, X, codes, n_splits):
        if not np.any(codes == UNLABELED):
            return np.full(n_splits, np.nan)
        if isinstance(self.priors, str) and self.priors == "labeled_frequency":
            estimate = labeled_frequency_priors(codes, n_splits + 1)
        elif self.priors is None or isinstance(self.priors, str):
            estimate = cached("split_priors", (X, codes), (n_splits + 1,),
                              lambda: split_priors(X, codes, n_splits + 1))
        else:
            return check_split_values(self.priors, n_splits, "priors", 0.0, 1.0, open_ends=True)
        clipped = np.clip(estimate, *PRIOR_RANGE)
        if not np.array_equal(clipped, estimate):
            warnings.warn(f"estimated class priors {estimate.round(3).tolist()} clipped to {PRIOR_RANGE}",
                          RuntimeWarning, stacklevel=3)
        return clipped

    def fit(self, X, y):
        """Fit one PNU-AUC model per split on labeled rows and unlabeled rows (``y == -1``).

        Returns
        -------
        self
        """
        X, codes, (features, moments_for) = self._prepare(X, y)
        coef = np.array([solve_feature_space(moments_for(risk), risk, self.lam) for risk in self.risks_])
        del moments_for
        return self._finish(X, codes, (features, None), coef)

    def _prepare(self, X, y, path=False):
        """Validate, choose the solver and check its budget, estimate the priors, choose the centres.

        Returns ``moments_for(risk)``, the moments a split's solve takes: the per-class moments,
        accumulated here (the fast solver), or ones weighted for that risk, accumulated when asked
        (the low-memory solver).  The fast path solver's eigenvectors take no more than the moments
        a separate solve factors in place.
        """
        self._check_params()
        X, codes, self.classes_, _ = check_semisupervised(X, y, classes=self.classes)
        n_splits = self.classes_.size - 1
        self.pnu_mix_ = check_split_values(self.pnu_mix, n_splits, "pnu_mix", -1.0, 1.0)
        has_unlabeled = bool(np.any(codes == UNLABELED))
        if np.any(self.pnu_mix_ != 0) and not has_unlabeled:
            raise ValueError("no unlabeled rows (y == -1) were given, but some pnu_mix is nonzero; "
                             "use pnu_mix=0 for a purely supervised fit")
        n_centres = X.shape[0] if self.n_basis is None else min(self.n_basis, X.shape[0])
        # In a search (a reuse_kernels block) the rows' kernel features are kept too (baselines._common.in_chunks).
        kept = FLOAT_BYTES * X.shape[0] * n_centres if caching() else 0
        fast, low = self._solver_bytes(*X.shape, self.classes_.size, int(np.sum(codes != UNLABELED)))
        self.low_memory_ = takes_low_memory(self.low_memory, fast + kept, self.memory_budget)
        self.memory_estimate_ = check_budget("M-PNU-AUC (low-memory solver)" if self.low_memory_ else "M-PNU-AUC",
                                             (low if self.low_memory_ else fast) + kept, self.memory_budget)
        self.priors_ = self._resolve_priors(X, codes, n_splits)
        if self.n_basis is None:
            self.centres_ = X
        else:
            rng = np.random.default_rng(resolve_seed(self.random_state))
            self.centres_ = X[np.sort(rng.choice(X.shape[0], n_centres, replace=False))]
        features = kernel_map(self.centres_, self.gamma)
        b = self.centres_.shape[0]
        if self.low_memory_:
            def moments_for(risk):
                return GroupMoments.accumulate(features, X, codes, b, risk)
        else:
            moments = cached("pnu_moments", (self.centres_, X, codes), (self.gamma,),
                             lambda: GroupMoments.accumulate(features, X, codes, b))

            def moments_for(risk):
                return moments
        self.risks_ = [pnu_risk(j, n_splits + 1, pnu_mix, prior)
                       for j, (pnu_mix, prior) in enumerate(zip(self.pnu_mix_, self.priors_))]
        return X, codes, (features, moments_for)

    def _solve_path(self, prepared, codes, lams):
        """Coefficients of every split for every ``lam``, shape ``(len(lams), k - 1, b)``."""
        _, moments_for = prepared
        return np.stack([solve_feature_space_path(moments_for(risk), risk, lams) for risk in self.risks_], axis=1)

    def _finish(self, X, codes, prepared, coef):
        self.coef_ = coef
        self.n_features_in_ = X.shape[1]
        self.train_scores_ = kernel_scores(X, self.centres_, self.gamma, self.coef_.T)
        self._fit_thresholds(self.train_scores_, codes)
        return self
