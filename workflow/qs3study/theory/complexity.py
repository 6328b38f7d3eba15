r"""Claim 7: the time and space complexities of Table 1, measured.

Table 1 gives QS3ORAO ``O(D t^2)`` time and ``O(D n)`` space, and the exact
kernel methods ``O(n^3)`` time and ``O(n^2)`` space.  Each sweep below times
one solver while one size grows (CPU seconds of the process with the BLAS
limited to the design's ``blas_threads``, so that other jobs on a shared
machine do not count), measures the peak traced memory (numpy allocations are
reported to :mod:`tracemalloc`) in a separate call, or counts its dominant
operations, and the exponent of ``cost ~ size^p`` is fitted on log-log axes.

* ``literal_time_vs_t``: Algorithms 1-2 as written (:mod:`qs3orao._reference`),
  which regenerate every earlier frequency block at every prediction: the
  ``O(D t^2)`` of Table 1.
* ``engine_time_vs_t``, ``engine_time_vs_n``: the project's engine, which keeps
  the training scores up to date instead: ``O(t n D)``.
* ``engine_memory_vs_n``, ``engine_memory_vs_t``: its peak memory, without
  kept frequency blocks (the paper's regenerate-from-seed setting).
* ``exact_time_vs_n``, ``exact_memory_vs_n``: :func:`qs3orao.exact.exact_solution`
  (``f*``), a dense ``n x n`` linear solve (one Cholesky factorisation when every
  row is weighed, :func:`qs3orao.quadratic.solve_kernel_expansion`); the exact baselines themselves are
  swept by ``qs3study.claims.studies.BASELINE_SWEEPS``.
* ``literal_operations_vs_t``, ``exact_operations_vs_n``: the same calls' dominant
  operations counted (a second measure, free of timing overhead and noise).

The sweeps' sizes, repeats and the verdict criteria live in the study's design file
(``workflow/config/theory.yaml``).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from qs3orao._reference import reference_fit
from qs3orao.engine import train
from qs3orao.exact import exact_solution
from qs3orao.validation import check_positive

__all__ = ["SWEEPS", "make_data", "run_sweep", "fit_exponent", "local_exponents", "tail_exponent", "linear_growth"]

def make_data(n, o):
    """``n`` uniform rows with ``o["n_features"]`` features and ``o["n_classes"]`` classes, half unlabeled."""
    rng = np.random.default_rng(o["seed"])
    X = rng.uniform(size=(n, o["n_features"]))
    y = np.arange(n) % o["n_classes"]
    y[rng.permutation(n)[: n // 2]] = -1
    return X, y


def _tradeoff(o):
    return np.full(o["n_classes"] - 1, o["tradeoff"])


def _literal(n, t, o):
    X, y = make_data(n, o)
    return lambda: reference_fit(X, y, _tradeoff(o), n_iter=t, batch_size=1, n_components=o["m"],
                                 gamma=o["gamma"], lam=o["lam"], theta=o["theta"], seed=o["seed"])


def _engine(n, t, o):
    X, y = make_data(n, o)
    return lambda: train(X, y, _tradeoff(o), n_iter=t, batch_size=1, n_components=o["m"], gamma=o["gamma"],
                         lam=o["lam"], theta=o["theta"], seed=o["seed"], block_storage="regenerate")


def _exact(n, o):
    X, y = make_data(n, o)
    return lambda: exact_solution(X, y, gamma=o["gamma"], lam=o["lam"], tradeoff=o["tradeoff"])


#: sweep name -> (size name, factory(size, settings) -> zero-argument call, measured quantity)
SWEEPS = {
    "literal_time_vs_t": ("t", lambda s, o: _literal(o["literal_n"], s, o), "cpu_seconds"),
    "engine_time_vs_t": ("t", lambda s, o: _engine(o["engine_n"], s, o), "cpu_seconds"),
    "engine_time_vs_n": ("n", lambda s, o: _engine(s, o["engine_t"], o), "cpu_seconds"),
    "engine_memory_vs_n": ("n", lambda s, o: _engine(s, o["engine_t"], o), "peak_mb"),
    "engine_memory_vs_t": ("t", lambda s, o: _engine(o["engine_n"], s, o), "peak_mb"),
    "exact_time_vs_n": ("n", lambda s, o: _exact(s, o), "cpu_seconds"),
    "exact_memory_vs_n": ("n", lambda s, o: _exact(s, o), "peak_mb"),
    "literal_operations_vs_t": ("t", lambda s, o: _literal(o["literal_n"], s, o), "operations"),
    "exact_operations_vs_n": ("n", lambda s, o: _exact(s, o), "operations"),
}


def _operations(call):
    """Count a call's dominant operations: the multiply-adds of every dense LU factorisation
    (``2/3 n^3`` for an ``n x n`` matrix) and Cholesky factorisation (``1/3 n^3``), and of every
    random-feature evaluation of the literal Algorithms 1-2 (``rows x frequencies x features``).

    The count is of what the code actually calls, so it has none of a timing's overhead or noise.
    """
    from unittest import mock

    from scipy import linalg

    from qs3orao import _reference

    count = [0.0]
    lu_factor, cho_factor, features = linalg.lu_factor, linalg.cho_factor, _reference.fourier_features

    def counted_lu(a, *args, **kwargs):
        count[0] += 2.0 / 3.0 * float(np.shape(a)[0]) ** 3
        return lu_factor(a, *args, **kwargs)

    def counted_cholesky(a, *args, **kwargs):
        count[0] += 1.0 / 3.0 * float(np.shape(a)[0]) ** 3
        return cho_factor(a, *args, **kwargs)

    def counted_features(X, omega):
        count[0] += float(np.shape(X)[0]) * float(np.size(omega))
        return features(X, omega)

    with mock.patch.object(linalg, "lu_factor", counted_lu), mock.patch.object(linalg, "cho_factor", counted_cholesky), \
            mock.patch.object(_reference, "fourier_features", counted_features):
        call()
    return count[0]


def _cpu_seconds(call, *, threads):
    """CPU seconds of the process during one call, with every BLAS/OpenMP pool limited to ``threads``.

    On a machine shared with other jobs a wall-clock timing counts the time the call waits for a
    core; the process's CPU time does not, and with one BLAS thread it is neither spread over
    threads nor inflated by idle threads spinning, so it counts the call's own work.
    """
    with threadpool_limits(limits=threads):
        start = time.process_time()
        call()
        return time.process_time() - start


def _peak_mb(call):
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run_sweep(name, sizes, settings, *, repeats, sweeps=None):
    """Measure one sweep.

    Parameters
    ----------
    name : str
        A key of ``sweeps``.
    sizes : sequence of int
    settings : dict
        ``literal_n``, ``engine_n``, ``engine_t`` (the fixed sizes), ``m`` (frequencies
        per block), the data and solver: ``n_features``, ``n_classes``,
        ``tradeoff``, ``gamma``, ``lam``, ``theta``, ``seed``, and for timings
        ``blas_threads`` (the BLAS threads a timed call may use).
    sweeps : dict, optional
        Sweep name to ``(size name, factory, quantity)`` as :data:`SWEEPS` (the default).
    repeats : int
        Timings are repeated this many times (every repeat is recorded); peak
        memory and operation counts are deterministic and measured once.

    Returns
    -------
    list of dict
        One record per size and repeat: ``sweep``, ``size_name``, ``size``,
        ``quantity``, ``repeat``, ``value``.

    Raises
    ------
    ValueError
        A timed sweep whose ``settings`` do not name ``blas_threads``.
    """
    size_name, factory, quantity = (SWEEPS if sweeps is None else sweeps)[name]
    if quantity == "cpu_seconds":
        if "blas_threads" not in settings:
            raise ValueError(f"sweep {name!r} is timed: settings must name blas_threads (the BLAS threads it may use)")
        threads = check_positive(settings["blas_threads"], "blas_threads", integer=True)
    measure = {"cpu_seconds": lambda call: _cpu_seconds(call, threads=threads), "peak_mb": _peak_mb,
               "operations": _operations}[quantity]
    records = []
    for size in sizes:
        call = factory(int(size), settings)
        # timings vary from call to call; peak memory and operation counts are deterministic
        values = [measure(call) for _ in range(repeats if quantity == "cpu_seconds" else 1)]
        records += [{"sweep": name, "size_name": size_name, "size": int(size), "quantity": quantity,
                     "repeat": r, "value": float(v)} for r, v in enumerate(values)]
    return records


def fit_exponent(sizes, values, *, confidence):
    """Least-squares exponent ``p`` of ``value ~ size^p`` on the medians per size, with its confidence interval.

    Returns
    -------
    slope, low, high : float
    """
    sizes, values = np.asarray(sizes), np.asarray(values, dtype=np.float64)
    unique = np.unique(sizes)
    medians = np.array([np.median(values[sizes == s]) for s in unique])
    fit = stats.linregress(np.log(unique), np.log(medians))
    half = stats.t.ppf(0.5 + confidence / 2.0, unique.size - 2) * fit.stderr
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half)


def local_exponents(sizes, values):
    """Exponents between the medians at consecutive sizes (the local slope of the log-log curve).

    Returns
    -------
    ndarray of shape (n_sizes - 1,)
    """
    sizes, values = np.asarray(sizes), np.asarray(values, dtype=np.float64)
    unique = np.unique(sizes)
    medians = np.array([np.median(values[sizes == s]) for s in unique])
    return np.diff(np.log(medians)) / np.diff(np.log(unique))


def tail_exponent(sizes, values, *, tail, confidence):
    """Least-squares exponent over every record at the ``tail`` largest sizes, with its confidence interval.

    Where the leading term of the cost dominates, the log-log curve is a line of
    that term's exponent; the small sizes, where a fixed overhead flattens it,
    are left out.

    Returns
    -------
    slope, low, high : float
        NaN for fewer than three records.
    """
    sizes, values = np.asarray(sizes), np.asarray(values, dtype=np.float64)
    keep = np.isin(sizes, np.unique(sizes)[-tail:])
    if keep.sum() < 3:
        return float("nan"), float("nan"), float("nan")
    x, y = np.log(sizes[keep]), np.log(values[keep])
    centred = x - x.mean()
    slope = float(centred @ (y - y.mean()) / (centred @ centred))
    residuals = y - y.mean() - slope * centred
    stderr = np.sqrt(residuals @ residuals / (keep.sum() - 2) / (centred @ centred))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, keep.sum() - 2) * stderr)
    return slope, slope - half, slope + half


def linear_growth(sizes, values, *, confidence):
    """Least-squares slope of ``value ~ a + b size`` over every record, with its confidence interval.

    A cost that is a constant plus a term linear in the size (the engine's memory: the data
    plus ``t D`` coefficients) has no single log-log exponent; its growth per unit of size is ``b``.

    Returns
    -------
    slope, low, high : float
        NaN for fewer than three records.
    """
    sizes, values = np.asarray(sizes, dtype=np.float64), np.asarray(values, dtype=np.float64)
    if sizes.size < 3:
        return float("nan"), float("nan"), float("nan")
    centred = sizes - sizes.mean()
    slope = float(centred @ (values - values.mean()) / (centred @ centred))
    residuals = values - values.mean() - slope * centred
    stderr = np.sqrt(residuals @ residuals / (sizes.size - 2) / (centred @ centred))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, sizes.size - 2) * stderr)
    return slope, slope - half, slope + half
