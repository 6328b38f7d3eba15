"""The theory studies' pre-registered design file: loading, validation and hash.

Every setting and criterion of the studies is read from the design; a missing
key is an error, never a default.
"""

from __future__ import annotations

import hashlib

import yaml

__all__ = ["REQUIRED", "load_design", "design_sha256", "require"]

#: Keys every design must have (dotted paths).
REQUIRED = (
    "convergence.instances", "convergence.lambdas", "convergence.theta_lams", "convergence.primary.batch_size",
    "convergence.primary.n_components", "convergence.secondary.batch_size", "convergence.secondary.n_components",
    "convergence.secondary.lambdas", "convergence.secondary.theta_lams", "convergence.schedules",
    "convergence.seeds", "convergence.n_iter", "convergence.n_checkpoints",
    "convergence.criteria.fit_from", "convergence.criteria.rate_target", "convergence.criteria.rate_tolerance",
    "convergence.criteria.bootstrap", "convergence.criteria.bootstrap_seed", "convergence.criteria.confidence",
    "convergence.criteria.transient_min", "convergence.criteria.transient_decades",
    "convergence.criteria.transient_share", "convergence.criteria.transient_rank",
    "convergence.criteria.offset_peak",
    "rate.theta_lams", "rate.seeds", "rate.n_iter", "rate.n_checkpoints", "rate.window_from", "rate.window_points",
    "rate.criteria.fit_from", "rate.criteria.min_fit_checkpoints", "rate.criteria.rate_target",
    "rate.criteria.rate_tolerance", "rate.criteria.bootstrap", "rate.criteria.bootstrap_seed",
    "rate.criteria.confidence", "rate.criteria.alpha", "rate.criteria.transient_peak",
    "huber.delta", "huber.lambdas", "huber.theta_lams", "huber.seeds", "huber.n_iter", "huber.n_checkpoints",
    "huber.window_from", "huber.window_points", "huber.gtol",
    "offset_data.schedule", "offset_data.step_offset", "offset_data.n_draws", "offset_data.delta",
    "offset_data.seed",
    "complexity.settings", "complexity.sizes", "complexity.repeats", "complexity.criteria.confidence",
    "complexity.criteria.tolerance", "complexity.criteria.claimed", "complexity.criteria.tail",
    "complexity.criteria.dominance",
    "checks.algorithm1", "checks.appendix_thresholds", "checks.assumption3", "checks.coefficient_storage", "checks.table2.mirror",
    "v2.theorem1_search.lambdas", "v2.theorem1_search.theta_lams", "v2.theorem1_search.t_values",
    "v2.huber_informative.delta", "v2.huber_informative.lambdas", "v2.huber_informative.theta_lams",
    "v2.huber_informative.seeds", "v2.huber_informative.n_iter", "v2.huber_informative.check_from",
    "v2.rate.theta_lams", "v2.rate.seeds", "v2.rate.n_iter", "v2.rate.window_from", "v2.rate.window_points",
    "v2.rate.criteria.fit_from", "v2.rate.criteria.min_fit_checkpoints", "v2.rate.criteria.rate_target",
    "v2.rate.criteria.margin", "v2.rate.criteria.alpha", "v2.rate.criteria.noise_sigma",
    "v2.rate.criteria.noise_ell", "v2.rate.criteria.power", "v2.rate.criteria.transient_peak",
    "v2.complexity.repeats", "v2.complexity.criteria.dominance", "v2.complexity.criteria.memory_vs_t",
    "empirical", "history",
)


def require(design, path):
    """The value at dotted ``path`` of ``design`` (ValueError naming the key when absent)."""
    node = design
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"design: missing key {path!r}")
        node = node[part]
    return node


def design_sha256(path):
    """sha256 of the design file's bytes."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def load_design(path):
    """Read and validate a design file.

    Returns
    -------
    dict
        The design, with every key of :data:`REQUIRED` present.

    Raises
    ------
    ValueError
        A required key is missing, or the complexity sizes do not match the claimed exponents.
    """
    with open(path) as handle:
        design = yaml.safe_load(handle)
    if not isinstance(design, dict):
        raise ValueError(f"design {path!r}: expected a mapping at the top level")
    for key in REQUIRED:
        require(design, key)
    sweeps, claimed = set(design["complexity"]["sizes"]), set(design["complexity"]["criteria"]["claimed"])
    if sweeps != claimed:
        raise ValueError(f"design {path!r}: complexity.sizes and complexity.criteria.claimed name different "
                         f"sweeps: {sorted(sweeps ^ claimed)}")
    return design
