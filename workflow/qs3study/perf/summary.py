"""Side-by-side performance measurements of the fast engine (the ``perf`` Snakemake target).

Every ratio is measured in one process, both sides on the same problem and
seed, so machine load affects numerator and denominator alike.  Each function
returns rows ``(metric, value, detail)`` of the summary table.
"""

from __future__ import annotations

import functools

import sys
from pathlib import Path
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from baselines import MPNUAUC, MSAMULT, MemoryBudgetExceeded, NystromAUC, RFFAUC
from baselines.converged import ConvergedQS3ORAO
from qs3orao import QS3ORAO
from qs3orao.exact import exact_solution, exact_solution_path
from qs3orao._reference import reference_decision_function, reference_fit
from qs3study.datasets.generated import make_latent_regression
from qs3orao.engine import RandomFeatureModel, group_plan, memory_plan, train
from qs3orao.kernels import frequency_block
from qs3orao.validation import check_semisupervised

from qs3study.files import write_csv
from qs3study.runtime import setup_logging
from qs3study.perf.pool_time_to_accuracy import pool_time_to_accuracy_rows
from qs3study.perf.time_to_accuracy import time_to_accuracy_rows

__all__ = ["ordinal_problem", "speedup_vs_reference", "fit_over_floor", "throughput_vs_gemm", "crossover_unlabeled",
           "grid_pass_ratio", "lam_path_ratio", "compiled_steps_ratio", "summary_rows", "perf_job"]


def _timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed=0):
    """Generated rows, the latent target cut at its labeled quantiles, rows after ``n_labeled`` unlabeled."""
    X, target = make_latent_regression(n_samples, n_features, random_state=seed)
    cuts = np.quantile(target[:n_labeled], np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(cuts, target)
    y[n_labeled:] = -1
    return X, y


def speedup_vs_reference(*, n_samples, n_features, n_classes, n_labeled, params, seed=0):
    """Reference fit time / fast fit time, with the largest difference of their decision values."""
    X, y = ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed)
    params = dict(params)
    X, codes, _, tradeoff = check_semisupervised(X, y, tradeoff=params.pop("tradeoff"))
    t_ref, coef = _timed(lambda: reference_fit(X, codes, tradeoff, **params))
    t_fast, (model, scores) = _timed(lambda: train(X, codes, tradeoff, **params))
    f_ref = reference_decision_function(X, coef, seed=params["seed"], gamma=params["gamma"])
    gap = np.abs(scores - f_ref).max()
    return [("speedup_vs_reference", t_ref / t_fast,
             f"reference {t_ref:.2f} s / fast {t_fast:.3f} s; n={n_samples} d={n_features} k={n_classes} "
             f"n_iter={params['n_iter']} m={params['n_components']} batch={params['batch_size']}; "
             f"max |f_fast - f_ref| = {gap:.2e} (max |f_ref| = {np.abs(f_ref).max():.2e})")]


def fit_over_floor(*, n_samples, n_features, n_classes, n_labeled, params, dtypes=("float64", "float32"), seed=0):
    """Fit time / one evaluation of the final model on all training rows; peak traced memory of a fit."""
    X, y = ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed)
    rows = []
    for dtype in dtypes:
        model = QS3ORAO(**params, dtype=dtype, random_state=seed)
        t_fit, _ = _timed(lambda: model.fit(X, y))
        t_floor, f = _timed(lambda: model.decision_function(X))
        gap = np.abs(f - model.train_scores_).max()
        suffix = "" if dtype == "float64" else f"_{dtype}"
        rows.append((f"fit_over_floor{suffix}", t_fit / t_floor,
                     f"fit {t_fit:.2f} s / evaluation {t_floor:.2f} s on {n_samples} x {n_features}, {dtype}, "
                     f"n_iter={model.n_iter} m={model.n_components} n_jobs={model.n_jobs}; "
                     f"max |train_scores_ - f(X)| = {gap:.1e}"))
    # Memory does not depend on n_iter beyond the coefficients: one group of steps suffices.
    full = QS3ORAO(**params)
    n_iter = group_plan(n_samples, full.batch_size * 3 * (n_classes - 1), full.n_components, 8,
                        memory_plan(1, 1, 1)[0])[1]
    model = QS3ORAO(**{**params, "n_iter": n_iter}, random_state=seed)
    tracemalloc.start()
    try:
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rows.append(("peak_memory_mb", peak / 2**20,
                 f"tracemalloc peak of a float64 fit on {n_samples} x {n_features} beyond the input "
                 f"({X.nbytes / 2**20:.0f} MiB); the n x D features would take "
                 f"{n_samples * 2 * full.n_components * full.n_iter * 8 / 2**30:.0f} GiB"))
    return rows


