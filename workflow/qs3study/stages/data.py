"""The data jobs: fetch a dataset's file with its provenance, and preprocess it into arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from qs3study.datasets import DatasetError, fetch_source, get_spec, load_ordinal, load_raw, local_spec

from qs3study.configuration import check_rows
from qs3study.files import atomic_path, save_array, write_json
from qs3study.runtime import setup_logging

__all__ = ["LOADER_OPTIONS", "dataset_spec", "download_job", "prepare_job", "signal_screen_job", "screen_dataset",
           "screen_job", "data_checks_job"]

LOADER_OPTIONS = ("n_samples", "n_bins", "dedupe", "n_svd_components", "feature_scaling")
"""Keys of ``datasets.<name>`` that are options of :func:`qs3study.datasets.load_ordinal`."""


def dataset_spec(name, options, sha256=None):
    """The dataset ``name`` as configured: a local ``source`` file if given, else the registry's entry.

    Parameters
    ----------
    name : str
    options : dict
        ``datasets.<name>`` of the configuration.
    sha256 : str, optional
        The source file's hash when the plan already computed it.

    Returns
    -------
    qs3study.datasets.DatasetSpec
    """
    if options.get("source") is not None:
        return local_spec(name, options["source"], sha256=sha256)
    return get_spec(name)


def download_job(smk):
    """Snakemake job of rule ``download``: fetch the dataset (mirror, cache or upstream), write its stamp.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    log = setup_logging(smk.log[0])
    spec = dataset_spec(smk.wildcards.dataset, smk.params.options, smk.params.sha256)
    local = fetch_source(spec, cache_dir=smk.params.cache_dir, mirror=smk.params.mirror)
    log.info("%s: %s from %s (sha256 %s)", spec.name, local.path, local.source, local.sha256)
    write_json(smk.output[0], {
        "dataset": spec.name,
        "file": spec.fname,
        "source": local.source,
        "sha256": local.sha256,
        "sha256_expected": spec.sha256,
    })


def prepare_job(smk):
    """Snakemake job of rule ``prepare``: write ``X.npy``, ``y.npy``, ``info.json`` and ``checks.csv`` of one dataset.

    The arrays are plain ``.npy`` files so that training jobs can memory-map
    them and read only the rows of their split. Fails, writing nothing, when the
    protocol's sizes do not fit the rows loaded (:func:`qs3study.configuration.check_rows`)
    or when a data-validity check refuses the dataset (:mod:`qs3study.stages.data_checks`).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    from qs3study.stages.data_checks import data_checks, refusal

    log = setup_logging(smk.log[0])
    name = smk.wildcards.dataset
    options = {k: v for k, v in smk.params.options.items() if k in LOADER_OPTIONS}
    spec = dataset_spec(name, smk.params.options, smk.params.sha256)
    data = load_ordinal(spec, cache_dir=smk.params.cache_dir, mirror=smk.params.mirror, random_state=smk.params.seed,
                        **options)
    log.info("%s: X %s, rows per class %s", name, data.X.shape, data.bin_counts.tolist())
    # The plan checked the documented row count; a partial or deduplicated file can hold fewer rows.
    check_rows(name, data.X.shape[0], smk.params.protocol, smk.params.options)
    raw = None if spec.output == "reviews" else load_raw(
        spec, cache_dir=smk.params.cache_dir, mirror=smk.params.mirror, n_samples=options.get("n_samples"),
        random_state=smk.params.seed)
    checks = data_checks(name, spec, data.X, data.y, raw, smk.params.checks,
                         n_labeled=smk.params.protocol["n_labeled"], base_seed=smk.params.seed)
    for row in checks.itertuples():
        (log.warning if row.tripped else log.info)("%s: %s %s (level %s): %s; %s", name, row.check, row.value,
                                                   row.level, row.action, row.detail)
    error = refusal(checks)
    if error is not None:
        raise error
    with atomic_path(smk.output.checks) as tmp:
        checks.to_csv(tmp, index=False)
    save_array(smk.output.X, np.ascontiguousarray(data.X, dtype=np.float64))
    save_array(smk.output.y, np.asarray(data.y, dtype=np.int64))
    write_json(smk.output.info, {
        "dataset": name,
        "n_rows": int(data.X.shape[0]),
        "n_features": int(data.X.shape[1]),
        "bin_counts": data.bin_counts.tolist(),
        "options": options,
        # Which cache entry served the arrays says nothing about them, and differs between a first preparation
        # and a later one: left out, so that preparing again gives the same file.
        "provenance": {k: v for k, v in data.info.items() if k not in ("cache", "cache_entry")},
    })


def signal_screen_job(smk):
    """Snakemake job of rule ``signal_screen``: the ``signal_null`` check of one prepared dataset, as a CSV.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    from qs3study.stages.data_checks import signal_check

    log = setup_logging(smk.log[0])
    name = smk.wildcards.dataset
    spec = dataset_spec(name, smk.params.options, smk.params.sha256)
    row = signal_check(name, spec, np.load(smk.input.X, mmap_mode="r"), np.load(smk.input.y), smk.params.settings,
                       n_labeled=smk.params.n_labeled, base_seed=smk.params.seed).iloc[0]
    (log.warning if row.tripped else log.info)("%s: signal_null %s (null level %s): %s; %s", name, row.value,
                                               row.level, row.action, row.detail)
    with atomic_path(smk.output[0]) as tmp:
        row.to_frame().T.to_csv(tmp, index=False)


