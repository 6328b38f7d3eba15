"""Memory budget of the exact methods: estimate first, allocate only if it fits.

Every method of this package computes the bytes its large arrays will take
(kernel or moment matrices, linear systems, chunk buffers) from the problem
size alone, and calls :func:`check_budget` before allocating any of them, so
that a benchmark can record "out of memory budget" at a given size instead of
losing the whole run to the operating system's out-of-memory killer.

Every estimate has one signature, so that a caller asks any method the same
way: the instance method ``estimate_memory(n_samples, n_features, n_classes,
n_labeled=None)`` returns the bytes a fit with the estimator's own parameters
(a map's width, a number of centres) allocates on ``n_samples`` rows of
``n_features`` features in ``n_classes`` classes, ``n_labeled`` of the rows
labeled (None: every row).

The exact methods with two solvers (M-PNU-AUC, M-SAMULT) take a ``low_memory``
parameter: False the fast solver, True the low-memory one, None the fast one
when it fits the budget and the low-memory one otherwise
(:func:`takes_low_memory`); their estimate is that of the solver a fit takes.
"""

from __future__ import annotations

import os

import numpy as np

from qs3orao.chunking import FLOAT_BYTES, chunk_bytes, chunk_rows
from qs3orao.validation import check_memory_budget, plain

__all__ = ["MemoryBudgetExceeded", "DEFAULT_FRACTION", "available_memory", "resolve_budget", "check_budget",
           "takes_low_memory",
           "chunk_rows", "chunk_bytes", "FLOAT_BYTES"]

DEFAULT_FRACTION = 0.5


class MemoryBudgetExceeded(MemoryError):
    """The arrays a fit needs would exceed the memory budget; nothing large was allocated.

    Attributes
    ----------
    estimate_bytes : int
        Bytes the fit would allocate.
    budget_bytes : int
        The budget it was checked against.
    """

    def __init__(self, what, estimate_bytes, budget_bytes):
        self.estimate_bytes = int(estimate_bytes)
        self.budget_bytes = int(budget_bytes)
        super().__init__(f"{what} needs about {self.estimate_bytes / 2**20:.1f} MiB, "
                         f"over the memory budget of {self.budget_bytes / 2**20:.1f} MiB")


def available_memory():
    """Bytes of memory available to new allocations (``MemAvailable`` on Linux)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def resolve_budget(memory_budget):
    """The budget in bytes: ``memory_budget``, or ``DEFAULT_FRACTION`` of available memory if None.

    Half of what is available leaves room for the input data, the interpreter
    and the transient copies that BLAS/LAPACK make.
    """
    if memory_budget is None:
        return int(DEFAULT_FRACTION * available_memory())
    return int(check_memory_budget(memory_budget, "memory_budget", optional=True))


def check_budget(what, estimate_bytes, memory_budget):
    """Raise :class:`MemoryBudgetExceeded` if ``estimate_bytes`` exceeds the budget.

    Returns
    -------
    int
        The estimate, for the caller to record.
    """
    budget = resolve_budget(memory_budget)
    if estimate_bytes > budget:
        raise MemoryBudgetExceeded(what, estimate_bytes, budget)
    return int(estimate_bytes)


def takes_low_memory(low_memory, fast_bytes, memory_budget):
    """Whether a fit takes its low-memory solver: ``low_memory``, or if None, whether the fast one would not fit.

    Parameters
    ----------
    low_memory : bool or None
    fast_bytes : int
        The fast solver's estimate.
    memory_budget : int or None
    """
    if low_memory is None:
        return fast_bytes > resolve_budget(memory_budget)
    if not isinstance(low_memory, (bool, np.bool_)):
        raise ValueError(f"low_memory must be True, False or None, got {plain(low_memory)}")
    return bool(low_memory)
