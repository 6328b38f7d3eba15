"""Training: fit a method on each trial of one (dataset, unlabeled size) and score the unlabeled rows."""

from __future__ import annotations

import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import baselines
import qs3orao
import qs3study
from baselines import MemoryBudgetExceeded
from baselines.registry import get_method, make_method
from qs3study.datasets import PoolTooSmallError, trial_rows
from qs3orao.metrics import accuracy, binary_auc, mean_absolute_error

from qs3study.configuration import build_estimator
from qs3study.design import BATCH_RECORD, TRIAL_RESULT, parse_size, trial_seed
from qs3study.files import read_json, write_json
from qs3study.stages.kept_trials import (code_digest, data_digests, discard, keep, kept_folder, kept_record,
                                         trial_key)
from qs3study.kernel_width import absolute_params, degenerate_kernel, gamma_scale, mean_off_diagonal
from qs3study.runtime import (calibration_s, limit_threads, machine_session, own_cpu_s, package_versions, peak_rss_mb,
                              process_cpu_s, run_forked, setup_logging)

__all__ = ["BeyondPool", "TuningFailed", "fit_warnings", "tuning_failure", "unlabeled_scores", "unlabeled_auc",
           "fit_and_score", "trial_record", "run_trial", "train_job"]


class TuningFailed(Exception):
    """The trial's hyperparameter search failed and the configuration declares no fallback."""


class BeyondPool(Exception):
    """A sweep size larger than the unlabeled rows the dataset actually holds (not a failure of the method)."""


def unlabeled_scores(estimator, X_train, labeled, fitted_on_all):
    """Scores of the unlabeled training rows: the fit's own when it kept them, else ``decision_function``."""
    own = getattr(estimator, "train_scores_", None)
    if fitted_on_all and own is not None and len(own) == len(X_train):
        return own[~labeled]
    return estimator.decision_function(X_train[~labeled])


def unlabeled_auc(y_true, scores, n_classes):
    """Ordinal AUC (the paper's Equation (2)) over the splits with rows on both sides.

    A small unlabeled pool can miss an extreme class (e.g. ``esl``'s nine
    levels), leaving a split without positives or negatives; such splits are
    left out of the mean and the number used is returned.

    Parameters
    ----------
    y_true : ndarray of int, shape (n,)
        Labels ``0 .. n_classes - 1``.
    scores : ndarray, shape (n,) or (n, n_classes - 1)
        One score per row, or one column per split.
    n_classes : int

    Returns
    -------
    auc : float
    n_scored_splits : int
    """
    scores = np.asarray(scores, dtype=np.float64)
    splits = [j for j in range(n_classes - 1) if (y_true <= j).any() and (y_true > j).any()]
    aucs = [binary_auc(y_true > j, scores if scores.ndim == 1 else scores[:, j]) for j in splits]
    return float(np.mean(aucs)), len(splits)


NOT_ABOUT_THE_RESULT = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
"""Warnings about library versions, not about a fit: logged as usual, not recorded with the result."""


def fit_warnings(caught):
    """The distinct texts ``Category: message`` of the warnings a fit raised that concern its result."""
    texts = [f"{w.category.__name__}: {' '.join(str(w.message).split())}" for w in caught
             if not issubclass(w.category, NOT_ABOUT_THE_RESULT)]
    return list(dict.fromkeys(texts))


def tuning_failure(tuning, on_failure):
    """What a failed search means for its training job: ``(failure reason or None, warning or None)``.

    A search that did not end ``ok`` fails the training job with the search's reason, unless the
    configuration declares the fallback (``tuning.on_failure: configured``): the job is then trained
    on the configured parameters and says so in its ``warnings``.
    """
    status = tuning.get("status", "none")
    if status in ("ok", "none"):
        return None, None
    reason = f"tuning {status}: {tuning.get('reason', '')}".strip()
    if on_failure == "configured":
        return None, f"{reason}; trained on the configured parameters (tuning.on_failure: configured)"
    return f"{reason} (set tuning.on_failure: configured to train on the configured parameters instead)", None


