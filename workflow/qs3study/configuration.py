"""From a validated configuration to an estimator: the study's one precedence rule for parameters.

A method's parameters come from four places; a later one wins over an earlier one:

1. the method's registered defaults (:class:`baselines.registry.Method` ``params``);
2. the dataset's shared ``datasets.<name>.params`` (e.g. the kernel width), for the
   parameters the method takes (a dataset's ``gamma`` does not reach a method without a kernel);
3. the method's own ``methods.<label>.params``;
4. values found by tuning.

Then ``random_state`` is the trial seed and ``memory_budget`` the protocol's budget, unless
one of the above set them. Tuning and training both build their estimators with
:func:`build_estimator`, so the same configuration gives the same estimator.
"""

from __future__ import annotations

from baselines.registry import get_method, make_method

__all__ = ["NO_GRID", "method_config", "method_spec", "build_estimator"]

NO_GRID = (None, "none", "null")
"""Values of ``methods.<label>.grid`` meaning "no search" ("none" and "null" are for ``--config``)."""


def method_config(config, label):
    """The configuration entry of method ``label``, its label and caption falling back on the registry's.

    Returns
    -------
    dict
        ``method`` (registered name), ``params``, ``grid`` (None for no search), ``label``, ``caption``.
    """
    entry = config["methods"][label]
    registered = get_method(entry["method"])
    return {
        "method": entry["method"],
        "params": dict(entry["params"]),
        "grid": None if entry["grid"] in NO_GRID else entry["grid"],
        "label": entry.get("label", registered.label),
        "caption": entry.get("description", registered.caption),
    }


def method_spec(config, label, dataset):
    """What a job needs to build method ``label`` on ``dataset``: steps 2 and 3 of the precedence rule.

    Returns
    -------
    dict
        ``method`` (registered name), ``params`` (dataset then method parameters, only those
        the method takes) and ``memory_budget_mb``.
    """
    entry = method_config(config, label)
    accepted = make_method(entry["method"]).get_params()
    shared = {name: value for name, value in config["datasets"][dataset]["params"].items() if name in accepted}
    return {"method": entry["method"], "params": {**shared, **entry["params"]},
            "memory_budget_mb": config["protocol"]["memory_budget_mb"]}


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
    return make_method(spec["method"], **params, **injected), params
