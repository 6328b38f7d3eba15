"""The machine sessions a run's trials were timed in, and each one's speed.

A run carried across machines (:mod:`qs3study.tools.run_archive`) times its
trials on several, and the same fit, with the same result, can take very
different times on two of them. Each trial records the session it ran in (``machine_session``, the boot id)
and the time of a fixed reference computation at its job's start
(``calibration_s``, :func:`qs3study.runtime.calibration_s`), so that a reader
sees which times were measured side by side and how fast each machine was.
"""

from __future__ import annotations

__all__ = ["machine_sessions"]


def machine_sessions(table):
    """The machine sessions of ``table``'s trials, fastest first.

    Parameters
    ----------
    table : pandas.DataFrame
        Results (:func:`qs3study.stages.tables.read_results`) with ``machine_session`` and ``calibration_s``.

    Returns
    -------
    pandas.DataFrame
        ``machine_session, trials, calibration_s`` (the median over the session's trials) and
        ``relative_time`` (that median over the fastest session's); empty if no trial recorded its session.
    """
    timed = table.dropna(subset=["machine_session", "calibration_s"])
    sessions = (timed.groupby("machine_session")["calibration_s"].agg(trials="size", calibration_s="median")
                .sort_values("calibration_s").reset_index())
    return sessions.assign(relative_time=sessions["calibration_s"] / sessions["calibration_s"].min())
