"""From the design and the studies' tidy data to the ledger and its figures (what the Snakemake scripts call)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import yaml

from qs3orao.theory import checks
from qs3orao.theory.complexity import fit_exponent

from ..tables import read_results
from . import plots
from .empirical import ProtocolClaims, empirical_claims
from .design import design_sha256, load_design
from .ledger import build_claims, history_markdown, write_ledger
from .summary import summarise

__all__ = ["run_checks", "exponents_of", "local_exponents_of", "study_settings", "assemble_ledger", "draw_figures"]

HEADER = """# Claims ledger: QS3ORAO (Shi, Gu, Li and Huang, AAAI 2020)

Every formal and empirical claim of the paper (and the project's claim on its step schedule), the check that
tests it, the verdict and its evidence. Regenerate with `snakemake -c2 theory` (this file, the CSV beside it,
the tidy data and figures in `figures/theory/`) and `pytest tests/theory` (the property-based searches that
found the pinned counterexamples). Verdicts: holds / holds under stated conditions / fails / inconclusive /
not checkable / not evaluated, each computed by a function of `qs3study.claims.verdicts` from the check's
results and the criteria of the pre-registered design `{design}` (sha256 `{sha}`)."""


def _plain(options, drop=()):
    return {k: v for k, v in options.items() if k not in drop}


def run_checks(design, m1_fixed):
    """Every deterministic check, with the design's settings.

    Parameters
    ----------
    design : dict
    m1_fixed : float
        The fixed ``M_1`` that Assumption 3's search must exceed.
    """
    c = design["checks"]
    return {
        "claim1": checks.check_claim1(**c["claim1"]),
        "claim2": checks.check_claim2(**_plain(c["claim2"], ("tolerance",))),
        "claim3": checks.check_claim3(**c["claim3"]),
        "claim4": checks.check_claim4(**c["claim4"]),
        "algorithm1": checks.check_algorithm1(**_plain(c["algorithm1"], ("tolerance",))),
        "appendix_thresholds": checks.check_appendix_thresholds(**c["appendix_thresholds"]),
        "assumption3": checks.check_assumption3(bound=m1_fixed, **c["assumption3"]),
        "table1_space": checks.check_table1_space(**c["coefficient_storage"]),
        "table2": checks.check_table2(),
    }


def exponents_of(records, confidence):
    """Sweep name to ``(slope, low, high)`` of the fitted exponent."""
    return {name: fit_exponent(g["size"].to_numpy(), g["value"].to_numpy(), confidence=confidence)
            for name, g in records.groupby("sweep", sort=False)}


def local_exponents_of(records):
    """Sweep name to the exponent between the medians at its two largest sizes."""
    out = {}
    for name, g in records.groupby("sweep", sort=False):
        medians = g.groupby("size")["value"].median()
        (n1, v1), (n2, v2) = list(medians.items())[-2:]
        out[name] = float(np.log(v2 / v1) / np.log(n2 / n1))
    return out


def study_settings(design):
    """One-line description of the convergence study."""
    conv = design["convergence"]
    instances = "; ".join(f"{name}: {s['n_labeled']} labeled + {s['n_unlabeled']} unlabeled, k = {s['n_classes']}, "
                          f"d = {s['n_features']}, gamma = {s['gamma']}, trade-off {s['tradeoff']}"
                          for name, s in conv["instances"].items())
    return (f"Instances {instances}; lambda in {conv['lambdas']}; theta*lambda in {conv['theta_lams']}; "
            f"T = {conv['n_iter']}, {conv['seeds']} seeds, batch {conv['primary']['batch_size']} with "
            f"{conv['primary']['n_components']} frequency per step (the paper's sampling)")


def _claims_of(table, configurations):
    """The empirical claims of one results table, by its configuration's criteria, with its signal screen.

    ``configurations`` are the run's configuration files in command-line order (an overlay
    after its base); their ``claims:`` sections are merged key by key, a later one winning.
    The screen is the run's ``screened_datasets.csv`` beside the table (when the
    criteria declare ``claims.signal_level``).
    """
    criteria = {}
    for configuration in configurations:
        with open(configuration) as handle:
            criteria.update(yaml.safe_load(handle).get("claims") or {})
    screened = None
    beside = os.path.join(os.path.dirname(table), "screened_datasets.csv")
    if criteria.get("signal_level") is not None:
        screened = pd.read_csv(beside)
    return empirical_claims(read_results(table), criteria, screened)


def assemble_ledger(inputs, outputs):
    """Write the ledger (Markdown, CSV) and the per-cell summary from the rule's inputs."""
    design = load_design(inputs.design)
    records = pd.read_csv(inputs.convergence)
    problems = pd.read_csv(inputs.problems)
    summary = summarise(records, problems, design["convergence"]["criteria"])
    summary.to_csv(outputs.summary + ".tmp", index=False, float_format="%.6g")
    os.replace(outputs.summary + ".tmp", outputs.summary)
    table = list(inputs.results_table)
    configuration = list(inputs.get("results_configuration", []))
    protocols = design["empirical"].get("protocols") or {}
    if protocols:  # one table per protocol, in the design's order (rows 8a-<protocol> ...)
        empirical, files = ProtocolClaims(), iter(configuration)
        for (name, entry), path in zip(protocols.items(), table):
            count = 1 if isinstance(entry["configuration"], str) else len(entry["configuration"])
            empirical[name] = _claims_of(path, [next(files) for _ in range(count)])
        reason = ""
    elif table:
        empirical, reason = _claims_of(table[0], configuration[:1]), ""
    else:
        empirical, reason = None, "the design names no results table (empirical.results_table: null)"
    m1 = float(problems["M1"].max())
    complexity = pd.read_csv(inputs.complexity)
    claims = build_claims(
        checks=run_checks(design, m1), summary=summary, settings=study_settings(design), design=design,
        exponents=exponents_of(complexity, design["complexity"]["criteria"]["confidence"]),
        local_exponents=local_exponents_of(complexity),
        empirical=empirical, empirical_reason=reason)
    write_ledger(claims, outputs.md, outputs.csv,
                 header=HEADER.format(design=inputs.design, sha=design_sha256(inputs.design)),
                 footer=history_markdown(design["history"]))