def throughput_vs_gemm(*, n_samples, n_features, n_components, n_blocks, n_jobs=-1, dtypes=("float64", "float32"),
                       trig_backends=("auto", "numpy", "numba"), repeat=5):
    """Floating-point rate of one evaluation pass over one group of blocks / rate of a plain matrix product.

    The pass is :meth:`qs3orao.engine.RandomFeatureModel.decision_function`
    with its blocks kept (the same work as the engine's all-row pass after a
    group of steps).  It does ``2 d`` flops per projection and 4 per feature in
    the products with the coefficients; ``cos`` and ``sin`` count as no flops,
    so the ratio shows how far the trigonometric functions hold the pass below
    the product.  One row per dtype and trigonometric backend (the first
    backend, by default "auto", has the plain row name; the backend it ran is
    in the detail).
    """
    rng = np.random.default_rng(0)
    rows = []
    for dtype in dtypes:
        X = rng.uniform(size=(n_samples, n_features)).astype(dtype)
        blocks = np.stack([frequency_block(0, i + 1, n_components, n_features, 1.0) for i in range(n_blocks)])
        coef = rng.normal(size=(n_blocks, 2 * n_components))
        omega = blocks.reshape(-1, n_features).astype(dtype)
        flops = n_samples * omega.shape[0] * (2 * n_features + 4)
        for i, backend in enumerate(trig_backends):
            model = RandomFeatureModel(seed=0, gamma=1.0, n_features=n_features, coef=coef, blocks=blocks,
                                       dtype=np.dtype(dtype), n_jobs=n_jobs, trig_backend=backend)
            model.decision_function(X[:10])  # the first call in a process loads the compiled loops
            # Product and pass alternate, so that a change of the machine's load hits both sides.
            t_gemm, t_pass = np.min([(_timed(lambda: X @ omega.T)[0], _timed(lambda: model.decision_function(X))[0])
                                     for _ in range(repeat)], axis=0)
            gemm_rate = 2 * n_samples * omega.shape[0] * n_features / t_gemm / 1e9
            pass_rate = flops / t_pass / 1e9
            name = "throughput_vs_gemm" + ("" if dtype == "float64" else f"_{dtype}") + \
                ("" if i == 0 else f"[{backend}]")
            rows.append((name, float(pass_rate / gemm_rate),
                         f"pass {pass_rate:.1f} GFLOP/s / matmul {gemm_rate:.1f} GFLOP/s; ({n_samples} x "
                         f"{n_features}) @ ({n_features} x {omega.shape[0]}), {dtype}, trig_backend={backend} "
                         f"(ran {model.trig_backend}), n_jobs={model.n_jobs}; best of {repeat} alternated"))
    return rows


#: The exact baselines' fast solvers (their low-memory ones would run past the budget the sweep stops at).
EXACT_BASELINES = {"M-PNU-AUC": functools.partial(MPNUAUC, low_memory=False),
                   "M-SAMULT": functools.partial(MSAMULT, low_memory=False)}
FEATURE_MAPS = {"RFF-AUC": RFFAUC, "Nystroem-AUC": NystromAUC}


def _largest_within(estimate, budget, limit=10**7):
    """Largest ``n`` with ``estimate(n) <= budget`` (estimates grow with ``n``)."""
    low, high = 1, limit
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if estimate(mid) <= budget else (low, mid - 1)
    return low


