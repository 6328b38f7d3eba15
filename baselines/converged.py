"""QS3ORAO with its iteration count set by a stated convergence criterion instead of a fixed number.

The best-effort protocol (issue 19) runs QS3ORAO on the stable step
(``step_offset="auto"``) with as many iterations as it needs: the count is
doubled until one more doubling moves the training rows' scores by less than
``tol`` (relative Euclidean change), up to ``max_iter``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from qs3orao import QS3ORAO
from qs3orao.validation import check_positive

__all__ = ["ConvergedQS3ORAO", "relative_change"]


def relative_change(before, after):
    """``||after - before|| / ||after||`` (``inf`` when ``after`` is zero and they differ)."""
    scale = np.linalg.norm(after)
    difference = np.linalg.norm(np.asarray(after) - np.asarray(before))
    if scale == 0:
        return 0.0 if difference == 0 else np.inf
    return float(difference / scale)


class ConvergedQS3ORAO(QS3ORAO):
    """:class:`qs3orao.QS3ORAO` fitted with ``n_iter, 2 n_iter, 4 n_iter, ...`` iterations until converged.

    Each fit starts afresh from the same seed.  The criterion: the last
    doubling changed the training scores by at most ``tol`` relative to their
    norm, :func:`relative_change`.  The kept model is the last fit.  The
    doublings cost at most twice the final fit.

    Parameters
    ----------
    tol : float, default=0.02
        Largest relative change of the training scores over the last doubling.
    max_iter : int, default=64000
        Largest iteration count tried; reaching it unconverged warns (``converged_`` False).
    **params
        Every parameter of :class:`qs3orao.QS3ORAO`; ``n_iter`` is the first count tried.

    Attributes
    ----------
    converged_ : bool
    history_ : list of (int, float)
        ``(iterations, relative change against the fit with half as many)`` of every doubling.
    (every fitted attribute of :class:`qs3orao.QS3ORAO`; ``n_iter_`` is the count kept)
    """

    def __init__(self, *, n_iter=2000, batch_size=16, n_components=32, gamma=1.0, lam=1.0, theta=None,
                 step_offset="auto", tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 block_storage="auto", max_memory=256 * 2**20, dtype="float64", n_jobs=None, random_state=None,
                 verbose=False, tol=0.02, max_iter=64000):
        super().__init__(n_iter=n_iter, batch_size=batch_size, n_components=n_components, gamma=gamma, lam=lam,
                         theta=theta, step_offset=step_offset, tradeoff=tradeoff, threshold_loss=threshold_loss,
                         classes=classes, block_storage=block_storage, max_memory=max_memory, dtype=dtype,
                         n_jobs=n_jobs, random_state=random_state, verbose=verbose)
        self.tol = tol
        self.max_iter = max_iter

    def _check_params(self):
        super()._check_params()
        check_positive(self.tol, "tol")
        check_positive(self.max_iter, "max_iter", integer=True)
        if self.max_iter < self.n_iter:
            raise ValueError(f"max_iter must be at least n_iter ({self.n_iter}), got {self.max_iter}")

    def _fit_once(self, X, y, n_iter):
        params = {k: v for k, v in self.get_params().items() if k not in ("tol", "max_iter")}
        return QS3ORAO(**{**params, "n_iter": n_iter}).fit(X, y)

    def fit(self, X, y):
        """Fit with doubling iteration counts until the training scores settle (see the class docstring).

        Returns
        -------
        self
        """
        self._check_params()
        model = self._fit_once(X, y, self.n_iter)
        history, converged = [], False
        while 2 * model.n_iter_ <= self.max_iter:
            longer = self._fit_once(X, y, 2 * model.n_iter_)
            change = relative_change(model.train_scores_, longer.train_scores_)
            history.append((longer.n_iter_, change))
            model = longer
            if change <= self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(f"QS3ORAO's training scores still moved by more than tol={self.tol:g} when the iterations "
                          f"were doubled to {model.n_iter_} (max_iter={self.max_iter}); history {history}",
                          ConvergenceWarning, stacklevel=2)
        for name, value in vars(model).items():
            if name.endswith("_") and not name.startswith("__"):
                setattr(self, name, value)
        self._model = model._model
        self.converged_, self.history_ = converged, history
        return self
