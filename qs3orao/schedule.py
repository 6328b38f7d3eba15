r"""The step size ``eta_t = theta / (t + t0)`` and the offset ``t0`` that makes every step contracting.

Why the paper's ``t0 = 0`` blows up
-----------------------------------
The risk ``R`` is quadratic in ``f`` (squared pairwise loss), so an exact-kernel
functional step on the sampled risk ``R_t`` (Hessian ``S_t`` in the RKHS) maps
the error ``e_t = h_t - f*`` to

.. math::

    e_{t+1} = (I - \eta_t(\lambda I + S_t))\, e_t - \eta_t\, \epsilon_t ,

with ``epsilon_t`` the zero-mean sampling noise of the gradient at ``f*``.  The
direction of ``S_t`` with curvature ``mu`` is multiplied by
``|1 - eta_t (lam + mu)|``: with ``eta_1 = theta = 1.5 / lam`` and ``mu`` of
order 1 that is about ``1.5 mu / lam``, far above 1 for small ``lam``, and it
stays above 1 for every ``t < theta (lam + mu) / 2``.

The curvature bound
-------------------
For ``L(A, B) = mean_{a, b} (1 - f(a) + f(b))^2`` the Hessian in the RKHS is
``2 mean_{a, b} d_ab (x) d_ab`` with ``d_ab = k(b, .) - k(a, .)``, whose norm is at
most ``2 max ||d_ab||^2 = 2 max (k(a, a) + k(b, b) - 2 k(a, b)) <= 4 kappa`` for a
kernel with ``0 <= k <= kappa`` (the Gaussian kernel: ``kappa = 1``).
``R^j = gamma^j L(P, N) + (1 - gamma^j)(L(P, U) + L(U, N) - 1/2)`` and
``R = mean_j R^j`` therefore have curvature at most

.. math::

    \bar h = 4 \kappa \,\operatorname{mean}_j (2 - \gamma^j),

for the full risk *and for every sampled batch of every size*: it bounds each
``S_t``, not only their mean.  It needs no data (no pass over the rows, no
random estimate that could under-shoot), which is why ``"auto"`` uses it rather
than a power-iteration estimate of the full risk's largest curvature (that
estimate, smaller, bounds the mean ``E[S_t]`` but not the sampled ``S_t`` a
batch of one pair produces).

The offset
----------
``"auto"`` takes the smallest integer ``t0 >= 0`` with ``eta_1 (lam + h_bar) <= 1``,
i.e. ``t0 = ceil(theta (lam + h_bar) - 1)``.  As ``eta_t`` decreases,
``eta_t (lam + mu) <= 1`` then holds for every step and every curvature ``mu`` of
every sampled risk, so every factor ``1 - eta_t (lam + mu)`` lies in
``[0, 1 - eta_t lam]``: the linear part of every step is a contraction by at
least ``1 - eta_t lam`` in every direction, without oscillation.  ``< 2`` would
already give ``|1 - eta_t (lam + mu)| < 1``, but with a factor that tends to
``-1`` (sign flips with almost no decay) as ``eta_t (lam + mu)`` nears 2, so the
bias ``e_1`` would not decay at the rate ``prod_t (1 - eta_t lam)`` ~
``((1 + t0) / (t + t0))^{theta lam}`` that ``<= 1`` guarantees.  ``<= 1`` also
bounds the first step, ``eta_1 <= 1 / (lam + h_bar)``, and makes every shrink
factor ``1 - eta_t lam`` positive, so no coefficient is zeroed or flips sign.
(Random features replace ``k`` by ``phi_omega . phi_omega``, which can be negative, so the bound on ``f_t`` itself would be ``8 kappa``
instead of ``4 kappa``; the paper's analysis, which this follows, bounds the
feature error ``f_t - h_t`` separately, through the coefficients ``a_t^i``.)

The rate and the ``theta * lam`` condition are unchanged
--------------------------------------------------------
With ``eta_i = theta / (i + t0)`` the paper's coefficients
``a_t^i = -eta_i prod_{j=i+1}^t (1 - eta_j lam)`` satisfy

.. math::

    \frac{|a_t^i|}{|a_t^{i+1}|} = \frac{|i + 1 + t_0 - \theta\lambda|}{i + t_0} < 1
    \quad\text{for all } i \geq 1 \text{ when } 1 < \theta\lambda < 2 t_0 + 3,

the paper's Lemma 2 argument with ``i`` replaced by ``i + t0``, so
``|a_t^i| <= theta / (t + t0) <= theta / t`` and
``sum_i |a_t^i|^2 <= t theta^2 / (t + t0)^2 <= theta^2 / t``: the feature error
(Lemma 1) keeps its O(1/t) bound.  The data-error recursion of Lemma 3 becomes,
with ``s = t + t0``,

.. math::

    e_{s+1} \le \Bigl(1 - \frac{2\theta\lambda}{s}\Bigr) e_s
    + \frac{\beta_1}{s}\sqrt{\frac{e_s}{s}} + \frac{\beta_2}{s^2},
    \qquad s \ge 1 + t_0,

the paper's recursion with the same ``beta_1``, ``beta_2``, started at
``s = 1 + t0`` instead of 1.  Dai et al.'s Lemma 14 (needs ``2 theta lam > 1``,
the same condition) then gives ``e <= R / s`` with
``R = max{(1 + t0) ||f*||^2, R_0^2}``, i.e.
``E||h_{t+1} - f*||^2 <= R / (t + t0) <= R / t``: the same O(1/t) rate, under the
same condition ``theta lam in (1, 2)``, with only the
initial-error term of the constant multiplied by ``1 + t0``.  (The range
``1 < theta lam < 2 t0 + 3`` of the ratio argument contains the paper's
``(1, 2)`` for every ``t0``; under ``"auto"``, ``t0 > theta lam - 1``, it holds for
every ``theta lam > 1``, including the integers ``>= 4`` at which the paper's
Lemma 2 fails for ``t0 = 0``.)  What the offset changes is the transient the
bound hides: the paper's constants assume a bounded loss derivative ``M``, which the squared loss
has only while the scores stay bounded, and the expanding first steps are what
break that.

The data-based offset
---------------------
``h_bar`` is reached only by a sampled pair far apart in the kernel's metric; the
full risk's curvature ``h`` is often several times smaller (on the theory study's
instances ``h`` is about 1 against ``h_bar = 6``).  ``"auto-data"`` takes the same
``t0 = ceil(theta (lam + h_delta) - 1)`` with ``h_delta`` from
:func:`qs3orao.curvature.data_curvature_bound`: the exact largest curvature of
the mean of ``m`` sampled single-sample risks plus McDiarmid's margin
``h_bar sqrt(ln(1/delta) / (2m))`` (``m = 256``, ``delta = 0.01`` by default), capped
at ``h_bar``, so ``h <= h_delta`` with probability at least ``1 - delta`` over the
draws and the offset is never above ``"auto"``'s.  It guarantees less: every
*expected* step contracts (``eta_t (lam + h) <= 1``), not every sampled one.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .validation import plain

__all__ = ["AUTO", "AUTO_DATA", "curvature_bound", "contracting_offset", "auto_step_offset", "check_step_offset",
           "resolve_step_offset", "step_size"]

AUTO = "auto"
AUTO_DATA = "auto-data"
_NAMED = (AUTO, AUTO_DATA)


def curvature_bound(tradeoff, kernel_bound=1.0):
    """Largest curvature any (sampled) ordinal PNU risk can have in the RKHS.

    Parameters
    ----------
    tradeoff : array-like of shape (k - 1,)
        The per-split weights ``gamma^j`` in [0, 1].
    kernel_bound : float, default=1.0
        ``kappa`` with ``0 <= k(x, x') <= kappa``; 1 for the Gaussian kernel.

    Returns
    -------
    float
        ``4 kappa mean_j (2 - gamma^j)``.

    Examples
    --------
    >>> curvature_bound([0.5, 0.5, 0.5])
    6.0
    """
    tradeoff = np.asarray(tradeoff, dtype=np.float64)
    return float(4.0 * kernel_bound * np.mean(2.0 - tradeoff))


def contracting_offset(theta, lam, curvature, *, name=AUTO):
    """Smallest integer ``t0 >= 0`` with ``theta / (1 + t0) * (lam + curvature) <= 1``.

    Parameters
    ----------
    theta, lam : float
    curvature : float
        An upper bound on the curvature the offset must tame.
    name : str, default="auto"
        The ``step_offset`` value being resolved, for the error message.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        When ``theta * (lam + curvature)`` overflows.

    Examples
    --------
    >>> contracting_offset(theta=30.0, lam=0.05, curvature=1.0)
    31
    """
    stiffness = lam + curvature
    product = theta * stiffness
    if not math.isfinite(product):
        raise ValueError(f"theta * (lam + curvature bound) = {plain(theta)} * {plain(stiffness)} overflows; "
                         f"step_offset={plain(name)} needs a finite product (a smaller theta)")
    offset = max(0, math.ceil(product - 1.0))
    # Guard the rounding of theta * stiffness: the defining inequality must hold exactly.  Above
    # 2**53, ``1.0 + offset`` moves only by whole spacings of the floats, so step by at least one of them.
    while theta / (1.0 + offset) * stiffness > 1.0:
        offset = max(offset + 1, math.ceil(math.nextafter(1.0 + offset, math.inf)))
    return offset


def auto_step_offset(theta, lam, tradeoff):
    """Smallest integer ``t0 >= 0`` with ``theta / (1 + t0) * (lam + h_bar) <= 1``.

    Parameters
    ----------
    theta, lam : float
    tradeoff : array-like of shape (k - 1,)

    Returns
    -------
    int

    Examples
    --------
    >>> auto_step_offset(theta=30.0, lam=0.05, tradeoff=[0.5, 0.5, 0.5])
    181
    """
    return contracting_offset(theta, lam, curvature_bound(tradeoff))


def resolve_step_offset(step_offset, *, theta, lam, tradeoff, data_curvature=None):
    """The numeric offset ``t0`` for a ``step_offset`` parameter (a number >= 0, ``"auto"`` or ``"auto-data"``).

    Parameters
    ----------
    step_offset : float >= 0, "auto" or "auto-data"
    theta, lam : float
    tradeoff : array-like of shape (k - 1,)
    data_curvature : callable, optional
        Returns the data-based curvature bound (e.g. the ``bound`` of
        :func:`qs3orao.curvature.data_curvature_bound`); called only for ``"auto-data"``, which needs it.

    Raises
    ------
    ValueError, TypeError
        When ``step_offset`` is neither a finite number >= 0 nor one of the named values, or
        ``"auto-data"`` comes without ``data_curvature``.
    """
    value = check_step_offset(step_offset)
    if value == AUTO:
        return float(auto_step_offset(theta, lam, tradeoff))
    if value == AUTO_DATA:
        if data_curvature is None:
            raise ValueError(f"step_offset={AUTO_DATA!r} needs the data (data_curvature); "
                             f"it is resolved when fitting")
        return float(contracting_offset(theta, lam, float(data_curvature()), name=AUTO_DATA))
    return value


def check_step_offset(step_offset):
    """The offset ``t0`` as a float for a number ``>= 0``; ``"auto"`` and ``"auto-data"`` are returned unchanged.

    Needs no data, so an estimator's parameter checks (and the pipeline's plan) run it before fitting.
    A Python integer too large for a float is refused, not rounded to infinity.

    Raises
    ------
    ValueError, TypeError
        When ``step_offset`` is neither one of the named values nor a finite number >= 0.
    """
    if isinstance(step_offset, str):
        if step_offset not in _NAMED:
            raise ValueError(f"step_offset must be a number >= 0, {AUTO!r} or {AUTO_DATA!r} (lower case), "
                             f"got {plain(step_offset)}")
        return step_offset
    if isinstance(step_offset, bool) or not isinstance(step_offset, numbers.Real):
        raise TypeError(f"step_offset must be a number >= 0, {AUTO!r} or {AUTO_DATA!r}, "
                        f"got {type(step_offset).__name__}")
    try:
        value = float(step_offset)
    except OverflowError:
        raise ValueError(f"step_offset must be a finite number >= 0 or {AUTO!r}; {plain(step_offset)} does not fit "
                         f"in a float") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"step_offset must be a finite number >= 0 or {AUTO!r}, got {plain(step_offset)}")
    return value


def step_size(t, *, theta, step_offset):
    """``eta_t = theta / (t + step_offset)`` for the 1-based iteration ``t``."""
    return theta / (t + step_offset)
