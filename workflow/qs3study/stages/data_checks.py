"""The data-validity screen of a prepare job: the checks of :mod:`qs3study.datasets.checks`, their levels, what was done.

The levels are the configuration's ``data_checks:`` section (schema defaults).
A tripped check is *answered* when the registry entry already deals with it: the
columns the target is computed from are dropped (``drop_features``, so the rank
check no longer trips), or the group column splits the rows (``group_column``: the
group check still reads the plain split, where the lookup works, and its action says
how many unlabeled rows of the group split share a group with a labeled row, 0).
An unanswered trip refuses the dataset (``on_trip: refuse``) or is logged (``warn``).

The ``signal_null`` check is the claims' permutation screen (:func:`signal_check`), a job of
its own after the prepare job, so that a change to the screen leaves the prepared data and the
training behind them as they are. :func:`permutation_screen_table` turns its rows into the rows of
``screened_datasets.csv``, and a dataset it marks ``no_signal`` is left out of the empirical claims.
"""

import numpy as np
import pandas as pd

from qs3study.datasets import DatasetError, semisupervised_split
from qs3study.datasets.checks import group_lookup, nearest_neighbour_auc, rank_leak
from qs3study.design import trial_seed
from qs3study.stages.signal_null import permutation_screen

__all__ = ["CHECK_COLUMNS", "SIGNAL_SETTINGS", "DataCheckError", "data_checks", "signal_check", "refusal",
           "permutation_screen_table"]

CHECK_COLUMNS = ["dataset", "check", "value", "level", "tripped", "action", "detail"]
#: The keys of ``data_checks:`` that the signal screen reads; the prepare job's checks read the others.
SIGNAL_SETTINGS = ("signal_permutations", "signal_alpha", "signal_widths", "signal_lams")


class DataCheckError(DatasetError):
    """A data-validity check tripped that the dataset's registry entry does not answer."""


def _sample(n, max_rows, rng):
    return np.sort(rng.choice(n, size=max_rows, replace=False)) if n > max_rows else np.arange(n)


def data_checks(name, spec, X, y, raw, settings, *, n_labeled, base_seed):
    """Every check's row for one prepared dataset.

    Parameters
    ----------
    name : str
    spec : qs3study.datasets.DatasetSpec
    X, y : ndarray
        The prepared arrays.
    raw : tuple or None
        ``(features, target)`` as read (after the registry's dropped columns), for numeric
        data; None for reviews, whose rank check does not apply.
    settings : dict
        ``data_checks:`` of the configuration, without :data:`SIGNAL_SETTINGS`.
    n_labeled : int
    base_seed : int
        The protocol's seed: the checks read trial 0's split.

    Returns
    -------
    pandas.DataFrame
        :data:`CHECK_COLUMNS`, one row per check.
    """
    rng = np.random.default_rng(trial_seed(name, 0, base_seed))
    groups = None if spec.group_column is None else X[:, spec.group_column]
    split = semisupervised_split(y, n_labeled=n_labeled, seed=trial_seed(name, 0, base_seed), groups=groups)
    labeled_rows = split.train_idx[split.labeled_mask]
    unlabeled_rows = split.train_idx[~split.labeled_mask]
    unlabeled_rows = unlabeled_rows[_sample(unlabeled_rows.size, settings["max_rows"], rng)]
    rows_used = np.concatenate([labeled_rows, unlabeled_rows])
    labeled = np.arange(rows_used.size) < labeled_rows.size
    Xs, ys = np.asarray(X[rows_used]), np.asarray(y[rows_used])
    if groups is not None:  # a group column is no feature (qs3study.datasets.trial_rows)
        Xs = np.delete(Xs, spec.group_column, axis=1)
    dropped = ", ".join(f"feature {j}" for j in spec.drop_features)
    rows = []

    if raw is None:
        rows.append(dict(check="rank_leak", value=None, level=settings["rank_level"], tripped=False,
                         action="not applicable", detail="no numeric raw features (review text)"))
    else:
        features, target = raw
        keep = _sample(len(target), settings["max_rows"], rng)
        value, combination = rank_leak(np.asarray(features)[keep], np.asarray(target)[keep])
        tripped = value >= settings["rank_level"]
        rows.append(dict(check="rank_leak", value=value, level=settings["rank_level"], tripped=tripped,
                         action=_unanswered(settings) if tripped else (
                             f"dropped in the registry: {dropped}" if dropped else "none"),
                         detail=f"|Spearman| of the raw target with {combination} on {keep.size} raw rows"
                                + (f"; {spec.notes}" if dropped else "")))

    # On the plain split, which is what a group column leaks through (the group split leaves every lookup unseen).
    plain = split if groups is None else semisupervised_split(y, n_labeled=n_labeled, seed=trial_seed(name, 0, base_seed))
    in_labeled = np.zeros(y.size, dtype=bool)
    in_labeled[plain.train_idx[plain.labeled_mask]] = True
    value, column, n_groups = group_lookup(X, y, in_labeled, min_groups=settings["group_min_groups"],
                                           max_distinct_fraction=settings["group_max_distinct_fraction"])
    tripped = value is not None and value >= settings["group_level"]
    if groups is not None:
        shared = np.isin(groups[unlabeled_rows], groups[labeled_rows]).sum()
        action = (f"split by group (group_column {spec.group_column}, not a feature): {shared} of trial 0's "
                  f"{unlabeled_rows.size} unlabeled rows share a group with a labeled row")
    else:
        action = _unanswered(settings) if tripped else "none"
    rows.append(dict(check="group_lookup", value=value, level=settings["group_level"], tripped=tripped,
                     action=action, detail="no column with few distinct values" if column is None else
                     f"feature {column} ({n_groups} values): trial 0's labeled rows' mean label per value, looked up for "
                     "the other rows of a split that ignores groups"))

    rows.append(dict(check="nearest_neighbour", value=nearest_neighbour_auc(Xs, ys, labeled), level=None,
                     tripped=False, action="reference",
                     detail=f"1-NN from {labeled_rows.size} labeled to {unlabeled_rows.size} unlabeled rows"))

    return pd.DataFrame([{"dataset": name, **row} for row in rows], columns=CHECK_COLUMNS)


