"""Rows T2 and N: Table 2's dataset facts and the novelty claim.

Reads the design's ``checks.table2`` section and the Table 2 check's results.
"""

from __future__ import annotations

from .. import verdicts as v
from ..ledger import Claim


def row_table2(table2, mirror):
    rows = table2["rows"]
    choices = [r["dataset"] for r in rows if r["features_match"] is None]

    def part(r):
        if r["source"] == "data":
            shape = f"{r['data_rows']:,} rows" + ("" if r["data_features"] is None else f", {r['data_features']} features")
            state = "match" if r["rows_match"] and r["features_match"] is not False else "MISMATCH"
            return f"{r['dataset']}: {shape} read from the mirror's {r['mirror_file']} ({state} with Table 2)"
        shape = f"{r['registry_rows']:,} rows" + ("" if r["registry_features"] is None
                                                  else f", {r['registry_features']} features")
        state = "agrees" if r["rows_match"] and r["features_match"] is not False else "DISAGREES"
        return f"{r['dataset']}: not in the mirror, upstream documented {shape} ({state} with Table 2, not data)"

    read = sum(r["source"] == "data" for r in rows)
    head = (f"Mirror {mirror}: {'absent, nothing read' if not table2['mirror_present'] else 'present'}; "
            f"{read}/{len(rows)} datasets checked against their files. ")
    return Claim(
        "T2", "Table 2: datasets' features, samples and classes",
        "Table 2",
        f"Table 2's numbers against the data: each dataset whose whole upstream file the offline mirror ({mirror}) "
        "holds (the registry's sha256) is read as the project reads it and counted; the others only against the "
        "registry's documented upstream sizes, reported and not counted. Inconclusive without the mirror or with "
        "no file read.",
        v.data_facts_verdict(rows, mirror_present=table2["mirror_present"]),
        head + "; ".join(part(r) for r in rows) + _conditions(rows, choices))


def _conditions(rows, choices):
    """The protocol choices behind the datasets of ``rows`` (those without a fixed width in ``choices``)."""
    names = {r["dataset"] for r in rows}
    conditions = ["5 classes = 5 equal-frequency bins of the regression targets"] if rows else []
    conditions += [text for dataset, text in (("3D", "3D keeps OSM_ID as a third feature"),
                                              ("Sgemm", "SGEMM's target is the mean of 4 runs")) if dataset in names]
    if choices:
        conditions.append(f"the 1000 features of {', '.join(choices)} are a TF-IDF vocabulary size (text has no "
                          "fixed width)")
    return (". Conditions (protocol choices, not facts of the data): " + "; ".join(conditions) + "."
            if conditions else ".")


def row_novelty():
    return Claim(
        "N", "Novelty: the first method for large-scale nonlinear semi-supervised ordinal regression AUC optimisation",
        "Abstract; Introduction; Table 1",
        "None possible: a priority claim over the literature is not a property of code or data.",
        v.not_checkable(),
        "Not checkable by computation.")


def rows(inputs):
    """Rows T2, N from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    return [row_table2(inputs.checks["table2"], inputs.design["checks"]["table2"]["mirror"]), row_novelty()]