def crossover_unlabeled(*, n_features, n_classes, n_labeled, sizes, params, baseline_params, memory_budget_mb, seed=0):
    """Smallest number of unlabeled rows at which QS3ORAO fits faster than each exact baseline.

    Sizes are tried in increasing order; a baseline leaves the sweep once
    QS3ORAO is faster (the exact fits grow as ``n^3``, QS3ORAO as ``n``).  The
    crossover is interpolated log-log between the bracketing sizes.
    """
    budget = int(memory_budget_mb * 2**20)
    methods = {name: (lambda X, y, c=cls: c(**baseline_params, memory_budget=budget).fit(X, y))
               for name, cls in EXACT_BASELINES.items()}
    log_ratio = {name: [] for name in methods}
    rows = []
    for n_unlabeled in sizes:
        if not methods:
            break
        X, y = ordinal_problem(n_labeled + n_unlabeled, n_features, n_classes, n_labeled, seed)
        t_ours, _ = _timed(lambda: QS3ORAO(**params, random_state=seed).fit(X, y))
        for name, fit in list(methods.items()):
            try:
                t_exact, _ = _timed(lambda: fit(X, y))
            except MemoryBudgetExceeded:
                t_exact = np.inf
            log_ratio[name].append((n_unlabeled, np.log(t_exact / t_ours), t_exact, t_ours))
            if t_exact > t_ours:
                del methods[name]
    for name, points in log_ratio.items():
        trace = ", ".join(f"{n}: {t_e:.2f}/{t_o:.2f} s" for n, _, t_e, t_o in points)
        (n_hi, r_hi, _, _) = points[-1]
        if r_hi <= 0:
            value = np.nan
        elif len(points) == 1:
            value = float(n_hi)
            trace += " (faster already at the smallest size: the value is an upper bound)"
        else:
            n_lo, r_lo = points[-2][:2]
            share = -r_lo / (r_hi - r_lo) if np.isfinite(r_hi) else 1.0
            value = float(np.exp(np.log(n_lo) + share * (np.log(n_hi) - np.log(n_lo))))
        rows.append((f"crossover_unlabeled[{name}]", value,
                     f"{n_labeled} labeled rows, d={n_features}, k={n_classes}; baseline/QS3ORAO fit times {trace}"))
    for name, cls in EXACT_BASELINES.items():
        reach = _largest_within(lambda n, model=cls(): model.estimate_memory(n, n_features, n_classes), budget)
        rows.append((f"largest_n_within_budget[{name}]", reach,
                     f"largest training size whose memory estimate fits {memory_budget_mb} MiB"))
    return rows


def _median_times(funcs, repeat):
    """Median wall time of each function over ``repeat`` rounds, the functions alternating within a round."""
    times = [[] for _ in funcs]
    outs = [None] * len(funcs)
    for _ in range(repeat):
        for i, func in enumerate(funcs):
            elapsed, outs[i] = _timed(func)
            times[i].append(elapsed)
    return [float(np.median(t)) for t in times], outs


