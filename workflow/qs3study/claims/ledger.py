"""The claims ledger's row type and its rendering.

A :class:`Claim` is one row (the rows themselves live in :mod:`qs3study.claims.rows`);
:func:`write_ledger` renders the rows as Markdown (with the design's hash and history) and
CSV, atomically.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields

from qs3study.files import write_text

from . import verdicts as v

__all__ = ["Claim", "history_markdown", "write_ledger"]


@dataclass(frozen=True)
class Claim:
    """One ledger row."""

    id: str
    claim: str
    where: str
    check: str
    verdict: str
    evidence: str

    def __post_init__(self):
        if self.verdict not in v.VERDICTS:
            raise ValueError(f"verdict must be one of {v.VERDICTS}, got {self.verdict!r}")


def _markdown_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def history_markdown(history):
    """The design's history section as Markdown."""
    lines = ["## History", ""]
    for entry in history:
        lines.append(f"- **{entry['design']}**: {' '.join(str(entry['change']).split())}")
        for claim, change in entry.get("verdicts", {}).items():
            lines.append(f"  - claim {claim}: {change}")
    return "\n".join(lines)


def write_ledger(claims, md_path, csv_path, *, header="", footer=""):
    """Write the ledger as a Markdown table (header, rows, footer) and a CSV with the same columns (atomically)."""
    names = [f.name for f in fields(Claim)]
    lines = [header, "", "| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(_markdown_cell(getattr(c, n)) for n in names) + " |" for c in claims]
    if footer:
        lines += ["", footer]
    write_text(md_path, "\n".join(lines).lstrip() + "\n")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names)
    writer.writeheader()
    writer.writerows(asdict(c) for c in claims)
    write_text(csv_path, buffer.getvalue())
