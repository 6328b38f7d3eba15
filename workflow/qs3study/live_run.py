"""The record of the run in progress in a working directory, so that no second run or unlock disturbs it.

Snakemake takes a second run started beside a live one for the sequel of a
killed run: it calls the live run's jobs incomplete, and ``snakemake --unlock``
lets a second run redo them under the first. The Snakefile records its run
when its jobs start (:func:`record_live_run`), removes the record when the run
ends (:func:`clear_live_run`), and refuses to plan anything while another
process's record names a live run (:func:`refuse_beside_live_run`). A record
left by a killed run names a process that no longer exists, and is ignored.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
from pathlib import Path

from qs3study.files import atomic_path

__all__ = ["RECORD", "record_live_run", "clear_live_run", "live_run", "refuse_beside_live_run"]

RECORD = Path(".snakemake") / "qs3study-live-run.json"
"""Where the record lives, relative to the working directory."""


def record_live_run(path=RECORD):
    """Record this process as the working directory's live run: its pid, host and start time."""
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}))


def _read(path):
    try:
        record = json.loads(Path(path).read_text())
        return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None
    except (FileNotFoundError, ValueError):
        return None


def clear_live_run(path=RECORD):
    """Remove the record if it is this process's own."""
    record = _read(path)
    if record is not None and record["pid"] == os.getpid() and record.get("host") == socket.gethostname():
        Path(path).unlink(missing_ok=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    # A killed run whose parent has not reaped it yet (a container's init may never) is a zombie.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc: trust the signal
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def live_run(path=RECORD):
    """The record of another process's run that may still be running, else None.

    A record from another host cannot be checked, so it counts as live.
    """
    record = _read(path)
    if record is None or (record["pid"] == os.getpid() and record.get("host") == socket.gethostname()):
        return None
    if record.get("host") == socket.gethostname() and not _alive(record["pid"]):
        return None
    return record


def refuse_beside_live_run(path=RECORD):
    """Raise if another run is in progress in this working directory.

    Raises
    ------
    RuntimeError
        Naming the live run's pid, host and start time, and the record to delete if that run is over.
    """
    record = live_run(path)
    if record is not None:
        raise RuntimeError(f"a run is in progress in this working directory (snakemake pid {record['pid']} on host "
                           f"{record.get('host')}, started {record.get('started')}): wait for it to end before "
                           f"starting another run or unlocking. If that run is over (its host rebooted, say), "
                           f"delete {path}.")
