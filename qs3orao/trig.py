"""The trigonometric part of the random-feature passes, with a choice of backend.

Two backends compute the same numbers, to rounding (every score within ``1e-12``
times the sum of the coefficients' magnitudes):

* ``"numpy"``: one matrix product, then ``numpy.sin`` and ``numpy.cos`` into
  buffers (and, for an evaluation, two matrix-vector products with the
  coefficients).  Always available.
* ``"numba"``: the same matrix product, then one compiled loop that computes
  ``cos`` and ``sin`` of each projection together (one range reduction, two
  polynomials) and, for an evaluation, adds them times the coefficients straight
  into the scores without writing the features anywhere.  The loop runs over
  rows in the innermost position, so it is vectorised without reordering any
  sum: each row's terms are added in column order, whatever the chunking or
  the number of threads.  Needs the optional dependency numba
  (``pip install "qs3orao[fast]"``).

``"auto"`` chooses numba in float64 when it can be imported, numpy otherwise
(in float32 numpy's own vectorised ``sin``/``cos`` are faster than the compiled
loop, which evaluates its polynomials in float64); the choice is
returned by :func:`resolve_trig_backend` and recorded by whoever calls it (for
example :attr:`qs3orao.QS3ORAO.trig_backend_`), never made silently.

The compiled ``sincos`` reduces ``p = k pi/2 + r`` with ``|r| <= pi/4`` (``pi/2``
split in three parts of 33, 33 and 53 bits, so that ``k pi/2`` is exact for
``|k| < 2^20``) and evaluates the Taylor series of ``sin`` to degree 15 and of
``cos`` to degree 16, whose truncation errors at ``|r| = pi/4`` are below
``5e-17``.  A chunk with a projection beyond ``REDUCTION_LIMIT`` (far outside
any useful kernel width) is computed with the C library's ``sin`` and ``cos``
instead, in the same compiled loop.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ._sincos_constants import REDUCTION_LIMIT
from .validation import plain

__all__ = ["TRIG_BACKENDS", "REDUCTION_LIMIT", "resolve_trig_backend", "features", "accumulate"]

TRIG_BACKENDS = ("auto", "numba", "numpy")


def resolve_trig_backend(trig_backend, dtype=np.float64):
    """The backend that ``trig_backend`` stands for: ``"numba"`` or ``"numpy"``.

    Parameters
    ----------
    trig_backend : {"auto", "numba", "numpy"}
        "auto" is numba for float64 when it can be imported, numpy otherwise.
    dtype : {numpy.float64, numpy.float32}
        Precision of the projections.

    Raises
    ------
    ValueError
        If ``trig_backend`` is not one of :data:`TRIG_BACKENDS`.
    ImportError
        If ``trig_backend="numba"`` and numba cannot be imported.
    """
    if not isinstance(trig_backend, str) or trig_backend not in TRIG_BACKENDS:
        raise ValueError(f"trig_backend must be one of {TRIG_BACKENDS}, got {plain(trig_backend)}")
    if trig_backend == "numpy" or (trig_backend == "auto" and np.dtype(dtype) != np.float64):
        return "numpy"
    try:
        _kernels()
    except ImportError as error:
        if trig_backend == "numba":
            raise ImportError(f"trig_backend='numba' needs numba, which cannot be imported ({error}); install "
                              f"it with pip install 'qs3orao[fast]', or choose trig_backend='numpy'") from error
        return "numpy"
    return "numba"


@cache
def _kernels():
    """The numba loops ``(features_inplace, accumulate_transposed)``; ImportError without numba."""
    from . import _trig_numba

    return _trig_numba.features_inplace, _trig_numba.accumulate_transposed


def features(X, omega, cos_out, sin_out, backend):
    """``cos(X omega^T)`` and ``sin(X omega^T)`` into the given C-contiguous buffers.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    omega : ndarray of shape (columns, d)
    cos_out, sin_out : ndarray of shape (n, columns)
    backend : {"numba", "numpy"}
        A resolved backend (:func:`resolve_trig_backend`).
    """
    if not (cos_out.flags.c_contiguous and sin_out.flags.c_contiguous):
        raise ValueError("cos_out and sin_out must be C-contiguous")
    np.matmul(X, omega.T, out=cos_out)
    if backend == "numba":
        _kernels()[0](cos_out.reshape(-1), sin_out.reshape(-1))
    else:
        np.sin(cos_out, out=sin_out)
        np.cos(cos_out, out=cos_out)


def accumulate(out, X, omega, cos_coef, sin_coef, backend):
    """``out += cos(X omega^T) @ cos_coef + sin(X omega^T) @ sin_coef``.

    With one coefficient column the numba backend runs the fused loop (no
    feature buffers); with ``S`` columns (many settings at once) the features
    are computed once, on the backend's ``sin``/``cos``, and multiplied by the
    coefficient matrix.

    Parameters
    ----------
    out : ndarray of shape (n,) or (n, S), float64
    X : ndarray of shape (n, d)
    omega : ndarray of shape (columns, d)
    cos_coef, sin_coef : ndarray of shape (columns,) or (columns, S), X's dtype
    backend : {"numba", "numpy"}
    """
    if backend == "numba" and cos_coef.ndim == 1:
        _kernels()[1](omega @ X.T, cos_coef, sin_coef, out)
    else:
        cos_part = np.empty((X.shape[0], omega.shape[0]), X.dtype)
        sin_part = np.empty_like(cos_part)
        features(X, omega, cos_part, sin_part, backend)
        out += cos_part @ cos_coef + sin_part @ sin_coef
