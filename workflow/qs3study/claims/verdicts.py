"""Verdict functions: a check's results and criteria fixed in the design -> a verdict.

Every verdict of the ledger is the return value of one of these functions;
none is written by hand. A check whose precision cannot separate "holds" from
"fails" returns "inconclusive".
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = [
    "VERDICTS", "HOLDS", "UNINFORMATIVE", "CONDITIONAL", "FAILS", "PREMISE_FAILS", "INCONCLUSIVE", "NOT_CHECKABLE", "NOT_EVALUATED",
    "DRAW_DEPENDENT", "counterexample_verdict", "identity_verdict", "difference_verdict", "witness_verdict",
    "rate_class", "bound_class", "domain_verdict", "premise_verdict", "exponent_class", "upper_bound_class",
    "growth_class", "complexity_verdict",
    "transient_verdict", "offset_verdict", "dependent_proof_verdict", "facts_verdict", "data_facts_verdict", "not_checkable",
    "not_evaluated", "powered", "draw_verdict", "BAR_VERDICTS", "bar_verdict",
]

HOLDS = "holds"
#: It passed, but its power statement says it could not have failed short of divergence.
UNINFORMATIVE = "holds (uninformative)"
CONDITIONAL = "holds under stated conditions"
FAILS = "fails"
#: The conclusion is violated, but only where a stated assumption is violated too.
PREMISE_FAILS = "premise fails"
INCONCLUSIVE = "inconclusive"
NOT_CHECKABLE = "not checkable"
NOT_EVALUATED = "not evaluated"
#: An empirical claim whose verdict differs between the tuning draws of one run (``tuning.draws``).
DRAW_DEPENDENT = "depends on the tuning draw"
VERDICTS = (HOLDS, UNINFORMATIVE, CONDITIONAL, FAILS, PREMISE_FAILS, INCONCLUSIVE, NOT_CHECKABLE, NOT_EVALUATED,
            DRAW_DEPENDENT)


def powered(verdict, can_fail):
    """A statistical check's verdict read with its power statement.

    A "holds" from a check whose design could not have failed it short of divergence
    (``can_fail`` false, decided from the design before the data) is "holds (uninformative)";
    every other verdict is returned as it is.
    """
    return UNINFORMATIVE if verdict == HOLDS and not can_fail else verdict


def counterexample_verdict(counterexamples, cases, *, conditions=False):
    """An exhaustive or exact check: any counterexample fails the claim.

    Parameters
    ----------
    counterexamples, cases : int
    conditions : bool
        Whether the claim holds only under conditions the ledger states.
    """
    if cases == 0:
        return NOT_EVALUATED
    if counterexamples > 0:
        return FAILS
    return CONDITIONAL if conditions else HOLDS


def identity_verdict(failures_under_condition, cases, gap_without_condition):
    """An identity claimed unconditionally but checked under a condition.

    Fails when it fails under the condition; holds under stated conditions when
    it holds there but a case outside the condition breaks it; holds otherwise.
    """
    if cases == 0:
        return NOT_EVALUATED
    if failures_under_condition > 0:
        return FAILS
    return CONDITIONAL if gap_without_condition != 0 else HOLDS


def difference_verdict(deviation, tolerance):
    """A claim that two computations agree: holds when ``deviation <= tolerance``, fails otherwise."""
    if deviation is None or not math.isfinite(deviation):
        return INCONCLUSIVE
    return HOLDS if deviation <= tolerance else FAILS


def witness_verdict(witness):
    """A bound claimed everywhere: a witness where it is exceeded fails it; none found is a confirmation only
    as far as the search went, so it is 'holds under stated conditions'."""
    return FAILS if witness is not None else CONDITIONAL


def rate_class(low, high, *, target, tolerance):
    """Classify a slope interval against ``O(t^target)``.

    Returns
    -------
    {"consistent", "slower", "inconclusive", "not finite"}
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return "not finite"
    if high <= target + tolerance:
        return "consistent"
    if low > target + tolerance:
        return "slower"
    return "inconclusive"


def bound_class(mean_low, max_high, bound):
    """Classify a bound on the expected error at one checkpoint.

    ``mean_low`` is the lower confidence end of the mean over rows and seeds
    (a lower estimate of ``max_x E|f(x) - f*(x)|^2``), ``max_high`` the upper
    end of the seed mean of the max over rows (an upper estimate of it).

    Returns
    -------
    {"exceeded", "respected", "inconclusive", "undefined"}
    """
    if bound is None or not math.isfinite(bound):
        return "undefined"
    if math.isfinite(mean_low) and mean_low > bound:
        return "exceeded"
    if not math.isfinite(mean_low):
        # the run left the floats: the error exceeds any finite bound
        return "exceeded"
    if math.isfinite(max_high) and max_high <= bound:
        return "respected"
    return "inconclusive"


