"""The machine code a run's arithmetic takes, fixed by its configuration so that two CPUs give the same bits.

OpenBLAS, NumPy and Numba each choose their machine code when a process starts,
from the CPU they find: OpenBLAS a kernel per CPU family, NumPy its SIMD loops,
Numba its compilation target. What they compute agrees to rounding, not bit for
bit: the review corpus's randomized SVD, one BLAS thread, differs in its last
bits between OpenBLAS's Haswell and Sandybridge kernels. So a run carried from
one machine to another (:mod:`qs3study.tools.run_archive`), or repeated on
another, would differ there, and a changed feature can move a tuned value.

A configuration's ``cpu_baseline`` names the code every job takes:

``native``
    each library's own choice (the default: a laptop of any kind runs the
    embedded configuration);
``x86-64-v3``
    the AVX2 code paths, which every x86-64 CPU since 2013 runs: OpenBLAS's
    Haswell kernels, NumPy without its AVX-512 loops, Numba compiled for
    Haswell with the x86-64-v3 features alone. Two such machines compute the
    same bits whatever else their CPUs offer.

The Snakefile calls :func:`pin_cpu_baseline` before any job starts: the
settings are environment variables, read by each library when a job's process
loads it, so the Snakemake process's own libraries, loaded already, keep theirs.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["BASELINES", "REQUIRED_CPU_FLAGS", "pin_cpu_baseline", "cpu_flags", "missing_cpu_flags", "numpy_simd",
           "cpu_code"]

BASELINES = {
    "native": {},
    "x86-64-v3": {
        "OPENBLAS_CORETYPE": "Haswell",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
        "NUMBA_CPU_NAME": "haswell",
        # without it Numba adds the host's features to the named CPU's (AVX-512 where there is some)
        "NUMBA_CPU_FEATURES": "+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave",
    },
}
"""Each baseline's environment variables, read by OpenBLAS, NumPy and Numba when a process loads them."""

REQUIRED_CPU_FLAGS = {"native": (), "x86-64-v3": ("avx2", "fma", "bmi2")}
"""The ``/proc/cpuinfo`` flags a CPU needs to run each baseline's code (without them: illegal instructions)."""


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The CPU's feature flags as ``/proc/cpuinfo`` lists them, or None where there is no such file."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def missing_cpu_flags(baseline, flags=None):
    """The flags of :data:`REQUIRED_CPU_FLAGS` ``[baseline]`` the CPU lacks, sorted.

    Parameters
    ----------
    baseline : str
        A key of :data:`BASELINES`.
    flags : set of str, optional
        The CPU's feature flags (read by :func:`cpu_flags`).

    Returns
    -------
    list of str or None
        The flags missing (empty where the CPU runs the baseline), or None where the baseline needs flags
        and the CPU's cannot be read.
    """
    needed = REQUIRED_CPU_FLAGS[baseline]
    if not needed:
        return []
    flags = cpu_flags() if flags is None else flags
    return None if flags is None else sorted(set(needed) - set(flags))


def pin_cpu_baseline(baseline, environ=None, flags=None):
    """Set the environment variables of ``baseline`` for the processes started after this call.

    Parameters
    ----------
    baseline : str
        A key of :data:`BASELINES`.
    environ : mutable mapping, optional
        The environment to set (``os.environ``).
    flags : set of str, optional
        The CPU's feature flags (read from ``/proc/cpuinfo``).

    Returns
    -------
    dict
        The variables set.

    Raises
    ------
    ValueError
        If ``baseline`` is unknown, if the CPU lacks a flag the baseline's code needs (or its
        flags cannot be read), if the installed NumPy lacks a SIMD target the baseline leaves out (it
        would ignore the name), or if the environment already sets one of the variables to another
        value: the user's value is never replaced.
    """
    environ = os.environ if environ is None else environ
    if baseline not in BASELINES:
        raise ValueError(f"cpu_baseline must be one of {sorted(BASELINES)}, got {baseline!r}")
    missing = missing_cpu_flags(baseline, flags)
    if missing is None or missing:
        found = "its flags cannot be read (no /proc/cpuinfo)" if missing is None else f"it lacks {', '.join(missing)}"
        raise ValueError(f"cpu_baseline {baseline!r} runs code that needs the CPU flags "
                         f"{', '.join(REQUIRED_CPU_FLAGS[baseline])}; this {platform.machine() or 'machine'}'s CPU "
                         f"cannot be used for it: {found}. Set cpu_baseline: native (each library's own code; bits "
                         "may then differ from another machine's)")
    settings = BASELINES[baseline]
    if "NPY_DISABLE_CPU_FEATURES" in settings:
        known = set().union(*numpy_simd().values())
        unknown = sorted(set(settings["NPY_DISABLE_CPU_FEATURES"].split()) - known)
        if unknown:
            import numpy as np

            raise ValueError(f"cpu_baseline {baseline!r} leaves out NumPy's SIMD targets {', '.join(unknown)}, "
                             f"which NumPy {np.__version__} does not have (it would ignore them and keep its own "
                             "choice): install the NumPy the project pins, or set cpu_baseline: native")
    clashes = {name: environ[name] for name, value in settings.items() if environ.get(name, value) != value}
    if clashes:
        given = ", ".join(f"{name}={value!r}" for name, value in clashes.items())
        wanted = ", ".join(f"{name}={settings[name]!r}" for name in clashes)
        raise ValueError(f"the environment sets {given}, and cpu_baseline {baseline!r} needs {wanted}: "
                         "unset the variable, or set cpu_baseline: native to keep it")
    environ.update(settings)
    return dict(settings)


def numpy_simd():
    """The SIMD targets NumPy dispatches to beyond its baseline in this process (``used``), and the others."""
    import numpy as np

    simd = np.show_config(mode="dicts")["SIMD Extensions"]
    return {"used": list(simd.get("found", [])), "unused": list(simd.get("not found", []))}


def cpu_code():
    """The code this process's libraries chose: the baseline's variables, OpenBLAS's kernel, NumPy's SIMD loops.

    Returns
    -------
    dict
        ``variables``: the value of each variable of :data:`BASELINES` (None where unset);
        ``blas``: each loaded BLAS library's ``internal_api`` and ``architecture`` (threadpoolctl's report);
        ``numpy_simd``: :func:`numpy_simd`.
    """
    from threadpoolctl import threadpool_info

    names = sorted({name for settings in BASELINES.values() for name in settings})
    blas = [{"library": pool["internal_api"], "architecture": pool.get("architecture")}
            for pool in threadpool_info() if pool["user_api"] == "blas"]
    return {"variables": {name: os.environ.get(name) for name in names}, "blas": blas, "numpy_simd": numpy_simd()}
