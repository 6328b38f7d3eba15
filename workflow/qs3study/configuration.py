"""From a validated configuration to an estimator: the study's one precedence rule for parameters.

A method's parameters come from four places; a later one wins over an earlier one:

1. the method's registered defaults (:class:`baselines.registry.Method` ``params``);
2. the dataset's shared ``datasets.<name>.params`` (e.g. the kernel width), for the
   parameters the method takes (a dataset's ``gamma`` does not reach a method without a kernel);
3. the method's own ``methods.<label>.params``;
4. values found by tuning.

Then ``random_state`` is the trial seed, ``memory_budget`` the protocol's budget and
``low_memory`` (the exact baselines' solver) False, or None (the low-memory solver where
the fast one exceeds the budget) with ``protocol.low_memory_exact``, unless one of the
above set them. Tuning and training both build their estimators with
:func:`build_estimator`, so the same configuration gives the same estimator.

The plan checks a configuration before any job runs (:func:`check_methods`: every
parameter name is taken by a method, every value passes the estimator's own checks;
:func:`check_rows`: the protocol's sizes fit a dataset's rows), and the ``prepare``
job checks the sizes again on the rows it actually loaded.
"""

from __future__ import annotations

import math
import numbers

import yaml

from baselines.registry import get_method, make_method, tuning_grid

from .design import parse_size
from .grids import STAGED, resolve_grid

__all__ = ["NO_GRID", "REMOVABLE", "check_unique_keys", "drop_removed_entries", "configuration_error", "method_config", "method_spec", "build_estimator", "job_memory_mb", "check_methods",
           "check_tuning_draws", "check_rows"]

NO_GRID = (None, "none", "null")
"""Values of ``methods.<label>.grid`` meaning "no search" ("none" and "null" are for ``--config``)."""


def method_config(config, label):
    """The configuration entry of method ``label``, its label and caption falling back on the registry's.

    Returns
    -------
    dict
        ``method`` (registered name), ``params``, ``grid`` (None for no search), ``grid_range``
        (widened parameters, empty when none), ``whole_range`` (those of them searched on their
        whole range in every round, empty when none), ``widen_tolerance`` (or None), ``widen_limits`` (those
        whose declared limits are widened too, empty when none), ``tuned_by`` (the label
        whose tuned values it takes, or None), ``signal_screen`` (whether the signal screen reads its tuning),
        ``label``, ``caption``.
    """
    entry = config["methods"][label]
    registered = get_method(entry["method"])
    return {
        "method": entry["method"],
        "params": dict(entry["params"]),
        "grid": None if entry["grid"] in NO_GRID else entry["grid"],
        "grid_range": dict(entry.get("grid_range") or {}),
        "whole_range": list(entry.get("whole_range") or []),
        "widen_tolerance": entry.get("widen_tolerance"),
        "widen_limits": list(entry.get("widen_limits") or []),
        "tuned_by": entry.get("tuned_by"),
        "signal_screen": entry.get("signal_screen", True),
        "label": entry.get("label", registered.label),
        "caption": entry.get("description", registered.caption),
    }


def method_spec(config, label, dataset):
    """What a job needs to build method ``label`` on ``dataset``: steps 2 and 3 of the precedence rule.

    Returns
    -------
    dict
        ``method`` (registered name), ``params`` (dataset then method parameters, only those
        the method takes), ``memory_budget_mb``, and ``low_memory_exact: True`` when the
        protocol sets it (absent otherwise, so that a plan without it keeps its parameters).
    """
    entry = method_config(config, label)
    accepted = make_method(entry["method"]).get_params()
    shared = {name: value for name, value in config["datasets"][dataset]["params"].items() if name in accepted}
    spec = {"method": entry["method"], "params": {**shared, **entry["params"]},
            "memory_budget_mb": config["protocol"]["memory_budget_mb"]}
    if config["protocol"].get("low_memory_exact"):
        spec["low_memory_exact"] = True
    return spec


