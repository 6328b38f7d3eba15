"""The ledger's rows, one home per family of claims.

Each module holds, for its claims, the statement, the part of the design it reads, the
criterion with its power statement, the verdict (a function of :mod:`..verdicts`) and the
evidence; its ``rows(inputs)`` turns the assembled :class:`Inputs` into its rows.

``exact``       1a-A1: identities, lemmas and Algorithm 1 checked exactly
``bounds``      A3, 5a-6, H5a-H6: Assumption 3 and the bounds of Lemmas 1, 3 and Theorem 1
``rate``        H6r, 6r, 6b: the O(1/t) rate
``stability``   S, O, O-data: the transient of theta/t and the offset schedules
``complexity``  7, 7s: Table 1
``data``        T2, N: Table 2 and novelty
``empirical``   8a-8f: the Results section, per protocol
"""

from __future__ import annotations

from dataclasses import dataclass

from . import bounds, complexity, data, empirical, exact, rate, stability

__all__ = ["Inputs", "FAMILIES", "build_claims"]

#: The families in ledger order.
FAMILIES = (exact, bounds, rate, stability, complexity, data, empirical)


@dataclass(frozen=True)
class Inputs:
    """Everything a row may read: the design and the checks' and studies' results.

    Attributes
    ----------
    design : dict
        The pre-registered design (:func:`qs3study.claims.design.load_design`).
    checks : dict
        Outputs of :mod:`qs3study.theory.checks`, keyed ``claim1..claim4``, ``algorithm1``,
        ``appendix_thresholds``, ``assumption3``, ``table1_space``.
    summary, offset_data_summary : pandas.DataFrame
        :func:`qs3study.claims.summary.summarise` of the convergence and offset_data studies.
    huber_informative_summary : pandas.DataFrame
        The same of design v2's Huberised-loss study, on its checkpoints ``t >= check_from``.
    rates : pandas.DataFrame
        :func:`qs3study.claims.rate.rate_equivalence_classes` of design v2's rate study.
    huber_rates : pandas.DataFrame
        :func:`qs3study.claims.rate.rate_classes` of the (v1) Huberised-loss study.
    offset_data_bounds : dict
        The offset_data study's curvature bound per instance.
    exponents, local_exponents, tail_exponents : dict
        Per sweep of design v2's complexity run: the exponent fitted over every size, those
        between consecutive sizes, and the one fitted at the largest sizes.
    memory_growth : tuple of float
        The engine's peak memory against t in that run: linear slope (MiB per iteration) and interval.
    empirical : dict or None
        The empirical claims (:mod:`qs3study.claims.empirical`), per protocol or of one table.
    empirical_reason : str
        Why the empirical rows are not evaluated, when they are not.
    dataset_facts : pandas.DataFrame
        Every dataset's counts as the theory run read them
        (:func:`qs3study.theory.dataset_facts.read_dataset_facts`).
    """

    design: dict
    checks: dict
    summary: object
    rates: object
    huber_informative_summary: object
    huber_rates: object
    offset_data_summary: object
    offset_data_bounds: dict
    exponents: dict
    local_exponents: dict
    tail_exponents: dict
    memory_growth: tuple
    empirical: object
    empirical_reason: str
    dataset_facts: object


def build_claims(**inputs):
    """All ledger rows, in claim order; the keywords are the fields of :class:`Inputs`."""
    inputs = Inputs(**inputs)
    return [row for family in FAMILIES for row in family.rows(inputs)]
