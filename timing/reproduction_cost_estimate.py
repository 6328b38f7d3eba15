"""Estimate the wall time of a reproduction configuration from measured fit times.

    python timing/reproduction_cost_estimate.py [CONFIG] [DATASET] [--overhead SECONDS]
        [--pass-ratio R ...] [--lam-path-ratio L]
    python timing/reproduction_cost_estimate.py --pilot CLONE/figures/NAME

``--pilot``: from a finished run of the real pipeline on one dataset (a pilot:
the configuration to cost plus an overlay ``select: [DATASET]``, run in a clone;
its figures folder is given), every job's CPU time as the job measured it (a tuning job's and a trial's
``job_cpu_s``, a training job's own ``own_cpu_s`` beyond its trials': its start-up; Snakemake's benchmark
``cpu_time`` leaves out most of every job longer than about 15 s, :func:`qs3study.runtime.process_cpu_s`),
extrapolated to the configuration's datasets (:func:`pilot_costs`). This costs
the configuration exactly as the pipeline runs it (overlays, ``tuned_by``,
widened searches and their rounds, shared passes, lam paths, convergence
criteria), which the fit-time model below only approximates; what it cannot
know is how the searches and fits of other datasets differ from the pilot's.

How: on one real dataset of the configuration (prepared from the mirror), the
median CPU time of 3 fits (``--repeats``) of every configured method, with
BLAS limited to one thread as the pipeline's jobs run (core-seconds, which a
shared machine's load inflates far less than wall time), is measured at the sizes its jobs
fit (a tuning fold: (n_folds - 1) / n_folds of the labeled rows plus
``tuning.n_unlabeled`` unlabeled rows; the comparison size; every sweep size,
until the memory budget stops a method or a fit exceeds 10 minutes, after
which larger sizes are extrapolated with the exponent of the last two measured
sizes). Then

    total = sum over jobs of (fits of the job x fit time at its size + per-job overhead)

where a training job is one fit per trial of its size and a tuning job ``n_folds x`` the candidates
of the staged search (baselines.model_selection: the grid product, the shared
split values, then ``(k - 1) x (values - 1)`` per-split candidates, or one for
separable methods). Every dataset is costed with this dataset's times (scaled
by its row count only through the sweep sizes it reaches), the per-job
overhead (Python start-up and imports) is given on the command line (measured as
the median ``own_cpu_s`` of a finished run's training jobs, in their
``batch.json``), and the total is divided by the cores (2). It is an
estimate, not a measurement: fit times vary with the number of features and
classes, and the machine may be shared.

The best-effort protocol (an overlay with widened searches, ``tuned_by`` and a
convergence criterion) is costed by ``--pilot`` only.

Tuning by shared passes enters through two ratios, printed beside
the fits-from-scratch total: ``--pass-ratio R``, the time of one QS3ORAO pass
over the settings that share the seed and kernel width (``lam`` and trade-offs)
over the time of one fit (so a stage-1 column of the grid, stage 2 and each
per-split sweep of stage 3 cost ``R`` fits instead of one fit per candidate),
and ``--lam-path-ratio L``, the time of an exact solver's whole ``lam`` path
over one solve (M-PNU-AUC and M-SAMULT, stage 1).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

import numpy as np
import yaml
from threadpoolctl import threadpool_limits

from baselines import MemoryBudgetExceeded
from baselines.registry import get_method
from qs3study.datasets import get_spec, load_ordinal, semisupervised_split
from qs3study.configuration import build_estimator, method_spec
from qs3study.kernel_width import gamma_scale
from qs3study.grids import resolve_grid

REPO = Path(__file__).resolve().parents[1]
DOCUMENTED_ROWS = {"sgemm": 241_600, "road3d_subset": 5_000, "amazon_digital_music": 6_908, "uci_kin40k": 40_000,
                   "uci_keggdirected": 16_000, "uci_keggundirected": 18_000, "uci_elevators": 16_599,
                   "uci_bike": 17_379, "uci_pumadyn32nm": 8_192, "uci_parkinsons": 5_875, "uci_tamielectric": 45_781}
"""Rows after loading (keggs: about a third remains after de-duplication, per the mirror's README)."""

SHARED_PASS_METHODS = {"qs3orao"}
LAM_PATH_METHODS = {"m-pnu-auc", "m-samult"}


def candidates(grid, n_classes):
    """Candidates of the staged search (see baselines.model_selection.cross_validate_params)."""
    count = len(list(itertools.product(*grid.grid.values())))
    if grid.split_param is not None:
        count += len(grid.split_values)
        count += 1 if grid.separable else (n_classes - 1) * (len(grid.split_values) - 1)
    return count


def tuning_fits(method, grid, n_classes, pass_ratio=None, lam_path_ratio=None):
    """Fits (in units of one fit) of one fold's staged search, from scratch or by shared passes.

    With ``pass_ratio`` a QS3ORAO search costs ``pass_ratio`` fits per group of
    settings sharing the seed and kernel width: one group per kernel width in
    stage 1, one for stage 2, one per split in stage 3.  With ``lam_path_ratio``
    an exact solver's stage 1 costs ``lam_path_ratio`` solves per kernel width.
    """
    widths = len(grid.grid.get("gamma", (None,)))
    if pass_ratio is not None and method in SHARED_PASS_METHODS and "lam" in grid.grid:
        groups = widths
        if grid.split_param is not None:
            groups += 1 + (n_classes - 1)
        return groups * pass_ratio
    if lam_path_ratio is not None and method in LAM_PATH_METHODS and "lam" in grid.grid:
        return candidates(grid, n_classes) - widths * len(grid.grid["lam"]) + widths * lam_path_ratio
    return candidates(grid, n_classes)


def fit_time(spec, X, y, n_unlabeled, n_labeled, seed, repeats=3):
    """Median CPU seconds of a fit at ``n_unlabeled`` unlabeled rows; None when the memory budget stops the method."""
    split = semisupervised_split(y, n_labeled=n_labeled, seed=seed, n_unlabeled=min(n_unlabeled, y.size - n_labeled))
    Xs, ys = X[split.train_idx], split.y_train
    if get_method(spec["method"]).labeled_only:
        Xs, ys = Xs[split.labeled_mask], ys[split.labeled_mask]
    scale = gamma_scale("median", X[split.train_idx][split.labeled_mask], seed=seed)
    times = []
    for _ in range(repeats):
        estimator, _ = build_estimator(spec, seed=seed, tuned={"gamma": scale} if "gamma" in
                                       get_method(spec["method"]).estimator().get_params() else {})
        start = time.process_time()
        try:
            with threadpool_limits(limits=1):
                estimator.fit(Xs, ys)
        except MemoryBudgetExceeded:
            return None
        times.append(time.process_time() - start)
        if times[-1] > 60:
            break
    return statistics.median(times)


def sweep_cost(measured, sizes, sweep, protocol, overhead, stops=None):
    """Seconds of one method's sweep jobs over every dataset of :data:`DOCUMENTED_ROWS`, by dataset.

    ``stops(n_unlabeled)``, when given, says where the memory budget stops the
    method (beyond the measured sizes too).
    """
    ok = sorted(s for s, t in measured.items() if t is not None)
    costs = {}
    for name, rows in DOCUMENTED_ROWS.items():
        pool = rows - protocol["n_labeled"]
        total = 0.0
        for s in [s for s in sizes if s < pool] + [pool]:
            if (s in measured and measured[s] is None) or (stops is not None and stops(s)):
                break  # the budget stops it here and beyond (one fast job that records the stop)
            if s in measured:
                t = measured[s]
            elif len(ok) >= 2 and (max(measured) >= s or measured[max(measured)] is not None):
                a, b = ok[-2], ok[-1]
                slope = np.log(measured[b] / measured[a]) / np.log(b / a)
                t = measured[b] * (s / b) ** max(slope, 0.0)
            else:
                break
            total += sweep.get("trials", protocol["trials"]) * t + overhead  # one job runs the size's trials
        costs[name] = total
    return costs


def pilot_costs(results, tune_cpu, config, pilot, own_cpu=None):
    """CPU seconds per dataset of ``config``, extrapolated from a one-dataset pilot run.

    Per dataset: the pilot's tuning jobs and comparison jobs as measured (their
    sizes are the protocol's, the same on every dataset), and each method's
    sweep from the medians over trials of its pilot trials per size plus the
    median own CPU of its training jobs once per size,
    extrapolated to the dataset's sweep sizes and pool with :func:`sweep_cost`
    (a method the budget stopped in the pilot stops, at no cost, from the size
    where its memory estimate, a power law fitted on the pilot's jobs, passes the
    budget; the comparison size is the comparison jobs themselves).

    Parameters
    ----------
    results : pandas.DataFrame
        The pilot's tidy ``results.csv`` (``job_cpu_s`` per trial).
    tune_cpu : dict
        Method label -> the CPU seconds of its tuning jobs in the pilot.
    config : dict
        The pilot run's configuration (its manifest's ``config``).
    pilot : str
        The dataset the pilot ran.
    own_cpu : dict, optional
        ``(method, size token) ->`` the training job's own CPU seconds beyond its trials'
        (``batch.json``'s ``own_cpu_s``); none for a pilot whose training jobs ran one trial
        each, whose ``job_cpu_s`` include their start-up.

    Returns
    -------
    dict
        Dataset -> ``{"tune": s, "comparison": s, "sweep": s}``.

    Raises
    ------
    ValueError
        If the pilot or a dataset of ``config`` has no row count in :data:`DOCUMENTED_ROWS` (a local
        dataset, say), or the results hold no rows of the pilot.
    """
    protocol, sweep = config["protocol"], config["sweep"]
    undocumented = sorted({pilot, *config["datasets"]} - set(DOCUMENTED_ROWS))
    if undocumented:
        raise ValueError(f"datasets {', '.join(map(repr, undocumented))} have no documented row count "
                         f"(DOCUMENTED_ROWS: {', '.join(DOCUMENTED_ROWS)}): the pilot estimate extrapolates by "
                         "their pools, so cost a configuration of those datasets, with a pilot on one of them")
    rows = results[results["dataset"] == pilot]
    if rows.empty:
        raise ValueError(f"the pilot results hold no rows of {pilot!r}")
    pool = DOCUMENTED_ROWS[pilot] - protocol["n_labeled"]
    own_cpu = own_cpu or {}
    compared = rows[rows["comparison"].astype(bool)]
    comparison = float(compared["job_cpu_s"].sum()) + sum(
        own_cpu.get(job, 0.0) for job in set(zip(compared["method"], compared["size"])))
    sweeps = {name: 0.0 for name in config["datasets"]}
    swept = rows[~rows["comparison"].astype(bool)]
    for method, jobs in swept.groupby("method"):
        own = [seconds for (label, _), seconds in own_cpu.items() if label == method]
        measured = {}
        for token, at_size in jobs.groupby("size"):
            size = pool if token == "all" else int(token)
            stopped = (at_size["status"] == "out_of_memory_budget").all()
            measured[size] = None if stopped else float(at_size["job_cpu_s"].median())
        sizes = sorted(s for s in sweep["n_unlabeled"] if s not in ("all", protocol["n_unlabeled"]))
        costs = sweep_cost(measured, sizes, sweep, protocol, float(np.median(own)) if own else 0.0,
                           stops=_budget_stops(jobs, protocol))
        for name, seconds in costs.items():
            if name in sweeps:
                sweeps[name] += seconds
    tune = float(sum(tune_cpu.values()))
    return {name: {"tune": tune, "comparison": comparison, "sweep": sweeps[name]} for name in config["datasets"]}


def start_up_cpu(results):
    """CPU seconds of training jobs that ran one trial each beyond their fit and timed prediction: start-up.

    For a run before the trials shared a job (no ``batch.json``), whose ``job_cpu_s``
    included the job's start-up; the fit and prediction times are wall seconds, which
    that start-up (imports, about 2 CPU-s) outweighs.

    Parameters
    ----------
    results : pandas.DataFrame
        A run's tidy ``results.csv`` (``job_cpu_s``, ``fit_time``, ``predict_time``; a job that fitted
        nothing, one the memory budget stopped, has neither time).

    Returns
    -------
    per_job : pandas.Series
        Each training job's CPU seconds beyond its fit and prediction.
    total : float
        The training jobs' CPU seconds.
    """
    fitted = results[["fit_time", "predict_time"]].fillna(0.0).sum(axis=1)
    return results["job_cpu_s"] - fitted, float(results["job_cpu_s"].sum())


def _budget_stops(jobs, protocol):
    """``n_unlabeled -> bool``: where the method's memory estimate passes the budget; None for a method the
    budget stopped nowhere in the pilot.

    The estimate is a power law through the pilot's two largest sizes (the leading term; smaller sizes carry
    fixed overheads that flatten a fit over all of them).
    """
    if not (jobs["status"] == "out_of_memory_budget").any():
        return None
    known = jobs.dropna(subset=["memory_estimate_mb"]).assign(rows=lambda t: t["n_labeled"] + t["n_unlabeled"])
    (n_a, mb_a), (n_b, mb_b) = known.groupby("rows")["memory_estimate_mb"].median().iloc[-2:].items()
    slope = np.log(mb_b / mb_a) / np.log(n_b / n_a)
    budget = float(jobs["memory_budget_mb"].max())
    return lambda n_unlabeled: mb_b * ((protocol["n_labeled"] + n_unlabeled) / n_b) ** slope > budget


def read_pilot(figures):
    """The configuration, dataset, results table and tuning CPU seconds per method of a pilot run.

    ``figures`` is the run's figures folder (``CLONE/figures/NAME``); its
    tuning records are in ``CLONE/results/tuning``. A pilot whose jobs did not
    record their CPU time (``job_cpu_s``, from 2026-11-28) is refused: Snakemake's
    benchmark CPU time, all that such a pilot has, undercounts its longer jobs.
    The training jobs' own CPU is read from their ``batch.json``, ``(method, size) ->``
    the ``own_cpu_s`` of its jobs (empty for a pilot whose training jobs ran one trial each). A pilot
    with tuning draws (``tuning.draws``) counts the draws' searches and training jobs with the rest.
    """
    from qs3study.design import BATCH_RECORD
    from qs3study.files import read_json
    from qs3study.stages.tables import read_results

    figures = Path(figures)
    if not (figures / "manifest.json").is_file():
        raise ValueError(f"{figures} holds no finished run (no manifest.json)")
    config = json.loads((figures / "manifest.json").read_text())["config"]
    results = read_results(figures / "results.csv")
    datasets = sorted(set(results["dataset"]))
    if len(datasets) != 1:
        raise ValueError(f"a pilot runs one dataset, {figures} ran {datasets}")
    tuning = [(record["method"], record) for record in map(  # a tuning draw's records too (draw<d>/)
        read_json, sorted(figures.parents[1].glob(f"results/tuning/{datasets[0]}/**/*.json")))]
    unmeasured = results["job_cpu_s"].isna().sum() + sum("job_cpu_s" not in record for _, record in tuning)
    if unmeasured:
        raise ValueError(f"{unmeasured} jobs of the pilot in {figures} did not record their CPU time (job_cpu_s); "
                         "rerun the pilot with the current code (Snakemake's benchmark cpu_time undercounts "
                         "jobs longer than about 15 s)")
    tune_cpu = {}
    for method, record in tuning:
        tune_cpu[method] = tune_cpu.get(method, 0.0) + record["job_cpu_s"]
    own_cpu = {}
    for path in sorted(figures.parents[1].glob(f"results/runs/{datasets[0]}/**/{BATCH_RECORD}")):
        record = read_json(path)
        key = (record["method"], record["size"])
        own_cpu[key] = own_cpu.get(key, 0.0) + record["own_cpu_s"]  # every part of a size's trials
    return config, datasets[0], results, tune_cpu, own_cpu


def report_pilot(figures, cores):
    """Print the pilot-based estimate, per dataset and in total."""
    config, pilot, results, tune_cpu, own_cpu = read_pilot(figures)
    costs = pilot_costs(results, tune_cpu, config, pilot, own_cpu)
    print(f"{config['name']}: extrapolated from a pilot run on {pilot} ({figures}); CPU minutes per dataset")
    print("tuning jobs of the pilot: " + ", ".join(f"{m} {s / 60:.1f}" for m, s in sorted(tune_cpu.items())))
    for name, cost in costs.items():
        print(f"  {name:22s} tune {cost['tune'] / 60:6.1f}  comparison {cost['comparison'] / 60:6.1f}  "
              f"sweep {cost['sweep'] / 60:7.1f}  total {sum(cost.values()) / 60:7.1f}")
    total = sum(sum(c.values()) for c in costs.values())
    print(f"estimated total: {total / 3600:.2f} core-hours; wall time on {cores} idle cores "
          f"{total / cores / 3600:.2f} h (perfect packing)")
    print("the jobs' own CPU only: Snakemake's process, which schedules the jobs, comes on top")
    trials = float(results["job_cpu_s"].sum())
    if own_cpu:
        own = np.array(list(own_cpu.values()))
        training = trials + own.sum()
        print(f"training: {training / 60:.1f} CPU minutes, the {len(results)} trials' processes {trials / 60:.1f}, "
              f"the training jobs' own start-up {own.sum() / 60:.1f} ({own.sum() / training:.0%}; imports, a median "
              f"{np.median(own):.2f} s per (method, size))")
        return costs
    per_job, _ = start_up_cpu(results)
    print(f"the pilot's {per_job.size} training jobs, one per trial, spent {per_job.sum() / 60:.1f} of their "
          f"{trials / 60:.1f} CPU minutes ({per_job.sum() / trials:.0%}) beyond their fits and predictions "
          f"(start-up, imports, files; median {per_job.median():.2f} s per job), a cost per job and not per fit")
    return costs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=str(REPO / "workflow" / "config" / "reproduction.yaml"))
    parser.add_argument("dataset", nargs="?", default="uci_bike")
    parser.add_argument("--overhead", type=float, default=3.0,
                        help="seconds per job beyond its fits (a training job runs every trial of one size)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="fits per measured size (the median is used)")
    parser.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--pass-ratio", type=float, nargs="*", default=[],
                        help="one QS3ORAO pass over settings sharing seed and kernel width / one fit")
    parser.add_argument("--lam-path-ratio", type=float, default=None, help="an exact lam path / one solve")
    parser.add_argument("--pilot", type=Path, default=None,
                        help="the figures folder of a finished one-dataset run of the configuration to cost")
    args = parser.parse_args()
    if args.pilot is not None:
        try:
            report_pilot(args.pilot, args.cores)
        except ValueError as error:
            raise SystemExit(f"pilot {args.pilot}: {error}") from None
        return
    config = yaml.safe_load(Path(args.config).read_text())
    schema_defaults = {"params": {}, "grid": None}
    config["methods"] = {k: {**schema_defaults, **v} for k, v in config["methods"].items()}
    config["datasets"] = {k: {"params": {}, **v} for k, v in config["datasets"].items()}
    protocol, tuning, sweep = config["protocol"], config["tuning"], config["sweep"]
    data = load_ordinal(get_spec(args.dataset), cache_dir=REPO / "resources", mirror=args.mirror,
                        random_state=0, dedupe=config["datasets"][args.dataset].get("dedupe", False))
    X, y = np.asarray(data.X), np.asarray(data.y)
    k = int(np.unique(y).size)
    n_lab = protocol["n_labeled"]
    fold_labeled = n_lab * (tuning["n_folds"] - 1) // tuning["n_folds"]
    sizes = sorted({s for s in sweep["n_unlabeled"] if s != "all"} | {protocol["n_unlabeled"]})
    n_tune = 1 if tuning.get("per", "trial") == "dataset" else protocol["trials"]
    ratios = [None] + list(args.pass_ratio)
    print(f"{args.dataset}: {X.shape}, {k} classes; fit CPU seconds (one BLAS thread), median of up to "
          f"{args.repeats}; "
          "grids as configured")
    totals = dict.fromkeys(ratios, 0.0)
    for label, entry in config["methods"].items():
        spec = method_spec(config, label, args.dataset)
        spec["memory_budget_mb"] = protocol["memory_budget_mb"]
        per_fit, tune = 0.0, dict.fromkeys(ratios, 0.0)
        if entry["grid"] is not None:
            grid = entry["grid"] if not isinstance(entry["grid"], (str, dict)) else \
                resolve_grid(entry["method"], entry["grid"])
            per_fit = fit_time(spec, X, y, tuning["n_unlabeled"], fold_labeled, 0, args.repeats) or 0.0
            for ratio in ratios:
                fits = tuning["n_folds"] * tuning_fits(entry["method"], grid, k, ratio,
                                                       None if ratio is None else args.lam_path_ratio)
                tune[ratio] = n_tune * (fits * per_fit + args.overhead)
        measured = {}
        for size in sizes:
            if measured and measured[max(measured)] is not None and measured[max(measured)] > 600:
                break
            measured[size] = fit_time(spec, X, y, size, n_lab, 0, args.repeats)
        train = protocol["trials"] * (measured.get(protocol["n_unlabeled"]) or 0.0) + args.overhead
        sweeps = sweep_cost(measured, sizes, sweep, protocol, args.overhead)
        for ratio in ratios:
            totals[ratio] += sum(tune[ratio] + train + s for s in sweeps.values())
        scratch = sum(tune[None] + train + s for s in sweeps.values())
        print(f"{label:18s} tune fit {per_fit:.3f} s, {tune[None] / 60:.1f} min tuning per dataset from scratch; "
              f"sizes {', '.join(f'{s}: ' + ('stop' if t is None else f'{t:.2f}') for s, t in measured.items())}; "
              f"all datasets {scratch / 60:.1f} min")
    for ratio, total in totals.items():
        how = "fits from scratch" if ratio is None else f"shared passes, pass ratio {ratio:g}"
        if ratio is not None and args.lam_path_ratio is not None:
            how += f", lam path ratio {args.lam_path_ratio:g}"
        print(f"estimated total ({how}): {total / 3600:.2f} core-hours; wall time on {args.cores} idle cores "
              f"{total / args.cores / 3600:.2f} h (perfect packing)")


if __name__ == "__main__":
    main()