def build_estimator(spec, *, seed, tuned=None):
    """The estimator of ``spec`` (from :func:`method_spec`) with ``tuned`` values, for a trial of ``seed``.

    Parameters
    ----------
    spec : dict
        ``method``, ``params``, ``memory_budget_mb``.
    seed : int
        Trial seed, the ``random_state`` of methods that draw random numbers.
    tuned : dict, optional
        Values found by tuning (the last word).

    Returns
    -------
    estimator
    params : dict
        The configured and tuned parameters the estimator was given (what a result records).

    Raises
    ------
    ValueError
        If a method or tuned parameter is not one of the method's.
    """
    params = {**spec["params"], **(tuned or {})}
    estimator = make_method(spec["method"])
    accepted = estimator.get_params()
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"{unknown} are not parameters of method {spec['method']!r}")
    injected = {}
    if "random_state" in accepted and "random_state" not in params:
        injected["random_state"] = seed
    if "memory_budget" in accepted and "memory_budget" not in params:
        injected["memory_budget"] = int(spec["memory_budget_mb"] * 2**20)
    if "low_memory" in accepted and "low_memory" not in params:
        injected["low_memory"] = None if spec.get("low_memory_exact") else False
    return make_method(spec["method"], **params, **injected), params


def job_memory_mb(spec, *, n_rows, n_features, n_classes, n_labeled):
    """MiB the estimator of ``spec`` says a fit on ``n_rows`` rows allocates, at most its budget; None without an estimate.

    The estimate (``estimate_memory``, :mod:`baselines._budget`) is that of the solver the fit
    takes at the protocol's budget; above the budget the fit stops before it allocates, so the
    budget bounds what it holds.

    Parameters
    ----------
    spec : dict
        From :func:`method_spec`.
    n_rows, n_features, n_classes, n_labeled : int
        The training rows (labeled and unlabeled), features, classes and labeled rows.

    Returns
    -------
    int or None
    """
    estimator, _ = build_estimator(spec, seed=0)
    if not hasattr(estimator, "estimate_memory"):
        return None
    estimate = estimator.estimate_memory(n_rows, n_features, n_classes, n_labeled)
    budget = getattr(estimator, "memory_budget", None)
    return math.ceil((estimate if budget is None else min(estimate, budget)) / 2**20)


def configuration_error(key, message):
    """The ``ValueError`` of a bad configuration value: it names the key (dotted path) first."""
    return ValueError(f"configuration key {key!r}: {message}")


MEMORY_PARAMS = ("max_memory", "memory_budget")
"""Method parameters that are memory budgets (a null ``memory_budget`` is the method's default)."""


def _check_memory_budget(key, value):
    """A memory budget is a finite positive number: NaN or infinity would switch a memory check off."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        shown = f"{float(value):g}" if isinstance(value, numbers.Real) else repr(value)
        raise configuration_error(key, f"a memory budget must be a finite positive number, got {shown}")


REMOVABLE = ("datasets", "methods", "screen")
"""Sections whose entries an overlay configuration removes by setting them to null."""


def drop_removed_entries(config):
    """Drop, in place, the entries of :data:`REMOVABLE` sections that a configuration set to null.

    Snakemake merges configuration files key by key, so an overlay could not
    otherwise remove a dataset, a method or a screened dataset of the file it extends.
    """
    for section in REMOVABLE:
        if isinstance(config.get(section), dict):
            config[section] = {name: entry for name, entry in config[section].items() if entry is not None}


class _RepeatedKey(Exception):
    def __init__(self, key, first, second):
        super().__init__(key, first, second)
        self.key, self.first, self.second = key, first, second


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a mapping with a repeated key (plain YAML keeps the last one silently)."""

    def construct_mapping(self, node, deep=False):
        lines = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # '<<' entries may be overridden on purpose
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in lines:
                    raise _RepeatedKey(key, lines[key], line)
                lines[key] = line
            except TypeError:  # an unhashable key: the base loader says what is wrong with it
                break
        return super().construct_mapping(node, deep=deep)


def check_unique_keys(paths):
    """Refuse a configuration file in which a mapping gives a key twice.

    Snakemake reads configuration files as plain YAML, where a repeated key
    (a dataset or a method given twice) silently replaces the first.

    Parameters
    ----------
    paths : iterable of path-like
        The configuration files of the run.

    Raises
    ------
    ValueError
        Naming the file, the key and the lines of both entries.
    """
    for path in paths:
        with open(path) as stream:
            try:
                yaml.load(stream, Loader=_UniqueKeyLoader)
            except _RepeatedKey as repeated:
                raise ValueError(f"configuration file {path}: key {repeated.key!r} is given twice, on lines "
                                 f"{repeated.first} and {repeated.second} (the second would silently replace "
                                 f"the first)") from None