def domain_verdict(classes, *, fail_class, pass_class):
    """A claim over a domain of cells: fails if some cell is in ``fail_class``, holds if every cell is ``pass_class``.

    ``fail_class`` is one class or a tuple of classes. Cells with other classes
    (inconclusive, undefined) leave it inconclusive.
    """
    classes = list(classes)
    fail_classes = (fail_class,) if isinstance(fail_class, str) else tuple(fail_class)
    if not classes:
        return NOT_EVALUATED
    if any(c in fail_classes for c in classes):
        return FAILS
    if all(c == pass_class for c in classes):
        return HOLDS
    return INCONCLUSIVE


def premise_verdict(classes, premise_holds, *, fail_class, pass_class):
    """A claim made under stated assumptions, over a domain of cells.

    Parameters
    ----------
    classes : sequence of str
        Per cell, the class of the claim's conclusion.
    premise_holds : sequence of bool
        Per cell, whether every stated assumption the check can test holds there.
    fail_class, pass_class
        As in :func:`domain_verdict`.

    Returns
    -------
    str
        "fails" when the conclusion is violated in a cell where the premise
        holds; "premise fails" when it is violated, but only in cells where
        the premise is violated too; otherwise as :func:`domain_verdict`.
    """
    classes, premise_holds = list(classes), [bool(p) for p in premise_holds]
    if len(classes) != len(premise_holds):
        raise ValueError(f"premise_holds must have one entry per cell ({len(classes)}), got {len(premise_holds)}")
    fail_classes = (fail_class,) if isinstance(fail_class, str) else tuple(fail_class)
    violated = [c in fail_classes for c in classes]
    if any(v and p for v, p in zip(violated, premise_holds)):
        return FAILS
    if any(violated):
        return PREMISE_FAILS
    return domain_verdict(classes, fail_class=fail_class, pass_class=pass_class)


def exponent_class(low, high, *, claimed, tolerance):
    """Two-sided: "consistent" when ``[low, high]`` lies in ``claimed +- tolerance``,
    "inconsistent" when it lies entirely outside, "inconclusive" otherwise."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "inconclusive"
    if claimed - tolerance <= low and high <= claimed + tolerance:
        return "consistent"
    if high < claimed - tolerance or low > claimed + tolerance:
        return "inconsistent"
    return "inconclusive"


def upper_bound_class(low, high, local, *, claimed, tolerance, dominance):
    """An O(size^claimed) upper bound read at the sizes where the leading term dominates.

    Parameters
    ----------
    low, high : float
        Confidence interval of the exponent fitted at the largest sizes.
    local : sequence of float
        Exponents between consecutive sizes; the leading term is taken to dominate
        when the last two differ by at most ``dominance`` (the curve has straightened).
    claimed, tolerance, dominance : float

    Returns
    -------
    {"consistent", "inconsistent", "inconclusive", "not dominant"}
        "inconsistent" when the cost grows faster than the bound allows (lower end
        above ``claimed + tolerance``), "consistent" when the upper end is at most
        ``claimed + tolerance``; "not dominant" when the local exponents have not
        settled, so the sizes do not show the leading term.
    """
    local = [x for x in local if math.isfinite(x)]
    if len(local) < 2 or abs(local[-1] - local[-2]) > dominance:
        return "not dominant"
    if not (math.isfinite(low) and math.isfinite(high)):
        return "inconclusive"
    if low > claimed + tolerance:
        return "inconsistent"
    if high <= claimed + tolerance:
        return "consistent"
    return "inconclusive"


def growth_class(low, high, *, expected, tolerance, negligible):
    """A linear growth rate's interval ``[low, high]`` against an expected rate.

    Returns
    -------
    {"grows as expected", "does not grow", "inconclusive"}
        "grows as expected" when the interval lies inside ``expected * (1 +- tolerance)``;
        "does not grow" when its upper end is below ``negligible * expected``.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return "inconclusive"
    if expected * (1.0 - tolerance) <= low and high <= expected * (1.0 + tolerance):
        return "grows as expected"
    if high < negligible * expected:
        return "does not grow"
    return "inconclusive"


def complexity_verdict(classes):
    """Table 1 over its sweeps: any inconsistent sweep fails it, all consistent hold it."""
    return domain_verdict(classes, fail_class="inconsistent", pass_class="consistent")