def signal_check(name, spec, X, y, settings, *, n_labeled, base_seed):
    """The ``signal_null`` row of one prepared dataset: the permutation screen on trial 0's labeled rows.

    A dataset with a ``group_column`` is screened by group, as it is split and tuned
    (``groups`` of :func:`qs3study.stages.signal_null.permutation_screen`), and the
    column is no feature.

    Parameters
    ----------
    name : str
    spec : qs3study.datasets.DatasetSpec
    X, y : ndarray
        The prepared arrays (a memory map is read at the labeled rows only).
    settings : dict
        :data:`SIGNAL_SETTINGS` of ``data_checks:``; ``signal_permutations`` is positive.
    n_labeled : int
    base_seed : int
        The protocol's seed: trial 0's split, and the folds and permutations.

    Returns
    -------
    pandas.DataFrame
        :data:`CHECK_COLUMNS`, one row.
    """
    seed = trial_seed(name, 0, base_seed)
    groups = None if spec.group_column is None else np.asarray(X[:, spec.group_column])
    split = semisupervised_split(y, n_labeled=n_labeled, seed=seed, groups=groups)
    rows = split.train_idx[split.labeled_mask]
    features = np.asarray(X[rows])
    if groups is not None:
        features = np.delete(features, spec.group_column, axis=1)
    test = permutation_screen(features, np.asarray(y[rows]), n_permutations=settings["signal_permutations"],
                              alpha=settings["signal_alpha"], seed=seed, widths=settings["signal_widths"],
                              lams=settings["signal_lams"], groups=None if groups is None else groups[rows])
    by_group = "" if groups is None else (
        f"; folds of groups and permutations of whole groups' labels (group_column {spec.group_column}, "
        f"{np.unique(groups[rows]).size} groups)")
    return pd.DataFrame([{
        "dataset": name, "check": "signal_null", "value": test["observed"], "level": test["null_level"],
        "tripped": not test["signal"], "action": "screened out of the claims" if not test["signal"] else "none",
        "detail": f"p = {test['p_value']:.4f} over {settings['signal_permutations']} permutations at alpha "
                  f"{settings['signal_alpha']:g}{by_group}"}], columns=CHECK_COLUMNS)


def _unanswered(settings):
    return "refused" if settings["on_trip"] == "refuse" else "warned"


def refusal(table):
    """A :class:`DataCheckError` naming every check of ``table`` whose action is ``refused``, or None."""
    refused = table[table["action"] == "refused"]
    if refused.empty:
        return None
    return DataCheckError("; ".join(f"{r.dataset}: {r.check} {r.value:.4f} >= {r.level:g} ({r.detail})"
                                    for r in refused.itertuples()))


def permutation_screen_table(checks, datasets, alpha):
    """The permutation screen of every dataset of ``datasets``, from its ``signal_null`` check.

    Parameters
    ----------
    checks : pandas.DataFrame
        ``data_checks.csv`` (:data:`CHECK_COLUMNS`).
    datasets : list of str
        The selected datasets: each needs exactly one ``signal_null`` row.
    alpha : float
        The declared false-pass rate (``data_checks.signal_alpha``), named in ``expected``.

    Returns
    -------
    pandas.DataFrame
        :data:`qs3study.stages.tuning_records.SCREENED_COLUMNS`, one row per dataset, ``screen``
        ``permutation``; ``status`` is ``no_signal`` where the check tripped, else ``signal``;
        ``reason`` gives the proxy search's CV AUC, the null's ``1 - alpha`` quantile and the p-value;
        ``best_cv_auc`` is the proxy's CV AUC (``best_method`` is empty: no method of the run is read).

    Raises
    ------
    ValueError
        When a dataset has no ``signal_null`` row, or more than one, so that a dataset is never
        counted without its screen.
    """
    from qs3study.stages.tuning_records import SCREENED_COLUMNS

    rows = checks[checks["check"] == "signal_null"]
    counts = rows["dataset"].value_counts()
    missing = [name for name in datasets if counts.get(name, 0) != 1]
    if missing:
        raise ValueError("data_checks.csv needs exactly one signal_null row per selected dataset for the "
                         "permutation screen (data_checks.signal_permutations > 0); "
                         + ", ".join(f"{name} has {counts.get(name, 0)}" for name in missing)
                         + ": rerun its signal_screen job with the permutation screen declared")
    table = []
    for row in rows.set_index("dataset").loc[list(datasets)].itertuples():
        tripped = str(row.tripped) == "True"
        table.append({"dataset": row.Index, "screen": "permutation",
                      "expected": f"permutation screen: the proxy search's CV AUC beats its permutation null "
                                  f"at alpha {alpha:g}",
                      "status": "no_signal" if tripped else "signal",
                      "reason": f"proxy search's best cross-validated AUC on the labeled rows {row.value:.4f}, "
                                f"the permutation null's 1 - alpha quantile {row.level:.4f}, {row.detail}",
                      "best_cv_auc": float(row.value), "best_method": None})
    return pd.DataFrame(table, columns=SCREENED_COLUMNS)
