"""Every method of the benchmark by name, and what the paper's protocol tunes for each.

The paper tunes ``lambda`` and the kernel width on ``2^-3 .. 2^3`` and the
``k - 1`` trade-off weights on ``0, 0.1, ..., 1`` by 5-fold cross-validation.
A full product over all of them (``7 x 7 x 11^(k-1)`` candidates) is
intractable, so :func:`tuning_grid` describes a staged search, the same for
every method (see :func:`baselines.model_selection.cross_validate_params`):

1. the product grid over the kernel parameter and the regularisation
   (``lam``, or ``C`` for SVOREX) at a neutral shared trade-off;
2. one shared (scalar) trade-off over its grid at the best pair;
3. per-split refinement of the trade-off weights.  For M-PNU-AUC and M-SAMULT
   the splits are separate models, so split ``j``'s held-out AUC depends on
   its own weight only and the per-split optimum is read off stage 2's table
   exactly (``separable``).  For the one-function methods (QS3ORAO, RFF-AUC,
   Nystrom-AUC) the weights interact; one coordinate-wise sweep from the best
   scalar costs ``(k - 1) x 10`` more candidates instead of ``11^(k-1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from qs3orao import QS3ORAO

from .feature_space import NystromAUC, RFFAUC
from .pnu_auc import MPNUAUC
from .samult import MSAMULT
from .svorex import SVOREX

__all__ = ["METHODS", "PAPER_GRID", "TRADEOFF_GRID", "ETA_GRID", "TuningGrid", "make_method", "tuning_grid"]

METHODS = {
    "qs3orao": QS3ORAO,
    "m-pnu-auc": MPNUAUC,
    "m-samult": MSAMULT,
    "svorex": SVOREX,
    "rff-auc": RFFAUC,
    "nystrom-auc": NystromAUC,
}

#: ``2^-3 .. 2^3``, the paper's grid for lambda and the kernel parameter.
PAPER_GRID = tuple(float(v) for v in 2.0 ** np.arange(-3, 4))
#: ``0, 0.1, ..., 1``, the paper's grid for the trade-off weights.
TRADEOFF_GRID = tuple(float(v) for v in np.round(np.arange(11) / 10, 1))
#: ``-1, -0.9, ..., 1``: PNU-AUC's combination weight (NU side negative, PU side positive), same step.
ETA_GRID = tuple(float(v) for v in np.round(np.arange(-10, 11) / 10, 1))


@dataclass(frozen=True)
class TuningGrid:
    """What the protocol tunes for one method.

    Attributes
    ----------
    grid : dict
        Parameter -> values, searched as a full product (stage 1).
    split_param : str or None
        The per-split weight (``"tradeoff"`` or ``"eta"``), None if there is none.
    split_values : tuple
        Its grid (stages 2 and 3).
    split_default : float
        Its shared value during stage 1.
    separable : bool
        True when each split is its own model, so per-split weights decouple.
    """

    grid: dict = field(default_factory=dict)
    split_param: str | None = None
    split_values: tuple = ()
    split_default: float | None = None
    separable: bool = False


def make_method(name, **params):
    """A fresh estimator of method ``name`` with ``params``.

    Examples
    --------
    >>> make_method("m-samult", gamma=0.5).gamma
    0.5
    """
    try:
        cls = METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; expected one of {sorted(METHODS)}") from None
    return cls(**params)


def tuning_grid(name):
    """The :class:`TuningGrid` of method ``name`` (see the module docstring for the search)."""
    make_method(name)
    if name == "svorex":
        return TuningGrid(grid={"gamma": PAPER_GRID, "C": PAPER_GRID})
    grid = {"gamma": PAPER_GRID, "lam": PAPER_GRID}
    if name == "m-pnu-auc":
        return TuningGrid(grid, "eta", ETA_GRID, 0.0, separable=True)
    return TuningGrid(grid, "tradeoff", TRADEOFF_GRID, 0.5, separable=name == "m-samult")
