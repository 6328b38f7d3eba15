"""Rows 8a-8f: the empirical claims of the Results section, one set per protocol.

8e is read twice: as run (QS3ORAO against QS3ORAO with tradeoff = 1) and on the
objective (row 8e2: f* against f* with tradeoff = 1), each with its own verdict.

The verdicts and evidence come from :mod:`qs3study.claims.empirical` with the criteria of
each run's configuration; the design's ``empirical`` section names the runs.
"""

from __future__ import annotations

from .. import verdicts as v
from ..empirical import PROTOCOL_NAMES, ProtocolClaims
from ..ledger import Claim


def rows_empirical(empirical, reason, protocol=None):
    """Rows 8a-8f from one run's claims, or 8a-<protocol> .. for each protocol of a ``ProtocolClaims``."""
    if isinstance(empirical, ProtocolClaims):
        return [row for name, claims in empirical.items() for row in rows_empirical(claims, reason, name)]
    texts = {
        "highest_auc": ("8a", "QS3ORAO has the highest AUC in most cases"),
        "beats_supervised": ("8b", "the semi-supervised methods beat supervised SVOREX"),
        "faster_beyond_10k": ("8c", "QS3ORAO is faster than M-SAMULT and M-PNU-AUC beyond about 10,000 unlabeled "
                                    "rows"),
        "exact_out_of_memory": ("8d", "the exact baselines run out of memory on the larger sets"),
        "unlabeled_data_help": ("8e", "unlabeled data improve performance (QS3ORAO against itself with "
                                      "tradeoff = 1)"),
        "unlabeled_data_help_objective": ("8e2", "unlabeled data improve performance, read on the objective "
                                                 "(f*, the exact minimiser, against f* with tradeoff = 1)"),
        "similar_generalisation": ("8f", "QS3ORAO has similar generalisation performance to the exact methods"),
    }
    rows = []
    for key, (number, text) in texts.items():
        result = empirical.get(key) if empirical else None
        if protocol is not None:
            text = f"{text} ({PROTOCOL_NAMES.get(protocol, protocol)})"
        rows.append(Claim(
            number + (f"-{protocol}" if protocol else ""), text,
            "Sec. 'Results and Discussion'; Figures 2 and 3",
            "Criteria of the configuration's claims: section (qs3study.claims.empirical) applied to the results "
            "table the design names; AUC at the common comparison size, the paper's own methods only "
            "(added methods and the linear floor reported, never counted); times from the sweep.",
            result["verdict"] if result else v.not_evaluated(),
            result["evidence"] if result else reason))
    return rows


def rows(inputs):
    """Rows 8a-8f (per protocol) from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    return rows_empirical(inputs.empirical, inputs.empirical_reason)