def _all_row_products(n_settings, n_rows, n_iter, n_components, blocks=16):
    """A callable doing the products every one-pass fit must do, and their flop count.

    After each step, every setting's scores at every row take the step's block
    (``2 n_components`` features): ``2 n_settings n_rows n_iter 2 n_components``
    flops, whatever the engine.  Done here as plain matrix products of
    ``blocks`` steps at a time on random numbers, with numpy's BLAS threads;
    ``n_iter`` is rounded up to whole products (500 steps: 512), which the
    returned count includes.
    """
    rng = np.random.default_rng(0)
    features = rng.uniform(-1.0, 1.0, size=(n_rows, 2 * n_components * blocks))
    coef = rng.normal(size=(n_settings, features.shape[1]))
    n_products = -(-n_iter // blocks)

    def products():
        scores = np.zeros((n_settings, n_rows))
        for _ in range(n_products):
            scores += coef @ features.T
        return scores

    return products, 2 * n_settings * n_rows * features.shape[1] * n_products


def grid_pass_ratio(*, n_samples, n_features, n_classes, n_labeled, params, lams, tradeoffs,
                    step_backends=("numpy",), repeat=3, seed=0):
    """Time of one ``QS3ORAO.fit_path`` over every (``lam``, shared trade-off) pair / time of one fit.

    One pair of rows per ``step_backend``, the path and the single fit on the
    same backend (named ``grid_pass_ratio[G]`` for the numpy steps and
    ``grid_pass_ratio[G,<backend>]`` for another), all timed in the same
    alternating rounds.  The single fit is the grid's first setting; the
    largest difference of its scores from the path's same setting is in the
    detail.  Beside each ratio, ``grid_pass_floor[...]`` is the time of the
    all-row products alone (:func:`_all_row_products`, timed in the same rounds)
    / time of that backend's one fit: the part of the ratio that no engine
    keeping every setting's scores at every row can remove on this machine.
    """
    X, y = ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed)
    grid = [dict(lam=float(lam), tradeoff=float(t)) for lam in lams for t in tradeoffs]
    pairs = [(QS3ORAO(**params, step_backend=backend, random_state=seed),
              QS3ORAO(**params, **grid[0], step_backend=backend, random_state=seed)) for backend in step_backends]
    for estimator, one in pairs:
        if estimator.step_backend != "numpy":  # the compiled loops load (or compile) once per process, untimed
            estimator.fit_path(X, y, grid[:1])
            one.fit(X, y)
    products, flops = _all_row_products(len(grid), n_samples, pairs[0][1].n_iter, pairs[0][1].n_components)
    funcs = [func for estimator, one in pairs
             for func in (lambda one=one: one.fit(X, y), lambda estimator=estimator: estimator.fit_path(X, y, grid))]
    times, outs = _median_times([*funcs, products], repeat)
    t_products = times[-1]
    rows = []
    # Per backend its fit and its path, alternately; the last timing and output are the products'.
    for backend, t_one, t_path, fit, path in zip(step_backends, times[0:-1:2], times[1:-1:2], outs[0:-1:2],
                                                 outs[1:-1:2]):
        label = f"{len(grid)}" if backend == "numpy" else f"{len(grid)},{backend}"
        gap = np.abs(path[0].train_scores_ - fit.train_scores_).max()
        diverged = sum(not isinstance(p, QS3ORAO) for p in path)
        rows += [(f"grid_pass_ratio[{label}]", t_path / t_one,
                  f"fit_path over {len(lams)} lam x {len(tradeoffs)} tradeoff {t_path:.2f} s / one fit {t_one:.2f} s "
                  f"(step_backend={backend}; medians of {repeat}, alternating); n={n_samples} d={n_features} "
                  f"k={n_classes} n_iter={fit.n_iter} m={fit.n_components} batch={fit.batch_size} "
                  f"n_jobs={fit.n_jobs}; {diverged} settings diverged; max |path - own fit| of the shared setting "
                  f"= {gap:.1e}"),
                 (f"grid_pass_floor[{label}]", t_products / t_one,
                  f"the all-row products of {len(grid)} settings alone {t_products:.2f} s / one fit {t_one:.2f} s "
                  f"(step_backend={backend}; same rounds); flops = {flops:.4g} at "
                  f"{flops / t_products / 1e9:.1f} GFLOP/s")]
    return rows


def lam_path_ratio(*, n_samples, n_features, n_classes, n_labeled, gamma, lams, tradeoff, pnu_mix, repeat=3,
                   blas_threads=1, seed=0):
    """Time of each exact solver's ``lam`` path / time of one solve (kernel or map work included in both).

    Both sides run on ``blas_threads`` BLAS threads, as the tuning jobs do (one);
    on a loaded machine more threads slow the factorisations of both sides
    erratically, which would make the ratio measure the load.
    """
    X, y = ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed)
    lams = [float(lam) for lam in lams]
    solvers = {
        "M-PNU-AUC": (lambda: MPNUAUC(gamma=gamma, lam=lams[0], pnu_mix=pnu_mix).fit(X, y),
                      lambda: MPNUAUC(gamma=gamma, pnu_mix=pnu_mix).fit_path(X, y, [dict(lam=v) for v in lams]),
                      lambda fit: fit.train_scores_),
        "M-SAMULT": (lambda: MSAMULT(gamma=gamma, lam=lams[0], tradeoff=tradeoff).fit(X, y),
                     lambda: MSAMULT(gamma=gamma, tradeoff=tradeoff).fit_path(X, y, [dict(lam=v) for v in lams]),
                     lambda fit: fit.train_scores_),
        "exact": (lambda: exact_solution(X, y, gamma=gamma, lam=lams[0], tradeoff=tradeoff),
                  lambda: exact_solution_path(X, y, gamma=gamma, lams=lams, tradeoff=tradeoff),
                  lambda fit: fit.train_scores),
        **{name: (lambda cls=cls: cls(gamma=gamma, lam=lams[0], tradeoff=tradeoff, random_state=seed).fit(X, y),
                  lambda cls=cls: cls(gamma=gamma, tradeoff=tradeoff, random_state=seed).fit_path(
                      X, y, [dict(lam=v) for v in lams]),
                  lambda fit: fit.train_scores_)
           for name, cls in FEATURE_MAPS.items()},
    }
    rows = []
    for name, (one, path, scores) in solvers.items():
        with threadpool_limits(limits=blas_threads, user_api="blas"):
            (t_one, t_path), (fit, fits) = _median_times([one, path], repeat)
        gap = np.abs(scores(fits[0]) - scores(fit)).max() / np.abs(scores(fit)).max()
        rows.append((f"lam_path_ratio[{name}]", t_path / t_one,
                     f"path over {len(lams)} lam values {t_path:.2f} s / one solve {t_one:.2f} s (medians of {repeat}, "
                     f"alternating, {blas_threads} BLAS thread(s)); n={n_samples} d={n_features} k={n_classes} gamma={gamma}; "
                     f"relative "
                     f"|path - own solve| at lam={lams[0]:g}: {gap:.1e}"))
    return rows


