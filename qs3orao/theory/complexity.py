r"""Claim 7: the time and space complexities of Table 1, measured.

Table 1 gives QS3ORAO ``O(D t^2)`` time and ``O(D n)`` space, and the exact
kernel methods ``O(n^3)`` time and ``O(n^2)`` space.  Each sweep below times
one solver while one size grows, measures the peak traced memory (numpy
allocations are reported to :mod:`tracemalloc`) in a separate call, and the
exponent of ``cost ~ size^p`` is fitted on log-log axes.

* ``literal_time_vs_t``: Algorithms 1-2 as written (:mod:`qs3orao._reference`),
  which regenerate every earlier frequency block at every prediction: the
  ``O(D t^2)`` of Table 1.
* ``engine_time_vs_t``, ``engine_time_vs_n``: the project's engine, which keeps
  the training scores up to date instead: ``O(t n D)``.
* ``engine_memory_vs_n``, ``engine_memory_vs_t``: its peak memory, without
  kept frequency blocks (the paper's regenerate-from-seed setting).
* ``exact_time_vs_n``, ``exact_memory_vs_n``: :func:`qs3orao.exact.exact_solution`,
  a dense ``n x n`` linear solve, standing in for the exact baselines.

The criteria are declared here, before any measurement.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
from scipy import stats

from .._reference import reference_fit
from ..engine import train
from ..exact import exact_solution

__all__ = ["EXPONENT_TOLERANCE", "CLAIMED_EXPONENTS", "SWEEPS", "make_data", "run_sweep", "fit_exponent",
           "exponent_verdict"]

# --- Verdict criteria (declared before any measurement) ---------------------
#: A claimed O(size^p) is "consistent" when the fitted exponent's interval
#: starts at or below p + EXPONENT_TOLERANCE (a big-O is an upper bound).
EXPONENT_TOLERANCE = 0.3
#: Confidence level of the exponent's interval.
CONFIDENCE = 0.95
#: The exponent Table 1 implies for each sweep (None: no claim, measured for reference).
CLAIMED_EXPONENTS = {
    "literal_time_vs_t": 2.0,
    "engine_time_vs_t": 2.0,
    "engine_time_vs_n": None,
    "engine_memory_vs_n": 1.0,
    "engine_memory_vs_t": 0.0,
    "exact_time_vs_n": 3.0,
    "exact_memory_vs_n": 2.0,
}
# ---------------------------------------------------------------------------

_N_FEATURES = 5
_N_CLASSES = 3
_TRADEOFF = 0.5


def make_data(n, seed=0):
    """``n`` uniform rows, three classes, half of them unlabeled."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, _N_FEATURES))
    y = np.arange(n) % _N_CLASSES
    y[rng.permutation(n)[: n // 2]] = -1
    return X, y


def _codes(y):
    return np.where(y < 0, -1, y)


def _literal(n, t, m):
    X, y = make_data(n)
    return lambda: reference_fit(X, _codes(y), np.full(_N_CLASSES - 1, _TRADEOFF), n_iter=t, batch_size=1,
                                 n_components=m, gamma=1.0, lam=1.0, theta=1.5, seed=0)


def _engine(n, t, m):
    X, y = make_data(n)
    return lambda: train(X, _codes(y), np.full(_N_CLASSES - 1, _TRADEOFF), n_iter=t, batch_size=1,
                         n_components=m, gamma=1.0, lam=1.0, theta=1.5, seed=0, block_storage="regenerate")


def _exact(n):
    X, y = make_data(n)
    return lambda: exact_solution(X, y, gamma=1.0, lam=1.0, tradeoff=_TRADEOFF)


#: sweep name -> (size name, factory(size, settings) -> zero-argument call, measured quantity)
SWEEPS = {
    "literal_time_vs_t": ("t", lambda s, o: _literal(o["literal_n"], s, o["m"]), "seconds"),
    "engine_time_vs_t": ("t", lambda s, o: _engine(o["engine_n"], s, o["m"]), "seconds"),
    "engine_time_vs_n": ("n", lambda s, o: _engine(s, o["engine_t"], o["m"]), "seconds"),
    "engine_memory_vs_n": ("n", lambda s, o: _engine(s, o["engine_t"], o["m"]), "peak_mb"),
    "engine_memory_vs_t": ("t", lambda s, o: _engine(o["engine_n"], s, o["m"]), "peak_mb"),
    "exact_time_vs_n": ("n", lambda s, o: _exact(s), "seconds"),
    "exact_memory_vs_n": ("n", lambda s, o: _exact(s), "peak_mb"),
}


def _seconds(call, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _peak_mb(call):
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run_sweep(name, sizes, settings, *, repeats=2):
    """Measure one sweep.

    Parameters
    ----------
    name : str
        A key of :data:`SWEEPS`.
    sizes : sequence of int
    settings : dict
        ``literal_n``, ``engine_n``, ``engine_t`` and ``m`` (frequencies per block).
    repeats : int
        Timings keep the fastest of this many calls.

    Returns
    -------
    list of dict
        One record per size: ``sweep``, ``size_name``, ``size``, ``quantity``, ``value``.
    """
    size_name, factory, quantity = SWEEPS[name]
    records = []
    for size in sizes:
        call = factory(int(size), settings)
        value = _seconds(call, repeats) if quantity == "seconds" else _peak_mb(call)
        records.append({"sweep": name, "size_name": size_name, "size": int(size),
                        "quantity": quantity, "value": float(value)})
    return records


def fit_exponent(sizes, values):
    """Least-squares exponent ``p`` of ``value ~ size^p`` with its confidence interval.

    Returns
    -------
    slope, low, high : float
    """
    fit = stats.linregress(np.log(sizes), np.log(values))
    half = stats.t.ppf(0.5 + CONFIDENCE / 2.0, len(sizes) - 2) * fit.stderr
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half)


def exponent_verdict(name, low):
    """``True`` when the claim of sweep ``name`` is consistent with an exponent interval starting at ``low``."""
    claimed = CLAIMED_EXPONENTS[name]
    return None if claimed is None else bool(low <= claimed + EXPONENT_TOLERANCE)
