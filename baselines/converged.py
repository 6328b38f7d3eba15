"""QS3ORAO with its iteration count set by a stated convergence criterion instead of a fixed number.

The best-effort protocol runs QS3ORAO on the stable step
(``step_offset="auto"``) with as many iterations as it needs: the count is
doubled until one more doubling changes the training risk ``R_mu(f)`` (the
data term of the objective, Equation (9), over every training row) by less
than ``tol`` relative to its value, up to ``max_iter``.

Why the risk and not the scores: with random features the scores keep a noise
floor, so they go on moving by a few percent per doubling after the fit has
settled; the risk is a mean over all pairs and settles when the fit does.

A small change is not always a settled risk: at a small ``lam`` the stable
step's run can start slowly, its risk falling by more with every doubling, the
first by less than ``tol``. ``require_falling=True`` accepts a small change
only once it is smaller than the change at the doubling before.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from qs3orao import QS3ORAO
from qs3orao.objective import ordinal_risk_value
from qs3orao.validation import check_positive

__all__ = ["ConvergedQS3ORAO", "relative_change"]


def relative_change(before, after):
    """``|after - before| / |after|`` (``inf`` when ``after`` is zero and they differ)."""
    difference = abs(float(after) - float(before))
    if after == 0:
        return 0.0 if difference == 0 else np.inf
    return difference / abs(float(after))


class ConvergedQS3ORAO(QS3ORAO):
    """:class:`qs3orao.QS3ORAO` fitted with ``n_iter, 2 n_iter, 4 n_iter, ...`` iterations until converged.

    One run of the engine: the training risk ``R_mu(f)`` is read after
    ``n_iter, 2 n_iter, 4 n_iter, ...`` iterations, and the run stops at the
    first reading that moved by at most ``tol`` relative to its value since
    the one before (:func:`relative_change`), so the doublings cost the final
    count's iterations, not twice as many.  The iterations are the plain fit's
    (same rows, blocks and steps from the same seed), so the kept model is
    the plain fit of that many iterations up to rounding: its steps are
    grouped differently around the readings (:func:`qs3orao.engine.train`).

    Parameters
    ----------
    tol : float, default=0.01
        Largest relative change of the training risk over the last doubling.
    max_iter : int, default=32000
        Largest iteration count tried; reaching it unconverged warns (``converged_`` False).
    require_falling : bool, default=False
        Also require the change to be smaller than at the doubling before (so the first reading,
        with none before it, never stops the run).
    **params
        Every parameter of :class:`qs3orao.QS3ORAO`; ``n_iter`` is the first count tried.

    Attributes
    ----------
    converged_ : bool
    history_ : list of (int, float, float)
        ``(iterations, training risk, relative change against the reading at half as many)`` of every doubling.
    (every fitted attribute of :class:`qs3orao.QS3ORAO`; ``n_iter_`` is the count kept)
    """

    #: Each setting stops at its own count, so settings cannot share one pass: the tuning fits them one by one.
    PATH_PARAMS = ()
    #: The parameters of the stopping criterion, the ones :class:`qs3orao.QS3ORAO` does not take.
    CRITERION_PARAMS = ("tol", "max_iter", "require_falling")

    def __init__(self, *, n_iter=2000, batch_size=16, n_components=32, gamma=1.0, lam=1.0, theta=None,
                 step_offset="auto", tradeoff=0.5, threshold_loss="ordinal_logistic", classes=None,
                 block_storage="auto", max_memory=256 * 2**20, dtype="float64", n_jobs=None, trig_backend="auto",
                 step_backend="numpy", random_state=None, verbose=False, tol=0.01, max_iter=32000,
                 require_falling=False):
        super().__init__(n_iter=n_iter, batch_size=batch_size, n_components=n_components, gamma=gamma, lam=lam,
                         theta=theta, step_offset=step_offset, tradeoff=tradeoff, threshold_loss=threshold_loss,
                         classes=classes, block_storage=block_storage, max_memory=max_memory, dtype=dtype,
                         n_jobs=n_jobs, trig_backend=trig_backend, step_backend=step_backend,
                         random_state=random_state, verbose=verbose)
        self.tol = tol
        self.max_iter = max_iter
        self.require_falling = require_falling

    def _check_params(self):
        super()._check_params()
        check_positive(self.tol, "tol")
        check_positive(self.max_iter, "max_iter", integer=True)
        if self.max_iter < self.n_iter:
            raise ValueError(f"max_iter must be at least n_iter ({self.n_iter}), got {self.max_iter}")
        if not isinstance(self.require_falling, (bool, np.bool_)):
            raise ValueError(f"require_falling must be True or False, got {self.require_falling!r}")

    def fit(self, X, y):
        """Fit with doubling iteration counts until the training risk settles (see the class docstring).

        Returns
        -------
        self
        """
        super().fit(X, y)
        monitor = self.__dict__.pop("_monitor")  # set by _run_length; it holds the training codes
        self.converged_, self.history_ = monitor.converged, monitor.history
        if not self.converged_:
            history = "; ".join(f"{n}: {risk:.6g}, {change:.3g}" for n, risk, change in self.history_)
            falling = ", or by a change not smaller than the one before," if self.require_falling else ""
            warnings.warn(f"QS3ORAO's training risk still moved by more than tol={self.tol:g}{falling} when the "
                          f"iterations were doubled to {self.n_iter_} (max_iter={self.max_iter}); history "
                          f"(iterations: risk, relative change) {history}", ConvergenceWarning, stacklevel=2)
        return self

    def _run_length(self, codes, weights):
        checkpoints = [self.n_iter]
        while 2 * checkpoints[-1] <= self.max_iter:
            checkpoints.append(2 * checkpoints[-1])
        self._monitor = _RiskMonitor(codes, weights, self.tol, bool(self.require_falling))
        return {"n_iter": checkpoints[-1], "checkpoints": checkpoints, "stop": self._monitor}

    def fit_path(self, X, y, settings):
        """Not available: each setting stops at its own count (fit the settings one by one).

        Raises
        ------
        NotImplementedError
            Always; :meth:`qs3orao.QS3ORAO.fit_path` would give fixed-count fits.
        """
        raise NotImplementedError("ConvergedQS3ORAO has no fit_path: each setting stops at its own iteration count, "
                                  "so fit the settings one by one")


class _RiskMonitor:
    """``stop(iteration, scores)`` for :func:`qs3orao.engine.train`: True once a doubling moved the risk by at most
    ``tol`` (and, with ``require_falling``, by less than the doubling before)."""

    def __init__(self, codes, weights, tol, require_falling=False):
        self.codes, self.weights, self.tol, self.require_falling = codes, weights, tol, require_falling
        self.risk, self.history, self.converged = None, [], False

    def __call__(self, iteration, scores):
        return self.read(iteration, ordinal_risk_value(scores, self.codes, self.weights))

    def read(self, iteration, risk):
        """Record the risk reading at ``iteration``; True once the criterion holds."""
        if self.risk is not None:
            change = relative_change(self.risk, risk)
            before = self.history[-1][2] if self.history else None
            self.history.append((iteration, risk, change))
            self.converged = change <= self.tol and (
                not self.require_falling or (before is not None and change < before))
        self.risk = risk
        return self.converged