def _check_values(estimator, key, context=""):
    """Run the estimator's own parameter checks (no data); a failure names the configuration key."""
    check = getattr(estimator, "_check_params", None)
    if check is None:  # a method without a data-free check is checked when it fits
        return
    try:
        check()
    except (TypeError, ValueError, ImportError) as error:  # ImportError: a compiled backend without numba
        raise configuration_error(key, f"{error}{context}") from None


def _check_tuned_by(config, label, entry, accepted):
    """``tuned_by`` names a configured method with a search whose parameters this method takes."""
    key, source = f"methods.{label}.tuned_by", entry["tuned_by"]
    if source not in config["methods"] or source == label:
        raise configuration_error(key, f"{source!r} is not another configured method")
    if entry["grid"] is not None:
        raise configuration_error(key, "a method trained with another's tuned values has no grid of its own")
    grid = method_config(config, source)["grid"]
    if grid is None:
        raise configuration_error(key, f"{source!r} has no grid, so no tuned values")
    if grid == "registry":
        registered = tuning_grid(method_config(config, source)["method"])
        searched = set(registered.grid) | ({registered.split_param} if registered.split_param else set())
    else:
        searched = set(grid)
    if searched - set(accepted):
        raise configuration_error(key, f"{source!r} tunes {sorted(searched - set(accepted))}, which "
                                  f"{entry['method']!r} does not take")


def check_methods(config, datasets):
    """Check every method's parameters as configured, before any job runs.

    Names first: a method's own ``params`` must be parameters of its class, and
    a key of ``datasets.<name>.params`` must be taken by at least one configured
    method (else it is a typo that no run would ever use). Then values: each
    method's estimator is built from its registered defaults and its own
    ``params`` (and each value of an explicit grid), then from every dataset's
    shared ``params`` as :func:`method_spec` merges them, and its own parameter
    checks (``_check_params``) run without fitting. Memory budgets (the protocol's
    and any ``max_memory`` or ``memory_budget`` parameter) must be finite positive
    numbers.

    Parameters
    ----------
    config : dict
        The validated configuration (schema defaults filled in).
    datasets : list of str
        The datasets the run will use.

    Raises
    ------
    ValueError
        Naming the configuration key and the estimator's complaint.
    """
    taken = set()
    budget = config.get("protocol", {}).get("memory_budget_mb")
    if budget is not None:
        _check_memory_budget("protocol.memory_budget_mb", budget)
    for key, params in [*((f"methods.{m}.params", e["params"]) for m, e in config["methods"].items()),
                        *((f"datasets.{d}.params", o["params"]) for d, o in config["datasets"].items())]:
        if "classes" in params:
            raise configuration_error(key, "'classes' is not configurable: every dataset's labels are 0 .. k-1, "
                                      "set when it is prepared (n_bins, or the ratings found)")
        for name in MEMORY_PARAMS:
            if params.get(name) is not None:
                _check_memory_budget(f"{key}.{name}", params[name])
    for label in config["methods"]:
        entry = method_config(config, label)
        estimator = make_method(entry["method"])
        accepted = estimator.get_params()
        taken |= set(accepted)
        unknown = sorted(set(entry["params"]) - set(accepted))
        if unknown:
            raise configuration_error(f"methods.{label}.params", f"{unknown} are not parameters of "
                                      f"{entry['method']!r}; it takes {', '.join(sorted(accepted))}")
        _check_values(make_method(entry["method"], **entry["params"]), f"methods.{label}.params")
        if entry["tuned_by"] is not None:
            _check_tuned_by(config, label, entry, accepted)
        if entry["grid_range"] and entry["grid"] is None:
            raise configuration_error(f"methods.{label}.grid_range", "widens a search: it needs a grid")
        for name, (low, high) in entry["grid_range"].items():
            if name not in accepted or not low < high:
                raise configuration_error(f"methods.{label}.grid_range.{name}", f"expected a parameter of "
                                          f"{entry['method']!r} and [low, high] with low < high, got {[low, high]}")
        if entry["widen_tolerance"] is not None and not entry["grid_range"]:
            raise configuration_error(f"methods.{label}.widen_tolerance", "stops a widened search: it needs a "
                                      "grid_range")
        for key in ("whole_range", "widen_limits"):
            undeclared = sorted(set(entry[key]) - set(entry["grid_range"]))
            if undeclared:
                raise configuration_error(f"methods.{label}.{key}", f"{undeclared} have no declared range in "
                                          f"grid_range ({sorted(entry['grid_range'])})")
        if entry["widen_limits"] and not (entry["widen_tolerance"] or 0) > 0:
            raise configuration_error(f"methods.{label}.widen_limits", "widens past the declared limits: it needs "
                                      "a positive widen_tolerance to stop")
        if isinstance(entry["grid"], dict):
            staged = STAGED in entry["grid"]
            try:
                resolve_grid(entry["method"], entry["grid"])
            except ValueError as error:
                raise configuration_error(f"methods.{label}.grid", str(error)) from None
            searched = dict(entry["grid"][STAGED]) if staged else dict(entry["grid"])
            if staged and "split_values" in entry["grid"]:
                searched[tuning_grid(entry["method"]).split_param] = entry["grid"]["split_values"]
            for name, values in searched.items():
                if name not in accepted:
                    raise configuration_error(f"methods.{label}.grid", f"{name!r} is not a parameter of "
                                              f"{entry['method']!r}")
                for value in values:
                    _check_values(make_method(entry["method"], **{**entry["params"], name: value}),
                                  f"methods.{label}.grid.{name}")
    for dataset in config["datasets"]:
        unknown = sorted(set(config["datasets"][dataset]["params"]) - taken)
        if unknown:
            raise configuration_error(f"datasets.{dataset}.params", f"{unknown} are taken by no configured method "
                                      f"({', '.join(config['methods'])}); they take {', '.join(sorted(taken))}")
    for dataset in datasets:
        for label in config["methods"]:
            estimator, _ = build_estimator(method_spec(config, label, dataset), seed=0)
            _check_values(estimator, f"datasets.{dataset}.params", f" (for method {label!r})")


