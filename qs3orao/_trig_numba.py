"""The compiled loops of :mod:`qs3orao.trig` (imported only when numba is used; see there for the maths).

Compiled for float64 and float32 at import, cached on disk beside this file.
"""

import math

import numba
import numpy as np

from ._sincos_constants import (COS_COEFFICIENTS, PIO2_1, PIO2_2, PIO2_3, REDUCTION_LIMIT, ROUNDER,
                               SIN_COEFFICIENTS, TWO_OVER_PI)

_S1, _S2, _S3, _S4, _S5, _S6, _S7 = SIN_COEFFICIENTS
_C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8 = COS_COEFFICIENTS
_OPTIONS = dict(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy")


@numba.njit(**_OPTIONS)
def sincos(p):
    """``(sin p, cos p)`` for ``|p| <= REDUCTION_LIMIT``."""
    k = (p * TWO_OVER_PI + ROUNDER) - ROUNDER
    r = ((p - k * PIO2_1) - k * PIO2_2) - k * PIO2_3
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * (_S6 + z * _S7))))))
    c = 1.0 + z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * (_C6 + z * (_C7 + z * _C8)))))))
    quadrant = k - 4.0 * np.floor(k * 0.25)
    odd = quadrant - 2.0 * np.floor(quadrant * 0.5) == 1.0
    sin_p = c if odd else s
    cos_p = s if odd else c
    sin_p = -sin_p if quadrant >= 2.0 else sin_p
    cos_p = -cos_p if (quadrant == 1.0 or quadrant == 2.0) else cos_p
    return sin_p, cos_p


@numba.njit(**_OPTIONS)
def within_reduction(values):
    """Whether every ``|value| <= REDUCTION_LIMIT``."""
    largest = 0.0
    for v in values:
        largest = max(largest, abs(v))
    return largest <= REDUCTION_LIMIT


_FLOATS = (numba.float64, numba.float32)


@numba.njit([(numba.types.Array(t, 1, "C"), numba.types.Array(t, 1, "C")) for t in _FLOATS], **_OPTIONS)
def features_inplace(proj, sin_out):
    """``sin_out = sin(proj)``, then ``proj = cos(proj)``; both flat and contiguous."""
    if within_reduction(proj):
        for i in range(proj.size):
            sin_out[i], proj[i] = sincos(proj[i])
    else:
        for i in range(proj.size):
            sin_out[i], proj[i] = math.sin(proj[i]), math.cos(proj[i])


@numba.njit([(numba.types.Array(t, 2, "C"), numba.types.Array(t, 1, "C"), numba.types.Array(t, 1, "C"),
              numba.float64[::1]) for t in _FLOATS], **_OPTIONS)
def accumulate_transposed(proj_t, cos_coef, sin_coef, out):
    """``out[r] += sum_j cos(proj_t[j, r]) cos_coef[j] + sin(proj_t[j, r]) sin_coef[j]``, ``j`` in order.

    The inner loop runs over rows, so it is vectorised with every row's sum kept in column order.
    """
    columns, n_rows = proj_t.shape
    total = np.zeros(n_rows)
    reduce = within_reduction(proj_t.ravel())
    for j in range(columns):
        a, b = cos_coef[j], sin_coef[j]
        row = proj_t[j]
        if reduce:
            for r in range(n_rows):
                s, c = sincos(row[r])
                total[r] += c * a + s * b
        else:
            for r in range(n_rows):
                total[r] += math.cos(row[r]) * a + math.sin(row[r]) * b
    for r in range(n_rows):
        out[r] += total[r]