def fit_and_score(X_path, y_path, spec, tuned, record, log, *, n_labeled, kernel_width="literal", group_column=None):
    """Do the work of one trial, filling ``record`` in place; exceptions propagate.

    With ``group_column`` (the dataset's, :class:`~qs3study.datasets.DatasetSpec`) the split keeps
    each of its values on one side and the column is no feature (:func:`~qs3study.datasets.trial_rows`).

    ``gamma`` in ``spec`` and ``tuned`` is read as ``kernel_width`` says
    (:mod:`qs3study.kernel_width`); ``record["params"]`` keeps the values as
    given and ``gamma_absolute`` the width the estimator got.
    """
    X_all = np.load(X_path, mmap_mode="r")
    y_all = np.load(y_path)
    try:  # only this job's rows are read from disk
        split, X, _ = trial_rows(X_all, y_all, n_labeled=n_labeled, seed=record["seed"],
                                 n_unlabeled=parse_size(record["size"]), group_column=group_column)
    except PoolTooSmallError as error:
        # The plan sized the sweep from the documented row count; the loaded file (or a group's side) holds fewer.
        raise BeyondPool(str(error)) from None
    del X_all
    labeled = split.labeled_mask
    record.update(n_labeled=split.n_labeled, n_unlabeled=split.n_unlabeled, n_features=int(X.shape[1]),
                  n_classes=int(np.unique(y_all).size))

    # The constant-prediction reference: the labeled rows' majority class (ties: the lowest) for every row.
    majority = np.full(int((~labeled).sum()), np.bincount(split.y_train[labeled]).argmax())
    record.update(constant_mae=mean_absolute_error(split.y_true[~labeled], majority),
                  constant_accuracy=accuracy(split.y_true[~labeled], majority))

    scale = gamma_scale(kernel_width, X[labeled], seed=record["seed"])
    defaults = make_method(spec["method"]).get_params()
    if scale != 1.0 and "gamma" in defaults and "gamma" not in {**spec["params"], **tuned}:
        # A width nobody configured or tuned (the registered default, e.g. after a failed search whose
        # fallback is declared) is read on the data's scale too, never as an absolute width.
        spec = {**spec, "params": {**spec["params"], "gamma": defaults["gamma"]}}
    absolute_spec = {**spec, "params": absolute_params(spec["params"], scale)}
    estimator, _ = build_estimator(absolute_spec, seed=record["seed"], tuned=absolute_params(tuned, scale))
    record["params"] = {**spec["params"], **tuned}
    record.update(kernel_width=kernel_width, gamma_scale=scale)
    if "gamma" in estimator.get_params():
        record["gamma_absolute"] = float(estimator.gamma)
        record["kernel_mean_offdiag"] = mean_off_diagonal(X[labeled], estimator.gamma, seed=record["seed"])
        warning = degenerate_kernel(record["kernel_mean_offdiag"])
        if warning:
            record.setdefault("warnings", []).append(warning)
            log.warning(warning)
    fit_on_all = not get_method(spec["method"]).labeled_only
    X_fit, y_fit = (X, split.y_train) if fit_on_all else (X[labeled], split.y_train[labeled])
    record["rss_before_fit_mb"] = peak_rss_mb()
    log.info("fitting %r on %d rows (%d labeled)", estimator, len(y_fit), int(labeled.sum()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        estimator.fit(X_fit, y_fit)
        record["fit_time"] = time.perf_counter() - start
        if hasattr(estimator, "trig_backend_"):
            log.info("trigonometric backend: %s", estimator.trig_backend_)
        if getattr(estimator, "n_iter_", None) is not None:  # iterations used (ConvergedQS3ORAO chooses them)
            record["n_iter_fitted"] = int(estimator.n_iter_)
        if getattr(estimator, "converged_", None) is not None:  # met its stated criterion (ConvergedQS3ORAO)
            record["converged"] = bool(estimator.converged_)
        if getattr(estimator, "memory_estimate_", None) is not None:
            record["memory_estimate_mb"] = estimator.memory_estimate_ / 2**20
        start = time.perf_counter()
        scores = unlabeled_scores(estimator, X, labeled, fit_on_all)
        record["predict_time"] = time.perf_counter() - start
        auc, n_scored = unlabeled_auc(split.y_true[~labeled], scores, record["n_classes"])
        # Labels from the fitted thresholds and the scores the AUC ranks, without evaluating the model again.
        predicted = estimator.predict_from_scores(scores)
    for text in fit_warnings(caught):
        record["warnings"].append(text)
        log.warning(text)
    record.update(mae=mean_absolute_error(split.y_true[~labeled], predicted),
                  accuracy=accuracy(split.y_true[~labeled], predicted))
    record.update(auc=auc, auc_splits=n_scored, status="ok", reason="")
    log.info("auc %.6f, fit %.2f s", auc, record["fit_time"])


def trial_record(dataset, method, spec, trial, size, tuning, *, base_seed, kernel_width, versions, tuning_draw=0):
    """The result record of one trial before it is trained: what the design and its tuning fix.

    ``versions`` is :func:`qs3study.runtime.package_versions`'s, the same for every trial of a job;
    ``tuning_draw`` the draw of the search whose values ``tuning`` holds (``tuning.draws``; 0: the single tuning).
    """
    return {
        "dataset": dataset,
        "method": method,
        "base_method": spec["method"],
        "trial": trial,
        "seed": trial_seed(dataset, trial, base_seed),
        "size": size,
        "params": {**spec["params"], **tuning.get("best_params", {})},
        "tuned": bool(tuning.get("best_params")),
        "tuning_status": tuning.get("status", "none"),
        "tuning_draw": int(tuning_draw),
        "kernel_width": kernel_width,
        "gamma_scale": None,
        "gamma_absolute": None,
        "kernel_mean_offdiag": None,
        "warnings": [f"tuning {edge}" for edge in tuning.get("grid_edges", [])],
        "memory_budget_mb": spec["memory_budget_mb"],
        "auc": None,
        "auc_splits": None,
        "mae": None,
        "accuracy": None,
        "constant_mae": None,
        "constant_accuracy": None,
        "fit_time": None,
        "predict_time": None,
        "n_iter_fitted": None,
        "converged": None,
        "memory_estimate_mb": None,
        "versions": versions,
    }


def run_trial(record, X_path, y_path, spec, tuning, log, *, n_labeled, kernel_width, on_failure, threads,
              group_column=None):
    """Train and score one trial, filling ``record`` in place, whatever happens: a failure is recorded.

    Sets ``status`` ``ok``, ``out_of_memory_budget`` (the method refused a size
    whose arrays exceed its budget, before allocating them), ``beyond_pool`` (a
    sweep size larger than the unlabeled rows actually loaded, e.g. from a
    mirror's partial file, or than a group split's unlabeled side) or ``failed``
    (any other error; the traceback is in the log), and the process's
    ``peak_memory_mb`` and ``job_cpu_s``.
    """
    failure, fallback = tuning_failure(tuning, on_failure)
    if fallback:
        record["warnings"].append(fallback)
        log.warning(fallback)
    with limit_threads(threads):
        try:
            if failure:
                raise TuningFailed(failure)
            fit_and_score(X_path, y_path, spec, tuning.get("best_params", {}), record, log, n_labeled=n_labeled,
                          kernel_width=kernel_width, group_column=group_column)
        except BeyondPool as error:
            record.update(status="beyond_pool", reason=str(error))
            log.info("not run: %s", error)
        except MemoryBudgetExceeded as error:
            record.update(status="out_of_memory_budget", reason=" ".join(str(error).split()),
                          memory_estimate_mb=error.estimate_bytes / 2**20)
            log.info("stopped: %s", error)
        except TuningFailed as error:
            record.update(status="failed", reason=str(error))
            log.error("not trained: %s", error)
        except Exception as error:  # noqa: BLE001 - recorded as a failed point, the study goes on
            record.update(status="failed", reason=" ".join(f"{type(error).__name__}: {error}".split()))
            log.error("failed:\n%s", traceback.format_exc())
    record["peak_memory_mb"] = peak_rss_mb()
    record["job_cpu_s"] = process_cpu_s()


def train_job(smk):
    """Snakemake job of rule ``train``: trials of one (dataset, method, unlabeled size), one result file each.

    The job runs all of the size's trials, or a part of at most
    ``resources.trials_per_job``.  It imports its libraries once and runs each
    trial in a process of its own, forked from the job's
    (:func:`qs3study.runtime.run_forked`), which does what a job of its own
    would (:func:`run_trial`): its ``rss_before_fit_mb``, ``peak_memory_mb`` and
    ``job_cpu_s`` are that process's, none of the job's start-up, and nothing a
    trial allocates stays for the next.  When the trial's process has ended,
    the job adds its wall time ``trial_wall_s``, measured from outside
    (``os.wait4``), the machine session and speed measured at the job's start
    (:func:`qs3study.runtime.machine_session`, :func:`qs3study.runtime.calibration_s`),
    and writes the trial's result file ``trial<t>.json``.  A
    trial whose process dies (a signal, such as the out-of-memory killer's) is
    recorded ``failed`` with the cause and the peak memory and CPU time its
    process used, measured from outside, and the next trial runs, so one
    failing point never stops the study.  Last, ``batch.json`` lists the trials
    with the job's own CPU time beyond its trials' (``own_cpu_s``: its
    start-up, imports and files).

    A trial whose process ran to its end is also kept outside the folder
    (:mod:`qs3study.stages.kept_trials`): if the job is stopped before it has
    finished, its next run takes those trials instead of training them again.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake: ``smk.output[0]`` is the folder of the results, ``smk.params.trials``
        the trials and ``smk.params.tuned`` each trial's tuning record (None where its method has no search);
        rule ``train_draw``'s wildcard ``draw`` names the tuning draw those records are of (rule ``train``: 0).
    """
    log = setup_logging(smk.log[0])
    wildcards, spec, params = smk.wildcards, smk.params.spec, smk.params
    folder = Path(smk.output[0])
    folder.mkdir(parents=True, exist_ok=True)
    trials, versions = list(params.trials), package_versions()
    draw = int(getattr(wildcards, "draw", 0))  # rule train_draw's wildcard; rule train is draw 0
    kept = kept_folder(folder)
    code, data = code_digest([qs3orao, baselines, qs3study]), data_digests({"X": smk.input.X, "y": smk.input.y})
    machine = {"machine_session": machine_session(), "calibration_s": calibration_s()}
    for number, (trial, tuned_path) in enumerate(zip(trials, params.tuned, strict=True), 1):
        tuning = read_json(tuned_path) if tuned_path else {}
        record = trial_record(wildcards.dataset, wildcards.method, spec, trial, wildcards.size, tuning,
                              base_seed=params.base_seed, kernel_width=params.kernel_width, versions=versions,
                              tuning_draw=draw)
        key = trial_key(record, data, code)
        taken, why = kept_record(kept, trial, key)
        if why:
            log.warning("trial %d: %s; trained again", trial, why)
        if taken is not None:
            log.info("trial %d (%d of %d) taken from an interrupted run of this job (%s)", trial, number,
                     len(trials), kept)
            write_json(folder / TRIAL_RESULT.format(trial=trial), taken)
            continue
        child_path = folder / f".trial{trial}.child.json"
        log.info("trial %d (%d of %d), seed %d", trial, number, len(trials), record["seed"])

        def work(record=record, tuning=tuning, child_path=child_path):
            run_trial(record, smk.input.X, smk.input.y, spec, tuning, log, n_labeled=params.n_labeled,
                      kernel_width=params.kernel_width, on_failure=params.get("on_failure", "fail"),
                      threads=smk.threads, group_column=params.get("group_column"))
            write_json(child_path, record)

        end = run_forked(work)
        if end.failure is None:
            record = read_json(child_path)
        else:
            record.update(status="failed", reason=f"trial not finished: {end.failure}", job_cpu_s=end.cpu_s,
                          peak_memory_mb=end.max_rss_mb)
            log.error("trial %d not finished: %s", trial, end.failure)
        child_path.unlink(missing_ok=True)
        record.update(trial_wall_s=end.wall_s, **machine)
        if end.failure is None:  # a process that did not run to its end may have been stopped with the job
            keep(kept, trial, key, record)  # first: a trial in the folder is kept, wherever the job stops
        write_json(folder / TRIAL_RESULT.format(trial=trial), record)
    write_json(folder / BATCH_RECORD, {"dataset": wildcards.dataset, "method": wildcards.method,
                                       "size": wildcards.size, "trials": trials, "own_cpu_s": own_cpu_s()})
    discard(kept)