def check_tuning_draws(tuning, methods):
    """Check ``tuning.draws`` against ``tuning.draw_methods``: both or neither, each method's values searched.

    Parameters
    ----------
    tuning : dict
        ``tuning`` of the configuration (schema defaults filled in).
    methods : dict
        ``methods`` of the configuration.

    Raises
    ------
    ValueError
        Naming the key: several draws without a method to train at them, methods without a second draw,
        or a method that is not configured or whose values no search gives (neither a grid nor ``tuned_by``).
    """
    draws, labels = tuning["draws"], tuning["draw_methods"]
    if draws > 1 and not labels:
        raise configuration_error("tuning.draw_methods", f"tuning.draws is {draws}: name the methods trained at "
                                  "every draw")
    if draws == 1 and labels:
        raise configuration_error("tuning.draw_methods", f"names {labels}, but tuning.draws is 1: there is no "
                                  "other draw to train them at")
    for label in labels:
        if label not in methods:
            raise configuration_error("tuning.draw_methods", f"{label!r} is not a configured method "
                                      f"({', '.join(methods)})")
        entry = methods[label]
        if entry.get("grid") in NO_GRID and entry.get("tuned_by") is None:
            raise configuration_error("tuning.draw_methods", f"{label!r} has no search (grid) nor tuned_by: "
                                      "no tuning to draw again")


def check_rows(dataset, n_rows, protocol, options):
    """Check that the protocol's sizes fit a dataset of ``n_rows`` rows.

    Parameters
    ----------
    dataset : str
    n_rows : int
        Rows of the dataset (documented before loading, or loaded).
    protocol : dict
        ``protocol`` of the configuration (``n_labeled``, ``n_unlabeled``).
    options : dict
        ``datasets.<dataset>`` of the configuration (its own ``n_unlabeled`` wins).

    Raises
    ------
    ValueError
        Naming the key whose size the rows cannot hold.
    """
    n_labeled = protocol["n_labeled"]
    if n_labeled >= n_rows:
        raise configuration_error("protocol.n_labeled", f"{n_labeled} labeled rows leave no unlabeled row in "
                                  f"dataset {dataset!r}, which has {n_rows} rows")
    key = f"datasets.{dataset}.n_unlabeled" if "n_unlabeled" in options else "protocol.n_unlabeled"
    size = parse_size(options.get("n_unlabeled", protocol["n_unlabeled"]))
    if size is not None and size > n_rows - n_labeled:
        raise configuration_error(key, f"{size} unlabeled rows do not fit dataset {dataset!r}: its {n_rows} rows "
                                  f"leave {n_rows - n_labeled} once {n_labeled} are labeled (use 'all' or fewer)")