def screen_dataset(name, options, expected, *, cache_dir, mirror, seed):
    """Load dataset ``name`` as a run would and say whether loading refuses it, with the loader's reason.

    Returns
    -------
    dict
        ``dataset``, ``screen`` (``loading``), ``expected`` (the configuration's stated reason),
        ``status`` (``refused``: the loader raised a dataset error, whose message is ``reason``;
        ``accepted``: it loaded, so it should be in the study instead) and ``reason``.
    """
    loader_options = {k: v for k, v in options.items() if k in LOADER_OPTIONS}
    try:
        data = load_ordinal(dataset_spec(name, options), cache_dir=cache_dir, mirror=mirror, random_state=seed,
                            **loader_options)
    except DatasetError as error:
        return {"dataset": name, "screen": "loading", "expected": expected, "status": "refused",
                "reason": f"{type(error).__name__}: {' '.join(str(error).split())}"}
    return {"dataset": name, "screen": "loading", "expected": expected, "status": "accepted",
            "reason": f"loads: {data.X.shape[0]} rows, bins {data.bin_counts.tolist()}"}


def screen_job(smk):
    """Snakemake job of rule ``screened_datasets``: every ``screen:`` dataset's outcome, and the signal screens, as one CSV.

    Every selected dataset is also listed by each signal screen declared, with status
    ``no_signal`` (left out of the empirical claims) or ``signal``: the permutation screen
    (``data_checks.signal_permutations > 0``; its ``signal_null`` check in ``data_checks.csv``,
    :func:`qs3study.stages.data_checks.permutation_screen_table`) and the fixed-level screen
    (``claims.signal_level``; the best cross-validated AUC of the tuning records,
    :func:`qs3study.stages.tuning_records.signal_screen`).

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    from qs3study.stages.data_checks import permutation_screen_table
    from qs3study.stages.tuning_records import SCREENED_COLUMNS, read_records, signal_screen

    log = setup_logging(smk.log[0])
    rows = []
    for name, entry in smk.params.screen.items():
        row = screen_dataset(name, entry.get("options", {}), entry["expected"], cache_dir=smk.params.cache_dir,
                             mirror=smk.params.mirror, seed=smk.params.seed)
        (log.info if row["status"] == "refused" else log.warning)("%s: %s (%s)", name, row["status"], row["reason"])
        rows.append(row)
    signal = []
    if smk.params.permutation_screen:
        signal.append(permutation_screen_table(pd.read_csv(smk.input.checks), smk.params.datasets,
                                               smk.params.signal_alpha))
    if smk.params.signal_level is not None:
        signal.append(signal_screen(read_records(smk.input.records), smk.params.signal_level))
    for screened in signal:
        for row in screened.itertuples():
            (log.warning if row.status == "no_signal" else log.info)("%s: %s screen, %s (%s)", row.dataset,
                                                                     row.screen, row.status, row.reason)
    tables = ([pd.DataFrame(rows, columns=SCREENED_COLUMNS)] if rows else []) + signal
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=SCREENED_COLUMNS)
    with atomic_path(smk.output[0]) as tmp:
        table.to_csv(tmp, index=False)


def data_checks_job(smk):
    """Snakemake job of rule ``data_checks``: every selected dataset's ``checks.csv`` as one table.

    Each dataset's ``signal_null`` row (``input.signal``, one file per dataset in the order
    of ``input.checks``, or none when the permutation screen is not declared) follows its checks.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    setup_logging(smk.log[0])
    paths = list(smk.input.checks)
    if smk.input.signal:
        paths = [path for pair in zip(paths, smk.input.signal, strict=True) for path in pair]
    table = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    with atomic_path(smk.output[0]) as tmp:
        table.to_csv(tmp, index=False)
