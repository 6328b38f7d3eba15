"""What a group of steps works on: its iterations, its frequency blocks, its rows and their features."""

from __future__ import annotations

import collections
import itertools

import numpy as np

from ..kernels import frequency_block
from ..trig import features as _trig_features

__all__ = ["group_bounds", "group_inputs", "with_features"]


def group_bounds(n_iter, group, checkpoints=()):
    """``(start, end)`` of each group of at most ``group`` steps, a group ending at every checkpoint."""
    start = 0
    for end in [*checkpoints, n_iter]:
        while start < end:
            yield start, min(start + group, end)
            start = min(start + group, end)


def group_inputs(bounds, draw, dense, *, seed, n_components, n_features, gamma, blocks, dtype):
    """Yield ``(members, omega, draws, start, end)`` for each ``(start, end)`` of ``bounds``, in order.

    ``draws = draw(end - start)`` are the group's rows and weighed splits
    (:func:`qs3orao.stochastic.draw_steps`), ``omega`` its stacked frequencies
    (kept in ``blocks`` unless it is None) and ``members`` its rows, sorted
    (None in the ``dense`` plan: all rows).
    """
    for start, end in bounds:
        draws = draw(end - start)
        omega = _group_blocks(seed, start, end, n_components, n_features, gamma, blocks, dtype)
        yield _group_members(dense, draws), omega, draws, start, end


def _group_blocks(seed, start, stop, m, d, gamma, blocks, dtype):
    """The stacked frequencies of blocks ``start + 1 .. stop`` in ``dtype``, kept in ``blocks`` unless it is None."""
    omega = np.concatenate([frequency_block(seed, i + 1, m, d, gamma) for i in range(start, stop)])
    if blocks is not None:
        blocks[start:stop] = omega.reshape(stop - start, m, d)
    return omega.astype(dtype, copy=False)


def _group_members(dense, draws):
    """The group's rows, sorted (None: all rows); ``draws`` as :func:`group_inputs` yields them."""
    if dense:
        return None
    return np.unique(draws[0])


def _start_member_features(X, members, omega, rows, slot):
    """Start the ``cos`` and ``sin`` features of the group's rows (all rows when ``members`` is None).

    They are computed in ``rows``'s feature buffers ``slot``, split over its
    threads; the returned callable waits for them and returns ``(cos_s, sin_s)``,
    valid until features are next started in that slot.
    """
    Xs = X if members is None else X[members]
    cos_s, sin_s = rows.feature_buffers(Xs.shape[0], omega.shape[0], X.dtype, slot)
    wait = rows.start(lambda a, b: _trig_features(Xs[a:b], omega, cos_s[a:b], sin_s[a:b], rows.trig),
                      Xs.shape[0], max(1, -(-Xs.shape[0] // rows.n_jobs)), background=True)

    def features():
        wait()
        return cos_s, sin_s

    return features


def with_features(X, groups, rows, local_of):
    """Yield each ``(members, omega, ...)`` of ``groups`` followed by its members' ``cos`` and ``sin`` features.

    With worker threads the next group's features are started in the
    background (in the other set of feature buffers) before a group is yielded,
    so the workers compute them while the caller takes the group's steps.  In the sparse plan ``local_of``
    maps each of the yielded group's rows to its position among them.
    """
    ahead = 1 if rows.parallel else 0
    pending = collections.deque()
    for slot, group in zip(itertools.cycle(range(ahead + 1)), groups):
        pending.append((group, _start_member_features(X, group[0], group[1], rows, slot)))
        if len(pending) > ahead:
            yield _ready(*pending.popleft(), local_of)
    while pending:
        yield _ready(*pending.popleft(), local_of)


def _ready(group, features, local_of):
    """``(*group, cos_s, sin_s)`` once the group's features are computed, its rows mapped in ``local_of``."""
    members = group[0]
    if members is not None:
        local_of[members] = np.arange(members.size)
    return (*group, *features())