def transient_verdict(predicted, measured, *, minimum, decades, share, rank):
    """Whether the predicted early amplification explains the measured peak.

    Over the cells with ``predicted > minimum``: holds when at least ``share``
    of them have ``|log10 measured - log10 predicted| <= decades`` and the
    Spearman rank correlation is at least ``rank``; fails when neither is met;
    inconclusive when one is, or with fewer than three such cells.
    """
    predicted, measured = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    keep = predicted > minimum
    if keep.sum() < 3:
        return INCONCLUSIVE
    p = np.log10(predicted[keep])
    m = np.log10(np.where(np.isfinite(measured[keep]), measured[keep], np.finfo(float).max))
    within = float(np.mean(np.abs(m - p) <= decades))
    correlation = float(stats.spearmanr(p, m).statistic)
    met = (within >= share, correlation >= rank)
    if all(met):
        return HOLDS
    return FAILS if not any(met) else INCONCLUSIVE


def offset_verdict(peaks, rate_pairs, *, peak_limit):
    """The offset schedule's claim: it removes the transient and keeps the rate.

    Parameters
    ----------
    peaks : sequence of float
        Measured peak amplification per cell under the offset schedule.
    rate_pairs : sequence of (str, str)
        Per cell, the rate classes under the paper's and the offset schedule.
    peak_limit : float
    """
    peaks, rate_pairs = list(peaks), list(rate_pairs)
    if not peaks:
        return NOT_EVALUATED
    removed = all(math.isfinite(p) and p <= peak_limit for p in peaks)
    lost = any(paper == "consistent" and offset in ("slower", "not finite") for paper, offset in rate_pairs)
    undecided = any(paper == "consistent" and offset == "inconclusive" for paper, offset in rate_pairs)
    if not removed or lost:
        return FAILS
    return INCONCLUSIVE if undecided else HOLDS


def dependent_proof_verdict(premise_failures):
    """A proof that uses a premise: unproven (fails) where the premise fails, proven elsewhere."""
    return FAILS if premise_failures else HOLDS


def facts_verdict(matches, *, choices):
    """Stated facts against records: any mismatch fails; all match -> holds, or holds under
    stated conditions when some facts are protocol choices rather than properties of the data."""
    matches = [m for m in matches if m is not None]
    if not matches:
        return NOT_EVALUATED
    if not all(matches):
        return FAILS
    return CONDITIONAL if choices else HOLDS


def data_facts_verdict(rows):
    """Stated facts against the data where the data could be read.

    Parameters
    ----------
    rows : sequence of dict
        Per fact group: ``source`` ("data" when read from a file, else documented
        only), ``rows_match`` and ``features_match`` (None: not comparable).

    Returns
    -------
    str
        Inconclusive with no file read; fails on a
        mismatch with the data; otherwise holds under stated conditions (the
        rest rests on documented upstream sizes and protocol choices).
    """
    read = [r for r in rows if r["source"] == "data"]
    if not read:
        return INCONCLUSIVE
    matches = [m for r in read for m in (r["rows_match"], r["features_match"]) if m is not None]
    if not all(matches):
        return FAILS
    return CONDITIONAL


#: :func:`bar_verdict`'s verdicts on a share against its bar.
BAR_VERDICTS = ("reaches the bar", "below the bar", "inconclusive")


def bar_verdict(successes, trials, *, bar, confidence):
    """A share of successes against a bar, with its Clopper-Pearson interval.

    "reaches the bar" when ``successes / trials >= bar``, "below the bar" when the interval's upper end
    is below ``bar``, "inconclusive" between the two.

    Returns
    -------
    low, high : float
        The exact (Clopper-Pearson) ``confidence`` interval of the share.
    verdict : str
        One of :data:`BAR_VERDICTS`.

    Examples
    --------
    >>> [bar_verdict(k, 33, bar=0.95, confidence=0.95)[2] for k in (32, 30, 28)]
    ['reaches the bar', 'inconclusive', 'below the bar']
    """
    if trials <= 0:
        raise ValueError(f"bar_verdict needs at least one trial, got {trials}")
    low, high = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence, method="exact")
    if successes / trials >= bar:
        return low, high, BAR_VERDICTS[0]
    return low, high, BAR_VERDICTS[1] if high < bar else BAR_VERDICTS[2]


def not_checkable():
    """A claim no computation can test (e.g. novelty)."""
    return NOT_CHECKABLE


def not_evaluated():
    """A claim whose evidence this run does not have."""
    return NOT_EVALUATED


def draw_verdict(verdicts):
    """The verdict of a claim evaluated once per tuning draw: theirs when all agree, else :data:`DRAW_DEPENDENT`.

    Examples
    --------
    >>> draw_verdict(["holds", "holds"]), draw_verdict(["holds", "inconclusive", "holds"])
    ('holds', 'depends on the tuning draw')
    """
    distinct = set(verdicts)
    if not distinct:
        raise ValueError("draw_verdict needs the verdict of at least one tuning draw")
    return distinct.pop() if len(distinct) == 1 else DRAW_DEPENDENT
