"""QS3ORAO: quadruply stochastic gradients for semi-supervised ordinal regression AUC optimisation.

A reference implementation of Shi, Gu, Li and Huang (AAAI 2020).
"""

from .divergence import DivergenceError
from .estimator import QS3ORAO
from .exact import exact_solution
from .metrics import c_index, ordinal_auc

__all__ = ["QS3ORAO", "DivergenceError", "exact_solution", "ordinal_auc", "c_index"]
__version__ = "0.1.0"
