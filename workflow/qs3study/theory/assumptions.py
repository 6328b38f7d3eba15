r"""Assumption 3 (bounded loss derivative) for the pairwise losses.

The method minimises the squared pairwise loss ``l(u, v) = (1 - u + v)^2``,
whose derivatives ``l_1' = -2 (1 - u + v)`` and ``l_2' = 2 (1 - u + v)`` grow
without bound in ``u - v``; Assumption 3 asks ``|l_1'| <= M_1`` and
``|l_2'| <= M_2``. The logistic pairwise loss ``log(1 + exp(-(u - v)))`` has
``|l'| <= 1`` and meets it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LOSS_DERIVATIVES", "derivative_exceeding"]

#: ``|dl/du|`` as a function of the margin ``s = u - v`` (equal to ``|dl/dv|`` for these losses).
LOSS_DERIVATIVES = {
    "squared": lambda s: np.abs(2.0 * (1.0 - s)),
    "logistic": lambda s: 1.0 / (1.0 + np.exp(np.clip(s, -700.0, 700.0))),
}


def derivative_exceeding(loss, bound, *, doublings):
    """Search margins ``s = +-2^0 .. +-2^doublings`` for one where ``|l'(s)| > bound``.

    Returns
    -------
    float or None
        The first margin found, or None when ``|l'| <= bound`` at every margin tried.
    """
    derivative = LOSS_DERIVATIVES[loss]
    for power in range(doublings + 1):
        for s in (2.0 ** power, -2.0 ** power):
            if derivative(s) > bound:
                return s
    return None