def draw_figures(inputs, outputs):
    """Draw every figure of the ledger into the rule's outputs (``figures/theory/<name>.{png,pdf}``)."""
    design = load_design(inputs.design)
    criteria = design["convergence"]["criteria"]
    records = pd.read_csv(inputs.convergence)
    summary = pd.read_csv(inputs.summary)
    complexity = pd.read_csv(inputs.complexity)
    stems = {os.path.splitext(os.path.basename(path))[0]: os.path.splitext(path)[0] for path in outputs}
    for instance in design["convergence"]["instances"]:
        plots.save(plots.convergence_figure(records, instance, criteria), stems[f"convergence_{instance}"])
    plots.save(plots.slopes_figure(summary, criteria), stems["slopes"])
    plots.save(plots.bounds_figure(summary), stems["bounds"])
    plots.save(plots.transient_figure(summary, criteria), stems["transient"])
    products = np.unique(np.r_[np.geomspace(0.2, 40, 60), np.arange(1, 41)])
    plots.save(plots.lemma2_figure(products, np.unique(np.geomspace(1, 1e4, 80).round())), stems["lemma2_ratio"])
    examples = [("hinge LP: minimiser not unique", *checks.PINNED_HINGE_NOT_UNIQUE),
                ("hinge LP: b_1* = b_2*", *checks.PINNED_HINGE_NOT_STRICT),
                ("squared hinge: not unique", *checks.PINNED_SQUARED_HINGE_NOT_UNIQUE),
                ("logistic: unique, ordered", *checks.PINNED_HINGE_NOT_STRICT[:3], "logistic")]
    plots.save(plots.thresholds_figure(examples), stems["thresholds"])
    exponents = exponents_of(complexity, design["complexity"]["criteria"]["confidence"])
    plots.save(plots.complexity_figure(complexity, exponents), stems["complexity"])
