"""The study's design points: trial seeds, unlabeled-size tokens and the names of a training job's files."""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["ALL", "TRIAL_RESULT", "BATCH_RECORD", "trial_seed", "parse_size", "size_token"]

ALL = "all"
"""Size token meaning "every row that is not labeled"."""

TRIAL_RESULT = "trial{trial}.json"
"""A trial's result file in its training job's folder."""

BATCH_RECORD = "batch.json"
"""The training job's own record in its folder: its trials and its own CPU time (``own_cpu_s``)."""


def trial_seed(dataset, trial, base_seed=0):
    """Seed of one trial on one dataset, shared by every method.

    A pure function of ``(dataset, trial, base_seed)``: the same split and the
    same random streams are drawn whichever job, machine or order runs it, and
    all methods of a trial see the same labeled and unlabeled rows (so their
    AUCs are paired).

    Parameters
    ----------
    dataset : str
    trial : int
    base_seed : int, default=0

    Returns
    -------
    int
        A seed in ``[0, 2**31)``.

    Examples
    --------
    >>> trial_seed("lev", 0) == trial_seed("lev", 0) != trial_seed("lev", 1)
    True
    """
    sequence = np.random.SeedSequence([int(base_seed), int(trial), zlib.crc32(dataset.encode())])
    return int(sequence.generate_state(1, dtype=np.uint32)[0] >> 1)


def parse_size(token):
    """Return ``None`` for ``"all"``, else the integer size of a size token."""
    return None if str(token) == ALL else int(token)


def size_token(size):
    """Inverse of :func:`parse_size` for a configuration value (int or ``"all"``)."""
    return ALL if size is None or str(size) == ALL else str(int(size))
