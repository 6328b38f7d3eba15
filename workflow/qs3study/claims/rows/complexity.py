"""Rows 7 and 7s: Table 1's time and space complexities.

Reads the design's ``complexity``, ``v2.complexity`` and ``checks.coefficient_storage`` sections
(through the check's results) and design v2's complexity run: its fitted exponents and the
engine's memory growth in t.
"""

from __future__ import annotations

from .. import verdicts as v
from ..ledger import Claim
from .text import FIGURES, number_set


#: The sweep read by its linear growth in t, not by an exponent (design v2).
MEMORY_VS_T = "engine_memory_vs_t"


def memory_growth(growth, spec):
    """The engine's memory against t: its class and the evidence clause.

    ``growth`` is ``(slope, low, high)`` in MiB per iteration; ``spec`` the design's
    ``v2.complexity.criteria.memory_vs_t``. The claimed O(Dn) space does not grow with t, so
    "does not grow" reads consistent and growth by t D coefficients inconsistent.
    """
    expected = spec["bytes_per_coefficient"] * spec["coefficients_per_iteration"]
    slope, low, high = (x * 2**20 for x in growth)
    found = v.growth_class(low, high, expected=expected, tolerance=spec["tolerance"], negligible=spec["negligible"])
    label = {"does not grow": "consistent", "grows as expected": "inconsistent"}.get(found, "inconclusive")
    return label, (f"{MEMORY_VS_T}: linear fit {slope:.4g} bytes per iteration [{low:.4g}, {high:.4g}] against t D = "
                   f"{spec['coefficients_per_iteration']} coefficients x {spec['bytes_per_coefficient']} bytes = "
                   f"{expected:g}: {found} vs O(Dn), which does not grow with t: {label}")


def row_complexity(exponents, criteria, local, tail, settings, growth):
    """Row 7: each claimed exponent read as an upper bound at the sizes where the leading term dominates.

    ``exponents`` (fit over every size), ``local`` (exponents between consecutive sizes) and ``tail``
    (fit over the ``criteria["tail"]`` largest sizes) map sweep names to their values; ``settings``
    are the complexity section's (its ``blas_threads`` bound the timed calls); ``criteria`` design
    v2's (its claimed exponents the complexity section's); ``growth`` the engine's memory against t
    (:func:`memory_growth`), which replaces that sweep's exponent.
    """
    classes, parts = [], []
    for name, (slope, low, high) in exponents.items():
        claimed = criteria["claimed"][name]
        if name == MEMORY_VS_T:
            label, text = memory_growth(growth, criteria["memory_vs_t"])
            classes.append(label)
            parts.append(text)
            continue
        steps = ", ".join(f"{x:.2f}" for x in local[name])
        t_slope, t_low, t_high = tail[name]
        measured = (f"{name}: all sizes {slope:.2f} [{low:.2f}, {high:.2f}], local {steps}, largest "
                    f"{criteria['tail']} sizes {t_slope:.2f} [{t_low:.2f}, {t_high:.2f}]")
        if claimed is None:
            parts.append(f"{measured} (no claim)")
            continue
        c = v.upper_bound_class(t_low, t_high, local[name], claimed=claimed, tolerance=criteria["tolerance"],
                                dominance=criteria["dominance"])
        classes.append(c)
        two_sided = v.exponent_class(low, high, claimed=claimed, tolerance=criteria["tolerance"])
        parts.append(f"{measured} vs O(size^{claimed:g}): {c} (two-sided fit over all sizes, reported: {two_sided})")
    dominated = [name for name, steps in local.items() if criteria["claimed"][name] is not None
                 and name != MEMORY_VS_T and v.upper_bound_class(0.0, 0.0, steps, claimed=0.0, tolerance=0.0,
                                         dominance=criteria["dominance"]) == "not dominant"]
    return Claim(
        "7", "Table 1: QS3ORAO time O(D t^2), space O(D n); exact kernel methods O(n^3) time, O(n^2) space",
        "Table 1; Sec. 'Results and Discussion'",
        f"Timing (CPU seconds of the process during the call, BLAS limited to {settings['blas_threads']} thread(s); "
        f"median of repeats), tracemalloc peak-memory and dominant-operation-count sweeps over >= 6 sizes and >= 1.5 "
        f"decades (design v2: {settings['repeats']} fresh repeats). Each O(.) is read as an upper bound where its "
        "leading term dominates: the last two local exponents "
        f"(between consecutive sizes) differ by <= {criteria['dominance']:g}, else 'not dominant'; then the exponent "
        f"fitted on every repeat at the {criteria['tail']} largest sizes, {criteria['confidence']:.0%} CI: consistent "
        f"if its upper end <= claimed + {criteria['tolerance']:g}, inconsistent if its lower end is above, else "
        f"inconclusive. Over every sweep with a claim: holds if all are consistent, fails if any is inconsistent, "
        f"else inconclusive; the engine's memory against t by a linear fit (the t D coefficients are an additive "
        f"term), consistent with O(Dn) when it does not grow (upper end below "
        f"{criteria['memory_vs_t']['negligible']:g} x t D's bytes), inconsistent when it grows by t D (within "
        f"+- {criteria['memory_vs_t']['tolerance']:.0%}). The literal Algorithms 1-2 stand for Table 1's QS3ORAO time (every prediction "
        f"regenerates all earlier blocks); the project's engine (O(t n D) time, capped working buffer) is measured "
        f"for the space claims; the exact kernel methods are f* (qs3orao.exact) and, where swept, the baselines "
        f"M-SAMULT (samult_*) and M-PNU-AUC (pnu_auc_*). Figure {FIGURES}/complexity.png.",
        v.complexity_verdict(classes),
        "; ".join(parts) + ". Sweeps whose leading term the sizes do not show: "
        + (", ".join(dominated) if dominated else "none") + ".")


def row_table1_space(space):
    grows = sum(b > a for a, b in zip(space["coefficients"], space["coefficients"][1:]))
    return Claim(
        "7s", "Table 1: QS3ORAO's space is O(Dn)",
        "Table 1",
        f"Coefficients a fitted QS3ORAO keeps at fixed n = {space['n']} and D = {space['D']}, for n_iter in "
        f"{space['n_iters']}; the claim fails if the count grows with t at fixed D and n.",
        v.counterexample_verdict(grows, len(space["n_iters"]) - 1),
        f"coef_.size = {space['coefficients']} ({number_set(space['per_iteration'])} per iteration"
        + (" = D" if set(space["per_iteration"]) == {space["D"]} else "")
        + ("): the model keeps t x D coefficients, which O(Dn) omits; the space is O(Dn + tD) (the data plus "
           "the coefficients)." if grows else "): the count does not grow with t at fixed D and n, as O(Dn) says.")
        + " Measured memory against t: row 7.")


def rows(inputs):
    """Rows 7, 7s from the ledger's :class:`~qs3study.claims.rows.Inputs`."""
    complexity, v2 = inputs.design["complexity"], inputs.design["v2"]["complexity"]
    criteria = {**v2["criteria"], "claimed": complexity["criteria"]["claimed"]}
    settings = {**complexity["settings"], "repeats": v2["repeats"]}
    return [row_complexity(inputs.exponents, criteria, inputs.local_exponents, inputs.tail_exponents,
                           settings, inputs.memory_growth),
            row_table1_space(inputs.checks["table1_space"])]