def compiled_steps_ratio(*, n_samples, n_features, n_classes, n_labeled, params, repeat=3, seed=0):
    """Time of a converged fit on the compiled steps / on the numpy steps (``step_backend``), one thread.

    The workload is a best-effort training (:class:`baselines.converged.ConvergedQS3ORAO`), BLAS limited
    to one thread as the pipeline's jobs run; the detail has both fits' kept
    iterations and the largest difference of their training scores.
    """
    X, y = ordinal_problem(n_samples, n_features, n_classes, n_labeled, seed)
    fits = [ConvergedQS3ORAO(**params, step_backend=backend, random_state=seed) for backend in ("numpy", "numba")]
    with threadpool_limits(limits=1):
        fits[1].fit(X, y)  # the compiled loop loads (or compiles) once per process, before any fit is timed
        (t_numpy, t_numba), (plain, compiled) = _median_times([lambda: fits[0].fit(X, y), lambda: fits[1].fit(X, y)],
                                                              repeat)
    gap = np.abs(compiled.train_scores_ - plain.train_scores_).max() / np.abs(plain.train_scores_).max()
    return [("compiled_steps_ratio", t_numba / t_numpy,
             f"ConvergedQS3ORAO step_backend=numba {t_numba:.2f} s / numpy {t_numpy:.2f} s (medians of {repeat}, "
             f"alternating, 1 thread); n={n_samples} d={n_features} k={n_classes} m={plain.n_components} "
             f"batch={plain.batch_size}; iterations kept {plain.n_iter_} (numpy) and {compiled.n_iter_} (numba); "
             f"max |numba - numpy| / max |numpy| of the training scores: {gap:.1e}")]


def summary_rows(settings, figure_paths=(), pareto_paths=()):
    """Every measurement of this module and both times to accuracy, in table order.

    The generated problem's time to accuracy is drawn to ``figure_paths``, the
    real pools' AUC against fit time to ``pareto_paths``.
    """
    seed = settings["seed"]
    rows = speedup_vs_reference(**settings["reference"], seed=seed)
    rows += fit_over_floor(**settings["floor"], seed=seed)
    rows += crossover_unlabeled(**settings["crossover"], seed=seed)
    rows += throughput_vs_gemm(**settings["throughput"])
    rows += grid_pass_ratio(**settings["grid_pass"], seed=seed)
    rows += lam_path_ratio(**settings["lam_path"], seed=seed)
    rows += compiled_steps_ratio(**settings["compiled_steps"], seed=seed)
    rows += time_to_accuracy_rows(**settings["time_to_accuracy"], figure_paths=figure_paths)
    rows += pool_time_to_accuracy_rows(**settings["pool_time_to_accuracy"], figure_paths=pareto_paths)
    return rows


def perf_job(smk):
    """Snakemake job of rule ``perf``: measure, write ``metric,value,detail`` and print it."""
    setup_logging(smk.log[0])
    rows = summary_rows(smk.params.settings, [smk.output.time_to_accuracy], [smk.output.pool_time_to_accuracy])
    write_csv(smk.output[0], ["metric", "value", "detail"],
              [(metric, f"{value:.6g}", detail) for metric, value, detail in rows])
    print(Path(smk.output[0]).read_text(), end="", file=sys.__stdout__)
