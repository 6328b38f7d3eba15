"""Baselines of the QS3ORAO benchmark.

Exact-kernel methods the paper compares with (M-PNU-AUC, M-SAMULT, SVOREX)
and the scalable alternative a reader would try (the same objective solved
exactly on fixed random Fourier or Nystrom features), and the supervised
references on the labeled rows (the linear floor, gradient-boosted trees, the
nearest labeled neighbour).  Every estimator takes
``y == -1`` for unlabeled rows, uses the kernel ``exp(-gamma ||x - x'||^2)``
and estimates its memory before allocating it (:class:`MemoryBudgetExceeded`).
"""

from ._budget import MemoryBudgetExceeded
from .exact_reference import QS3ORAOExact
from .feature_space import NystromAUC, RFFAUC
from .gradient_boosting import GradientBoostingReference
from .nearest_neighbour import NearestNeighbourReference
from .pnu_auc import MPNUAUC
from .samult import MSAMULT
from .svorex import SVOREX

__all__ = ["MPNUAUC", "MSAMULT", "SVOREX", "RFFAUC", "NystromAUC", "QS3ORAOExact", "GradientBoostingReference",
           "NearestNeighbourReference", "MemoryBudgetExceeded"]
