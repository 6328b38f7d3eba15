"""QS3ORAO with its iteration count set by a stated convergence criterion instead of a fixed number.

The best-effort protocol (issue 19) runs QS3ORAO on the stable step
(``step_offset="auto"``) with as many iterations as it needs: the count is
doubled until one more doubling changes the training risk ``R_mu(f)`` (the
data term of the objective, Equation (9), over every training row) by less
than ``tol`` relative to its value, up to ``max_iter``.

Why the risk and not the scores: with random features the scores keep a noise
floor (on uci_kin40k, 500 labeled + 2,000 unlabeled rows, relative gamma 1,
lam 2^-3, doubling from 4,000 to 32,000 iterations moved them by 4-5 % each
time while the risk moved by 0.2 %); the risk is a mean over all pairs and
settles when the fit does (lam 2^-8: 3.9 %, then 1.4 % from 4,000 to 8,000).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from qs3orao import QS3ORAO
from qs3orao.objective import ordinal_risk
from qs3orao.validation import check_positive, check_semisupervised

__all__ = ["ConvergedQS3ORAO", "relative_change"]


def relative_change(before, after):
    """``|after - before| / |after|`` (``inf`` when ``after`` is zero and they differ)."""
    difference = abs(float(after) - float(before))
    if after == 0:
        return 0.0 if difference == 0 else np.inf
    return difference / abs(float(after))


class ConvergedQS3ORAO(QS3ORAO):
    """:class:`qs3orao.QS3ORAO` fitted with ``n_iter, 2 n_iter, 4 n_iter, ...`` iterations until converged.

    Each fit starts afresh from the same seed.  The criterion: the last
    doubling changed the training risk ``R_mu(f)`` by at most ``tol`` relative
    to its value (:func:`relative_change`).  The kept model is the last fit.
    The doublings cost at most twice the final fit.

    Parameters
    ----------
    tol : float, default=0.01
        Largest relative change of the training risk over the last doubling.
    max_iter : int, default=32000
        Largest iteration count tried; reaching it unconverged warns (``converged_`` False).
    **params
        Every parameter of :class:`qs3orao.QS3ORAO`; ``n_iter`` is the first count tried.

    Attributes
    ----------
    converged_ : bool
    history_ : list of (int, float, float)
        ``(iterations, training risk, relative change against the fit with half as many)`` of every doubling.
    (every fitted attribute of :class:`qs3orao.QS3ORAO`; ``n_iter_`` is the count kept)
    """

    def __init__(self, *, n_iter=2000, batch_size=16, n_components=32, gamma=1.0, lam=1.0, theta=None,
                 step_offset="auto", tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 block_storage="auto", max_memory=256 * 2**20, dtype="float64", n_jobs=None, trig_backend="auto",
                 random_state=None, verbose=False, tol=0.01, max_iter=32000):
        super().__init__(n_iter=n_iter, batch_size=batch_size, n_components=n_components, gamma=gamma, lam=lam,
                         theta=theta, step_offset=step_offset, tradeoff=tradeoff, threshold_loss=threshold_loss,
                         classes=classes, block_storage=block_storage, max_memory=max_memory, dtype=dtype,
                         n_jobs=n_jobs, trig_backend=trig_backend, random_state=random_state, verbose=verbose)
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
        """Fit with doubling iteration counts until the training risk settles (see the class docstring).

        Returns
        -------
        self
        """
        self._check_params()
        _, codes, _, weights = check_semisupervised(X, y, tradeoff=self.tradeoff, classes=self.classes)
        model = self._fit_once(X, y, self.n_iter)
        risk = ordinal_risk(model.train_scores_, codes, weights)[0]
        history, converged = [], False
        while 2 * model.n_iter_ <= self.max_iter:
            model = self._fit_once(X, y, 2 * model.n_iter_)
            longer = ordinal_risk(model.train_scores_, codes, weights)[0]
            change = relative_change(risk, longer)
            history.append((model.n_iter_, longer, change))
            risk = longer
            if change <= self.tol:
                converged = True
                break
        if not converged:
            warnings.warn(f"QS3ORAO's training risk still moved by more than tol={self.tol:g} when the iterations "
                          f"were doubled to {model.n_iter_} (max_iter={self.max_iter}); history {history}",
                          ConvergenceWarning, stacklevel=2)
        for name, value in vars(model).items():
            if name.endswith("_") and not name.startswith("__"):
                setattr(self, name, value)
        self._model = model._model
        self.converged_, self.history_ = converged, history
        return self
