"""The datasets' facts as read: every dataset the suite can read, counted from its data.

:func:`dataset_facts` reads each registry dataset the way the project reads it (an offline
mirror's file whose sha256 is the registry's, the generator at its default size, the
package that bundles it) and counts its rows and features; a dataset it cannot read is
listed with the reason. The theory run writes the table as ``datasets.csv``; row T2 of the
claims ledger reads that file and never the mirror, so the ledger reassembles the same
with or without the mirror.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from qs3study.datasets.download import sha256_file

from .paper_tables import TABLE2

__all__ = ["FACT_COLUMNS", "READ", "NOT_CHECKABLE", "dataset_facts", "read_dataset_facts"]

#: The tidy file's columns: the registry's entry, Table 2's numbers (Table 2 datasets only),
#: the documented shape, where the data came from and what was counted there.
FACT_COLUMNS = ("dataset", "kind", "table2", "paper_rows", "paper_features", "documented_rows",
                "documented_features", "source", "file", "sha256", "rows", "features", "status", "reason")
READ = "read"
NOT_CHECKABLE = "not checkable"
_COUNTS = ("paper_rows", "paper_features", "documented_rows", "documented_features", "rows", "features")


def _shape(spec, data):
    """``(rows, features)`` of what a reader or generator returned (features None for text)."""
    if spec.output == "reviews":
        return len(data[1]), None
    return int(np.shape(data[0])[0]), int(np.shape(data[0])[1])


def _mirror_file(spec, folder):
    """The mirror's copy of the registry's file, or None and why it cannot be read."""
    if spec.fname is None:
        return None, "no file: the registry names none"
    if folder is None:
        return None, "needs the mirror (absent)"
    found = next((folder / c for c in spec.mirror_candidates() if (folder / c).is_file()), None)
    if found is None:
        return None, "not in the mirror"
    if spec.sha256 is None:
        return None, "the registry has no sha256 to confirm the mirror's file is the whole upstream file"
    if sha256_file(found) != spec.sha256:
        return None, "the mirror's file is not the registry's (sha256 differs)"
    return found, ""


def _read(spec, folder):
    """One dataset's fact row without Table 2's columns."""
    row = {"dataset": spec.name, "kind": spec.kind, "documented_rows": None, "documented_features": None,
           "source": "", "file": "", "sha256": "", "rows": None, "features": None, "status": NOT_CHECKABLE,
           "reason": ""}
    if spec.shape is not None:
        row["documented_rows"], row["documented_features"] = spec.shape
    if spec.kind == "generated":
        row["source"] = "generator, default size, random_state 0"
        data = spec.generator(spec.default_n_samples, random_state=0)
    elif spec.kind == "ordinal":
        row["source"] = "bundled in its package"
        try:
            data = spec.reader(None)
        except ImportError as error:
            return {**row, "reason": f"its package is not installed ({error.name})"}
    else:
        found, reason = _mirror_file(spec, folder)
        if found is None:
            return {**row, "reason": reason}
        row.update(source="mirror", file=str(found.relative_to(folder)), sha256=spec.sha256)
        data = spec.reader(str(found))
    rows, features = _shape(spec, data)
    return {**row, "rows": rows, "features": features, "status": READ}


def dataset_facts(registry, mirror):
    """Every registry dataset's rows and features as read, Table 2's datasets first.

    Parameters
    ----------
    registry : dict
        Name to :class:`qs3study.datasets.registry.DatasetSpec`.
    mirror : path-like or None
        The offline mirror folder; None or a missing folder: no file is read.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, columns :data:`FACT_COLUMNS`: ``table2`` is Table 2's name of
        the dataset (empty for the others), ``status`` is :data:`READ` (``rows`` and
        ``features`` counted, ``features`` empty for text) or :data:`NOT_CHECKABLE` with
        its ``reason``.
    """
    folder = Path(mirror) if mirror is not None and Path(mirror).is_dir() else None
    names = [*TABLE2, *(name for name in registry if name not in TABLE2)]
    out = []
    for name in names:
        label, features, rows, _classes = TABLE2.get(name, ("", None, None, None))
        paper = {"table2": label, "paper_rows": rows, "paper_features": features}
        if name not in registry:
            out.append({"dataset": name, "kind": "", **paper, "status": NOT_CHECKABLE,
                        "reason": "absent from the registry"})
            continue
        out.append({**_read(registry[name], folder), **paper})
    frame = pd.DataFrame(out, columns=list(FACT_COLUMNS))
    return frame.astype({column: "Int64" for column in _COUNTS})


def read_dataset_facts(path):
    """:func:`dataset_facts`' table from its tidy file (counts as nullable integers, empty text kept empty)."""
    return pd.read_csv(path, keep_default_na=False, na_values={column: [""] for column in _COUNTS},
                       dtype={column: ("Int64" if column in _COUNTS else str) for column in FACT_COLUMNS})
