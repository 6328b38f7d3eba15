"""Reuse of what does not change across a hyperparameter grid: the exact methods' kernel work.

Inside :func:`reuse_kernels`, M-SAMULT's and f*'s kernel matrix, M-PNU-AUC's
kernel moments, and the fixed feature maps' map and per-class moments
(RFF-AUC, Nystroem-AUC) are computed once per (training rows, kernel width,
and for the moments the labels and the map) and reused by every later fit with
the same inputs, whatever ``lam`` or the trade-off; so are the rows' features
that the scores of a fixed map or kernel map are computed from
(:func:`baselines._common.in_chunks`). Outside it, every fit
computes its own (the cache is off by default, so a single fit never holds
memory beyond its budget estimate).

Entries are keyed by the bytes of the arrays (a BLAKE2 digest), never by
object identity, so a changed array can never hit a stale entry; cached
arrays are read-only, so a caller that writes into one fails loudly.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict

import numpy as np

from qs3orao.validation import plain

__all__ = ["reuse_kernels", "cached", "cache_stats", "caching"]

_state = {"entries": None, "max_bytes": 0, "bytes": 0, "hits": 0, "misses": 0}


@contextlib.contextmanager
def reuse_kernels(max_bytes=2**30):
    """Within the block, :func:`cached` keeps results (least recently used evicted beyond ``max_bytes``).

    Parameters
    ----------
    max_bytes : int, default=1 GiB
        Memory the cached arrays may hold; a result larger than this is not kept.

    Yields
    ------
    dict
        Live statistics: ``hits``, ``misses``, ``bytes``.
    """
    if not isinstance(max_bytes, int) or max_bytes < 0:
        raise ValueError(f"max_bytes must be a non-negative integer, got {plain(max_bytes)}")
    previous = dict(_state)
    _state.update(entries=OrderedDict(), max_bytes=max_bytes, bytes=0, hits=0, misses=0)
    try:
        yield _state
    finally:
        _state.update(previous)


def caching():
    """Whether a :func:`reuse_kernels` block is active (then :func:`cached` keeps results)."""
    return _state["entries"] is not None


def cache_stats():
    """``hits``, ``misses`` and ``bytes`` of the active cache (zeros when none is active)."""
    return {k: _state[k] for k in ("hits", "misses", "bytes")}


def _digest(kind, arrays, scalars):
    h = hashlib.blake2b(digest_size=20)
    h.update(kind.encode())
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.data)
    h.update(repr(tuple(float(s) for s in scalars)).encode())
    return h.hexdigest()


def _arrays_of(value):
    """The arrays a cached value holds: itself, or those among its attributes and their dict values."""
    if isinstance(value, np.ndarray):
        return [value]
    found = []
    for item in vars(value).values() if hasattr(value, "__dict__") else []:
        for v in item.values() if isinstance(item, dict) else [item]:
            if isinstance(v, np.ndarray):
                found.append(v)
    return found


def _nbytes(value):
    return sum(a.nbytes for a in _arrays_of(value))


def _freeze(value):
    for a in _arrays_of(value):
        a.flags.writeable = False
    return value


def cached(kind, arrays, scalars, compute):
    """``compute()``, or the result kept for the same ``kind``, array contents and ``scalars``.

    Parameters
    ----------
    kind : str
        What is computed (part of the key).
    arrays : sequence of ndarray
        Inputs whose bytes form the key.
    scalars : sequence of float
        Scalar inputs (e.g. ``gamma``).
    compute : callable
        Called without arguments when nothing is cached.
    """
    entries = _state["entries"]
    if entries is None:
        return compute()
    key = _digest(kind, arrays, scalars)
    if key in entries:
        entries.move_to_end(key)
        _state["hits"] += 1
        return entries[key]
    _state["misses"] += 1
    value = _freeze(compute())
    size = _nbytes(value)
    if size <= _state["max_bytes"]:
        entries[key] = value
        _state["bytes"] += size
        while _state["bytes"] > _state["max_bytes"]:
            _, old = entries.popitem(last=False)
            _state["bytes"] -= _nbytes(old)
    return value
