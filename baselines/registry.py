"""Every method of the benchmark: one :class:`Method` entry each, by name.

An entry holds the class, the default parameters, the tuning grid, whether
the method trains on the labeled rows only, and its label and caption; the
configuration schema, tuning, training, tables and figures all read it.
Adding a method is one :func:`register` call (see docs/extending.md, "Adding a
method").

The paper's protocol tunes each method as follows.

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
from types import MappingProxyType

import numpy as np

from qs3orao import QS3ORAO

from .converged import ConvergedQS3ORAO
from .exact_reference import QS3ORAOExact
from .feature_space import NystromAUC, RFFAUC
from .gradient_boosting import GradientBoostingReference
from .linear_floor import LinearFloor
from .nearest_neighbour import NearestNeighbourReference
from .pnu_auc import MPNUAUC
from .samult import MSAMULT
from .svorex import SVOREX

__all__ = ["METHODS", "ROLES", "PAPER_GRID", "TRADEOFF_GRID", "PNU_MIX_GRID", "TuningGrid", "Method", "register", "unregister", "get_method",
           "make_method", "tuning_grid"]

#: ``2^-3 .. 2^3``, the paper's grid for lambda and the kernel parameter.
PAPER_GRID = tuple(float(v) for v in 2.0 ** np.arange(-3, 4))
#: ``0, 0.1, ..., 1``, the paper's grid for the trade-off weights.
TRADEOFF_GRID = tuple(float(v) for v in np.round(np.arange(11) / 10, 1))
#: What a method is to the paper: one of its own methods (counted in its claims), an added
#: alternative (shown in its own columns, never counted), or a reference (the linear floor and a
#: practitioner's first tries on the labeled rows: gradient-boosted trees, the nearest neighbour).
ROLES = ("paper", "alternative", "reference")
#: ``-1, -0.9, ..., 1``: PNU-AUC's combination weight (NU side negative, PU side positive), same step.
PNU_MIX_GRID = tuple(float(v) for v in np.round(np.arange(-10, 11) / 10, 1))


@dataclass(frozen=True)
class TuningGrid:
    """What the protocol tunes for one method.

    Attributes
    ----------
    grid : dict
        Parameter -> values, searched as a full product (stage 1).
    split_param : str or None
        The per-split weight (``"tradeoff"`` or ``"pnu_mix"``), None if there is none.
    split_values : tuple
        Its grid (stages 2 and 3).
    split_default : float
        Its shared value during stage 1.
    separable : bool
        True when each split is its own model, so per-split weights decouple.
    per_split : bool
        Whether stage 3 (per-split weights) runs; False stops at the shared weight of stage 2.
    """

    grid: dict = field(default_factory=dict)
    split_param: str | None = None
    split_values: tuple = ()
    split_default: float | None = None
    separable: bool = False
    per_split: bool = True


@dataclass(frozen=True)
class Method:
    """Everything the study needs to know about one method.

    Attributes
    ----------
    name : str
        The key in configurations (``methods.<label>.method``).
    estimator : type
        A scikit-learn style estimator class taking ``y == -1`` for unlabeled rows, with what
        :class:`qs3orao.base.OrdinalEstimator` gives (``predict_from_scores``).
    tuning : TuningGrid
        The paper's search for this method (``grid: registry`` in a configuration).
    label : str
        Name shown in figures and tables.
    caption : str
        One sentence for figure captions.
    params : mapping
        Default parameters, over the class's own defaults and under everything a configuration sets.
    labeled_only : bool
        True when the method trains on the labeled rows only (it is still scored on the unlabeled ones).
    role : str
        One of :data:`ROLES`: ``"paper"`` for the paper's own methods (the only ones its claims
        count), ``"alternative"`` for added methods, ``"reference"`` for the supervised references (the
        linear floor, gradient-boosted trees, the nearest labeled neighbour).
    size_param : str or None
        The parameter that sets the number ``D`` of features of the method's fixed feature map
        (``n_random_features``, ``n_landmarks``): its accuracy-for-time knob, swept by the
        time-to-accuracy benchmarks.  None when the method has none.
    """

    name: str
    estimator: type
    tuning: TuningGrid
    label: str
    caption: str
    params: dict = field(default_factory=dict)
    labeled_only: bool = False
    role: str = "alternative"
    size_param: str | None = None

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


_METHODS = {}
#: Name -> :class:`Method`, read-only; :func:`register` adds to it.
METHODS = MappingProxyType(_METHODS)


def register(method, *, replace=False):
    """Add ``method`` (a :class:`Method`) to :data:`METHODS` and return it.

    Raises
    ------
    ValueError
        If the name is taken (unless ``replace``) or a default parameter or the ``size_param`` is not
        one of the class's.
    TypeError
        If ``method`` is not a :class:`Method`, or its estimator lacks what the study calls
        (``decision_function`` and ``predict_from_scores``, which :class:`qs3orao.base.OrdinalEstimator` gives).
    """
    if not isinstance(method, Method):
        raise TypeError(f"method must be a Method, got {type(method).__name__}")
    lacking = [name for name in ("decision_function", "predict_from_scores")
               if not callable(getattr(method.estimator, name, None))]
    if lacking:
        raise TypeError(f"{method.estimator.__name__} of {method.name!r} has no {' or '.join(lacking)}, which the "
                        f"study's jobs call; subclass qs3orao.base.OrdinalEstimator")
    if method.name in _METHODS and not replace:
        raise ValueError(f"method {method.name!r} is already registered")
    unknown = sorted((set(method.params) | {method.size_param} - {None}) - set(method.estimator().get_params()))
    if unknown:
        raise ValueError(f"default params or size_param {unknown} of {method.name!r} are not parameters of "
                         f"{method.estimator.__name__}")
    _METHODS[method.name] = method
    return method


def unregister(name):
    """Remove method ``name`` from :data:`METHODS` (a method registered for one run or one test)."""
    get_method(name)
    del _METHODS[name]


def get_method(name):
    """The :class:`Method` registered under ``name``."""
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; expected one of {sorted(_METHODS)}") from None


def make_method(name, **params):
    """A fresh estimator of method ``name``: its registered defaults, updated by ``params``.

    Examples
    --------
    >>> make_method("m-samult", gamma=0.5).gamma
    0.5
    """
    method = get_method(name)
    return method.estimator(**{**method.params, **params})


def tuning_grid(name):
    """The :class:`TuningGrid` of method ``name`` (see the module docstring for the search)."""
    return get_method(name).tuning


_KERNEL_GRID = {"gamma": PAPER_GRID, "lam": PAPER_GRID}
for _entry in (
    Method("qs3orao", QS3ORAO, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5), "QS3ORAO",
           "quadruply stochastic functional gradients on labeled and unlabeled rows (the paper's method)",
           role="paper"),
    Method("m-pnu-auc", MPNUAUC, TuningGrid(_KERNEL_GRID, "pnu_mix", PNU_MIX_GRID, 0.0, separable=True), "M-PNU-AUC",
           "one exact PNU-AUC kernel model per split", role="paper"),
    Method("m-samult", MSAMULT, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5, separable=True),
           "M-SAMULT", "one exact SAMULT kernel model per split", role="paper"),
    Method("svorex", SVOREX, TuningGrid({"gamma": PAPER_GRID, "C": PAPER_GRID}), "SVOREX",
           "support vector ordinal regression with explicit threshold constraints, on the labeled rows only",
           labeled_only=True, role="paper"),
    Method("rff-auc", RFFAUC, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5), "RFF-AUC",
           "the QS3ORAO objective solved exactly on fixed random Fourier features", size_param="n_random_features"),
    Method("nystrom-auc", NystromAUC, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5), "Nystroem-AUC",
           "the QS3ORAO objective solved exactly on Nystroem features", size_param="n_landmarks"),
    Method("qs3orao-converged", ConvergedQS3ORAO, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5),
           "QS3ORAO (converged)", "QS3ORAO on the stable step, iterations doubled until the training risk settles"),
    Method("qs3orao-exact", QS3ORAOExact, TuningGrid(_KERNEL_GRID, "tradeoff", TRADEOFF_GRID, 0.5), "QS3ORAO f* (exact)",
           "reference: QS3ORAO's own objective minimised exactly over every training row (O(n^2) memory)"),
    Method("linear-floor", LinearFloor, TuningGrid({"alpha": PAPER_GRID}), "Linear floor (reference)",
           "reference: all-threshold ordinal logistic regression (mord.LogisticAT), linear, on the labeled rows only",
           labeled_only=True, role="reference"),
    # Gradient boosting's usual knobs, a few values each around scikit-learn's defaults (0.1, 31, 0);
    # l2_regularization = 0 is the parameter's own lower bound.
    Method("gradient-boosting", GradientBoostingReference,
           TuningGrid({"learning_rate": (0.03, 0.1, 0.3), "max_leaf_nodes": (3, 7, 15, 31),
                       "l2_regularization": (0.0, 1.0, 10.0)}), "Gradient boosting (reference)",
           "reference: histogram gradient-boosted regression trees (scikit-learn) on the labeled rows' ordinal "
           "codes, what a practitioner would try first", labeled_only=True, role="reference"),
    Method("nearest-neighbour", NearestNeighbourReference, TuningGrid(), "1-NN (reference)",
           "reference: the label of the nearest labeled row (Euclidean, ties to the first row), a lookup",
           labeled_only=True, role="reference"),
):
    register(_entry)
del _entry
