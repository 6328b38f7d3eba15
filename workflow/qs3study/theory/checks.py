r"""Deterministic checks of claims 1-4, shared by the tests and the claims ledger.

The property-based tests (``tests/theory``) search each claim's whole stated
domain with hypothesis and pin the smallest counterexamples they find; the
constants ``PINNED_*`` below are those counterexamples, and the functions here
re-check them and sweep fixed exhaustive grids, so the ledger can state its
evidence without running pytest.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import numpy as np
from scipy import stats

from qs3orao.kernels import fourier_features, frequency_block, gaussian_kernel, sampling_rng
from .coefficients import exact_lemma2_ratios, exact_step_coefficients, in_lemma2_domain, lemma2_ratios
from .features import expected_feature_product, expected_gradient, exact_gradient
from .risk_identity import (empirical_mixture, identity_gap, squared_identity_bias,
                            variance_penalty_effect)
from .threshold_lemma import all_classes_present, appendix_threshold_minimisers, threshold_verdict

__all__ = [
    "PINNED_SQUARED_GAP", "PINNED_SQUARED_F_DEPENDENT", "PINNED_NOT_A_MIXTURE",
    "PINNED_HINGE_NOT_UNIQUE", "PINNED_HINGE_NOT_STRICT", "PINNED_SQUARED_HINGE_NOT_UNIQUE",
    "PINNED_EMPTY_CLASS", "PINNED_LEMMA2", "FLOAT_RELATIVE_TOLERANCE",
    "check_claim1", "check_claim2", "check_claim3", "check_claim4", "check_algorithm1",
    "check_appendix_thresholds", "check_assumption3", "check_table1_space",
]

# --- Counterexamples pinned by the hypothesis searches in tests/theory ------
#: Claim 1, squared loss: the identity is off by 1/2 already at one positive and one negative.
PINNED_SQUARED_GAP = {"FP": (0.0,), "FN": (0.0,), "mult_p": 1, "mult_n": 1}
#: Claim 1, squared loss: the offset depends on f (so the minimiser moves).
PINNED_SQUARED_F_DEPENDENT = {"FP": (0.0,), "FN": (0.0, 1.0), "mult_p": 1, "mult_n": 1}
#: Claim 1, zero-one loss: without the mixture condition on U the identity fails.
PINNED_NOT_A_MIXTURE = {"FP": (1.0,), "FN": (0.0,), "FU": (2.0,)}
#: Claim 3: (scores, codes, k, loss) where the minimiser is an interval.
PINNED_HINGE_NOT_UNIQUE = ((0.0, 0.0), (0, 1), 2, "hinge")
PINNED_SQUARED_HINGE_NOT_UNIQUE = ((0.0, 3.0), (0, 1), 2, "squared_hinge")
#: Claim 3: unique hinge thresholds that coincide (b_1* = b_2* = -1).
PINNED_HINGE_NOT_STRICT = ((0.0, 0.0, 0.0, 0.0, 0.0), (0, 1, 2, 2, 2), 3, "hinge")
#: Claim 3, outside the lemma's implicit setting: an empty middle class ties two thresholds for every surrogate.
PINNED_EMPTY_CLASS = ((0.0, 1.0), (0, 2), 3)
#: Claim 4: theta * lambda = 4, t = 2 gives |a_2^1| = theta > theta / 2.
PINNED_LEMMA2 = {"theta": 1, "lam": 4, "t": 2}
# ---------------------------------------------------------------------------

#: Floating-point Lemma 2 ratios are compared with 1 up to this relative
#: rounding allowance: c = 1 attains the bound with equality (a_t^i = -theta / t
#: for every i) and a product of t rounded factors carries ~t ulps of error.
FLOAT_RELATIVE_TOLERANCE = 1e-9


def _score_multisets(values, max_size):
    for size in range(1, max_size + 1):
        yield from itertools.combinations_with_replacement(values, size)


def check_claim1(*, values, max_size, multiplicities):
    """Claim 1 on an exhaustive grid of small score multisets, plus the pinned cases.

    Returns
    -------
    dict
        ``cases``; ``zero_one_failures`` (identity off, U a mixture);
        ``closed_form_failures`` (squared-loss gap differs from the closed form);
        ``squared_unbiased_cases`` (squared-loss gap equal to zero: expected none);
        the pinned gaps; and the minimiser shift of :func:`variance_penalty_effect`.
    """
    cases = zero_one = closed = squared_zero = 0
    for FP in _score_multisets(values, max_size):
        for FN in _score_multisets(values, max_size):
            for mp, mn in itertools.product(multiplicities, repeat=2):
                if mp == mn == 0:
                    continue
                FU = empirical_mixture(FP, FN, mp, mn)
                cases += 1
                zero_one += identity_gap(FP, FN, FU, "zero_one") != 0
                gap = identity_gap(FP, FN, FU, "squared")
                closed += gap != squared_identity_bias(FP, FN, mp, mn)
                squared_zero += gap == 0
    pinned = PINNED_SQUARED_F_DEPENDENT
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(45, 2))
    y = np.digitize(X.sum(axis=1) + 0.3 * rng.standard_normal(45), [0.8, 1.2])
    return {
        "cases": cases,
        "zero_one_failures": int(zero_one),
        "closed_form_failures": int(closed),
        "squared_unbiased_cases": int(squared_zero),
        "pinned_squared_gap": identity_gap(PINNED_SQUARED_GAP["FP"], PINNED_SQUARED_GAP["FN"],
                                           empirical_mixture(PINNED_SQUARED_GAP["FP"], PINNED_SQUARED_GAP["FN"], 1, 1),
                                           "squared"),
        "pinned_f_dependent_gap": identity_gap(pinned["FP"], pinned["FN"],
                                               empirical_mixture(pinned["FP"], pinned["FN"], 1, 1), "squared"),
        "pinned_not_a_mixture_gap": identity_gap(PINNED_NOT_A_MIXTURE["FP"], PINNED_NOT_A_MIXTURE["FN"],
                                                 PINNED_NOT_A_MIXTURE["FU"], "zero_one"),
        "minimiser": variance_penalty_effect(X, y, gamma=1.0, lam=0.1),
    }


def check_claim2(*, gammas, n_pairs, seed):
    """Claim 2: ``E_omega[phi . phi'] = k`` and ``E_omega[zeta] = xi``, plus the sampler's law.

    Returns
    -------
    dict
        ``max_kernel_error`` over random pairs and the ``gammas``;
        ``max_gradient_error`` for a random gradient; ``ks_pvalue`` of the
        pooled, standardised entries of :func:`frequency_block` against N(0, 1).
    """
    rng = np.random.default_rng(seed)
    worst = 0.0
    for gamma in gammas:
        for _ in range(n_pairs):
            x, x2 = rng.uniform(size=(2, 3))
            exact = gaussian_kernel(x[None], x2[None], gamma=gamma)[0, 0]
            worst = max(worst, abs(expected_feature_product(x, x2, gamma) - exact))
    X = rng.uniform(size=(8, 3))
    rows, weights = rng.integers(8, size=5), rng.standard_normal(5)
    gradient_error = float(np.abs(expected_gradient(X, rows, weights, 1.5) - exact_gradient(X, rows, weights, 1.5)).max())
    gamma = 0.7
    draws = np.concatenate([frequency_block(seed, block, 16, 4, gamma).ravel() for block in range(1, 201)])
    return {
        "max_kernel_error": float(worst),
        "max_gradient_error": gradient_error,
        # features scaled by the printed sqrt(1/D), D = 2m, instead of 1/sqrt(m): E[phi . phi] at x = x'
        "printed_scaling_gap": float(expected_feature_product(X[0], X[0], gamma) / 2.0 - 1.0),
        "ks_pvalue": float(stats.kstest(draws / np.sqrt(2.0 * gamma), "norm").pvalue),
        "n_frequency_draws": int(draws.size),
    }


def _threshold_instances(k, values, max_rows):
    items = list(itertools.product(values, range(k)))
    for size in range(k, max_rows + 1):
        for chosen in itertools.combinations_with_replacement(items, size):
            scores, codes = map(np.array, zip(*chosen))
            if all_classes_present(codes, k):
                yield scores.astype(np.float64), codes


def check_claim3(*, values, max_rows, classes):
    """Claim 3 on every instance of a small exhaustive grid, for each surrogate.

    Returns
    -------
    dict
        Per loss: ``instances``, ``not_unique``, ``not_ordered_midpoints``,
        ``not_ordered_any_selection``; and the pinned verdicts.
    """
    out = {}
    for loss in ("hinge", "squared_hinge", "logistic"):
        counts = {"instances": 0, "not_unique": 0, "not_ordered_midpoints": 0, "not_ordered_any_selection": 0}
        for k in classes:
            for scores, codes in _threshold_instances(k, values, max_rows):
                verdict = threshold_verdict(scores, codes, k, loss)
                counts["instances"] += 1
                counts["not_unique"] += not verdict.unique
                counts["not_ordered_midpoints"] += not verdict.ordered_midpoints
                counts["not_ordered_any_selection"] += not verdict.ordered_any_selection
        out[loss] = counts
    for name, pinned in (("pinned_hinge_not_unique", PINNED_HINGE_NOT_UNIQUE),
                         ("pinned_squared_hinge_not_unique", PINNED_SQUARED_HINGE_NOT_UNIQUE),
                         ("pinned_hinge_not_strict", PINNED_HINGE_NOT_STRICT)):
        scores, codes, k, loss = pinned
        out[name] = threshold_verdict(np.array(scores), np.array(codes), k, loss)
    scores, codes, k = PINNED_EMPTY_CLASS
    out["pinned_empty_class"] = {loss: threshold_verdict(np.array(scores), np.array(codes), k, loss)
                                 for loss in ("hinge", "squared_hinge", "logistic")}
    return out


def check_claim4(*, max_integer, max_exact_t, denominators, float_t):
    """Claim 4 (Lemma 2) over its stated domain on exact and floating-point grids.

    Exact rational arithmetic for every integer ``c = theta * lambda`` up to
    ``max_integer`` and every rational ``c = 1 + p / q`` in ``(1, 2)`` with
    ``q`` in ``denominators``, for every ``t <= max_exact_t``; floating point
    for the rational grid at the larger ``float_t``.

    Returns
    -------
    dict
        ``cases``, ``violations`` (of either inequality), ``violating_products``
        (the ``c`` with a violation), ``worst`` ``(c, t, ratio)``,
        ``binomial_identity_holds`` (``|a_t^1| t / theta = binom(c - 2, t - 1)``
        for integer ``c`` and ``t < c``), ``float_violations``, the pinned ratios,
        ``smallest`` ``(c, t, ratio of the max, ratio of the sum)`` of the first
        violation in ``(c, t)`` order (None without one), ``last_violating_t``
        (per violating integer ``c``, the largest ``t`` violated) and
        ``holding_products`` (the integer ``c`` without violation).
    """
    products = [Fraction(c) for c in range(1, max_integer + 1)]
    products += sorted({1 + Fraction(p, q) for q in denominators for p in range(1, q)})
    cases = violations = 0
    violating, worst, binomial = set(), (None, None, Fraction(0)), True
    smallest, last_t = None, {}
    for c in sorted(products):
        assert in_lemma2_domain(c)
        for t in range(1, max_exact_t + 1):
            top, total = exact_lemma2_ratios(1, c, t)
            cases += 1
            if top > 1 or total > 1:
                violations += 1
                violating.add(c)
                last_t[c] = t
                if smallest is None:
                    smallest = (str(c), t, float(top), float(total))
            if top > worst[2]:
                worst = (c, t, top)
            if c.denominator == 1 and 2 <= c and t < c:
                binomial &= abs(exact_step_coefficients(1, c, t)[0]) * t == comb(int(c) - 2, t - 1)
    float_violations = sum(
        max(lemma2_ratios(1.0, float(c), t)) > 1.0 + FLOAT_RELATIVE_TOLERANCE
        for c in products if c < 2 for t in float_t)
    return {
        "cases": cases,
        "violations": violations,
        "violating_products": sorted(int(c) for c in violating),
        "worst": (str(worst[0]), worst[1], float(worst[2])),
        "binomial_identity_holds": bool(binomial),
        "float_cases": sum(1 for c in products if c < 2) * len(float_t),
        "float_violations": int(float_violations),
        "pinned": tuple(float(r) for r in exact_lemma2_ratios(**PINNED_LEMMA2)),
        "smallest": smallest,
        "last_violating_t": {str(c): t for c, t in sorted(last_t.items())},
        "holding_products": [int(c) for c in products if c.denominator == 1 and c not in violating],
    }



def check_algorithm1(*, cases, seed, finite_difference_step, lam, shrink_steps):
    """Algorithm 1 as printed against the gradient, on random sampled steps.

    For each case: a random problem state ``F``, one draw of rows and one
    frequency block; the direction of line 11 as printed and the project's
    :func:`qs3orao.stochastic.gradient_weights` direction are compared with
    the finite-difference gradient of the sampled risk. Line 12's shrink is
    compared with the gradient step's on the paper's steps ``theta / t``.

    Returns
    -------
    dict
        ``cases``; ``printed_deviation`` and ``gradient_deviation``: the largest
        relative deviation ``||d - g||_inf / ||g||_inf`` from the
        finite-difference gradient ``g``; ``shrink_deviation``: the largest
        relative deviation of line 12's factors from the gradient step's over
        ``shrink_steps`` steps ``eta_t = 1 / t``; and the settings.
    """
    from qs3orao.objective import split_members
    from qs3orao.stochastic import draw_rows, gradient_weights
    from .algorithm_printed import (gradient_shrink_factors, printed_direction, printed_shrink_factors,
                                    sampled_risk_gradient)

    rng = np.random.default_rng(seed)
    printed = gradient = 0.0
    for case in range(cases):
        n, k = 40, 3 + case % 2
        X = rng.uniform(size=(n, 2))
        codes = np.arange(n) % k
        codes[rng.permutation(n)[: n // 2]] = -1
        tradeoff = rng.uniform(0.1, 0.9, size=k - 1)
        splits, unlabeled = split_members(codes, k - 1)
        draws = draw_rows(sampling_rng(seed + case), splits, unlabeled, tradeoff, 1 + case % 3)
        F = rng.standard_normal(n)
        omega = frequency_block(seed, case + 1, 3, 2, 1.0)
        reference = sampled_risk_gradient(X, F, draws, tradeoff, omega, step=finite_difference_step)
        rows, weights = gradient_weights(draws, F.__getitem__, tradeoff)
        scale = np.abs(reference).max()
        printed = max(printed, float(np.abs(printed_direction(X, F, draws, tradeoff, omega) - reference).max() / scale))
        gradient = max(gradient, float(np.abs(weights @ fourier_features(X[rows], omega) - reference).max() / scale))
    etas = 1.0 / np.arange(1, shrink_steps + 1)
    factors = gradient_shrink_factors(etas, lam)
    shrink = float(np.max(np.abs(printed_shrink_factors(etas, lam) - factors) / np.abs(factors)))
    return {"cases": cases, "printed_deviation": printed, "gradient_deviation": gradient,
            "shrink_deviation": shrink, "finite_difference_step": finite_difference_step, "lam": lam,
            "shrink_steps": shrink_steps}


def check_appendix_thresholds(*, cases, seed, max_rows, classes):
    """The appendix's threshold objective ``e_j`` on random labeled instances, in exact arithmetic.

    Returns
    -------
    dict
        ``cases``; ``not_increasing``: instances whose minimisers of ``e_j``
        are not strictly increasing in ``j``; ``equal_to_mean``: instances where
        every minimiser equals the mean score.
    """
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    not_increasing = equal_mean = 0
    for _ in range(cases):
        k = int(rng.choice(classes))
        n = int(rng.integers(k, max_rows + 1))
        codes = np.concatenate([np.arange(k), rng.integers(k, size=n - k)])
        scores = [Fraction(int(v), 4) for v in rng.integers(-20, 21, size=n)]
        b = appendix_threshold_minimisers(scores, codes, k)
        not_increasing += not all(lo < hi for lo, hi in zip(b, b[1:]))
        equal_mean += all(v == sum(scores, Fraction(0)) / n for v in b)
    return {"cases": cases, "not_increasing": int(not_increasing), "equal_to_mean": int(equal_mean)}


def check_assumption3(*, bound, doublings):
    """Assumption 3 for the squared and the logistic pairwise loss against ``bound``.

    Returns
    -------
    dict
        Per loss, the first margin ``u - v`` with ``|l'| > bound`` (None if none was found).
    """
    from .assumptions import LOSS_DERIVATIVES, derivative_exceeding

    return {loss: derivative_exceeding(loss, bound, doublings=doublings) for loss in LOSS_DERIVATIVES}


def check_table1_space(*, n, n_components, n_iters):
    """Coefficients kept by a fitted QS3ORAO at fixed ``n`` and ``D``, per ``n_iter`` (Table 1's space).

    Returns
    -------
    dict
        ``n_iters``, ``coefficients`` and ``per_iteration`` (``coefficients / n_iter``).
    """
    from .paper_tables import coefficient_storage

    counts = coefficient_storage(n=n, n_components=n_components, n_iters=n_iters)
    return {"n": n, "D": 2 * n_components, "n_iters": list(n_iters), "coefficients": counts,
            "per_iteration": [c / t for c, t in zip(counts, n_iters)]}
