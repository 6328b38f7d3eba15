"""The study's design points: trial and tuning-draw seeds, unlabeled-size tokens and the names of a training job's files."""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["ALL", "TRIAL_RESULT", "BATCH_RECORD", "trial_seed", "tuning_seed", "parse_size", "size_token"]

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


def tuning_seed(seed, draw):
    """Seed of a search's randomness (its fold assignment, its fits' streams) at tuning draw ``draw``.

    Draw 0 is the study's single tuning and keeps the trial's own ``seed``; draw
    ``d >= 1`` takes the first word of ``SeedSequence([seed, d])``, halved into
    ``[0, 2**31)`` as :func:`trial_seed` does. The trial's split, its kernel width
    and its training keep ``seed`` at every draw: only the search is drawn again.

    Parameters
    ----------
    seed : int
        The trial's seed (:func:`trial_seed`).
    draw : int
        The tuning draw, ``>= 0``.

    Returns
    -------
    int

    Examples
    --------
    >>> tuning_seed(7, 0), tuning_seed(7, 1) == tuning_seed(7, 1) != tuning_seed(7, 2)
    (7, True)
    """
    if int(draw) < 0:
        raise ValueError(f"draw must be >= 0, got {draw}")
    if int(draw) == 0:
        return int(seed)
    sequence = np.random.SeedSequence([int(seed), int(draw)])
    return int(sequence.generate_state(1, dtype=np.uint32)[0] >> 1)


def parse_size(token):
    """Return ``None`` for ``"all"``, else the integer size of a size token."""
    return None if str(token) == ALL else int(token)


def size_token(size):
    """Inverse of :func:`parse_size` for a configuration value (int or ``"all"``)."""
    return ALL if size is None or str(size) == ALL else str(int(size))
