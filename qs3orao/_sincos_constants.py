"""The constants of the compiled ``sincos`` (:mod:`qs3orao._trig_numba`; see :mod:`qs3orao.trig` for the maths).

Plain Python, so that :mod:`qs3orao.trig` can name :data:`REDUCTION_LIMIT`
without importing numba.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

__all__ = ["COS_COEFFICIENTS", "PIO2_1", "PIO2_2", "PIO2_3", "REDUCTION_LIMIT", "ROUNDER", "SIN_COEFFICIENTS",
           "TWO_OVER_PI"]

#: Largest ``|p|`` reduced by the three-part ``pi/2``; larger projections use the C library.
REDUCTION_LIMIT = 2.0**19

# pi to 60 digits (a decimal string converts to a Fraction exactly); pi/2 is split into a 33-bit,
# a 33-bit and a 53-bit float.
_HALF_PI = Fraction(Decimal("3.14159265358979323846264338327950288419716939937510582097494459")) / 2


def _leading_bits(value, bits):
    """``value`` (a Fraction) rounded to a float of ``bits`` significant bits."""
    exponent = math.frexp(float(value))[1]
    unit = Fraction(2) ** (exponent - bits)
    return float(round(value / unit) * unit)


PIO2_1 = _leading_bits(_HALF_PI, 33)
PIO2_2 = _leading_bits(_HALF_PI - Fraction(PIO2_1), 33)
PIO2_3 = float(_HALF_PI - Fraction(PIO2_1) - Fraction(PIO2_2))
TWO_OVER_PI = float(1 / _HALF_PI)
# Adding then subtracting 1.5 * 2^52 rounds a float of magnitude below 2^51 to the nearest integer.
ROUNDER = 1.5 * 2.0**52
# Taylor coefficients: sin r = r + r^3 (S1 + r^2 (S2 + ...)), cos r = 1 + r^2 (C1 + r^2 (C2 + ...)).
SIN_COEFFICIENTS = tuple((-1) ** j / math.factorial(2 * j + 1) for j in range(1, 8))
COS_COEFFICIENTS = tuple((-1) ** j / math.factorial(2 * j) for j in range(1, 9))
