"""A method's configured search space: the ``grid:`` forms of a configuration resolved to a tuning grid."""

from __future__ import annotations

from dataclasses import replace

from baselines.registry import TuningGrid, tuning_grid

__all__ = ["STAGED", "resolve_grid"]

#: The key of a ``grid:`` mapping that keeps the staged search with the user's stage-1 values.
STAGED = "staged"


def resolve_grid(method, grid):
    """The :class:`baselines.registry.TuningGrid` of a configured search space.

    Parameters
    ----------
    method : str
        Registered method name.
    grid : "registry" or dict
        ``"registry"``: the paper's staged search (the method's registered grid).
        ``{"staged": {parameter: values}, "split_values": [...], "per_split": bool}``:
        the same staged search with stage 1's product over the given values,
        stages 2-3 over ``split_values`` (default: the registered ones), stage 3
        skipped when ``per_split`` is false.
        Any other mapping parameter -> values: their full product, nothing else
        (the split weight is not searched: it keeps its configured value).

    Raises
    ------
    ValueError
        If a staged form sets split weights for a method without any.
    """
    if grid == "registry":
        return tuning_grid(method)
    if STAGED not in grid:
        return TuningGrid(grid={name: tuple(values) for name, values in grid.items()})
    registered = tuning_grid(method)
    if registered.split_param is None and {"split_values", "per_split"} & set(grid):
        raise ValueError(f"grid.split_values and grid.per_split need a method with split weights; {method!r} has none")
    return replace(registered, grid={name: tuple(values) for name, values in grid[STAGED].items()},
                   split_values=tuple(grid.get("split_values", registered.split_values)),
                   per_split=bool(grid.get("per_split", True)))
