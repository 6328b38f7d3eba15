"""From the design and the studies' tidy data to the ledger and its figures (what the Snakemake scripts call)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import yaml

from qs3orao.schedule import contracting_offset
from qs3study.theory import checks
from qs3study.theory.dataset_facts import read_dataset_facts
from qs3study.theory.complexity import fit_exponent, linear_growth, local_exponents, tail_exponent

from qs3study.files import write_frame
from qs3study.provenance import run_manifest
from qs3study.stages.tables import read_results
from . import plots
from .crossover import recorded_machine_mb
from .empirical import PROTOCOL_NAMES, ProtocolClaims, declared_screens, empirical_claims, read_screened
from .rate import rate_classes, rate_equivalence_classes
from .design import design_sha256, load_design
from .ledger import history_markdown, write_ledger
from .rows import build_claims
from .rows.complexity import MEMORY_VS_T
from .studies import offset_data_bounds
from .summary import summarise

__all__ = ["run_checks", "exponents_of", "local_exponents_of", "tail_exponents_of", "read_complexity",
           "assemble_ledger",
           "figure_names", "draw_figures"]

HEADER = """# Claims ledger: QS3ORAO (Shi, Gu, Li and Huang, AAAI 2020)

Every formal and empirical claim of the paper (and the project's claim on its step schedule), the check that
tests it, the verdict and its evidence. Regenerate with `snakemake -c2 theory` (this file, the CSV beside it,
the tidy data and figures in `figures/theory/`) and `pytest tests/theory` (the property-based searches that
found the pinned counterexamples). Verdicts: holds / holds (uninformative) / holds under stated conditions /
fails / premise fails / inconclusive /
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
    }


def exponents_of(records, confidence):
    """Sweep name to ``(slope, low, high)`` of the fitted exponent."""
    return {name: fit_exponent(g["size"].to_numpy(), g["value"].to_numpy(), confidence=confidence)
            for name, g in records.groupby("sweep", sort=False)}


def local_exponents_of(records):
    """Sweep name to the exponents between the medians at its consecutive sizes."""
    return {name: [float(x) for x in local_exponents(g["size"].to_numpy(), g["value"].to_numpy())]
            for name, g in records.groupby("sweep", sort=False)}


def tail_exponents_of(records, *, tail, confidence):
    """Sweep name to ``(slope, low, high)`` fitted on every record at its ``tail`` largest sizes."""
    return {name: tail_exponent(g["size"].to_numpy(), g["value"].to_numpy(), tail=tail, confidence=confidence)
            for name, g in records.groupby("sweep", sort=False)}


def _claims_of(table, configurations):
    """The empirical claims of one results table, by its configuration's criteria, with its signal screens.

    ``configurations`` are the run's configuration files in command-line order (an overlay
    after its base); their ``claims:`` sections are merged key by key, a later one winning.
    The screens are the ones the run declared: those of the configuration its manifest
    (``manifest.json`` beside the table) records, else of ``configurations``
    (:func:`~qs3study.claims.empirical.declared_screens`); when there is one, the run's
    ``screened_datasets.csv`` beside the table must list every dataset under it. A configuration
    changed after the run (a screen added for the next run) does not change how the run is read.
    8d's refusals are read against the memory of the machine the run measured on, as its manifest
    records it.
    """
    sections = []
    for configuration in configurations:
        with open(configuration) as handle:
            sections.append(yaml.safe_load(handle))
    criteria = _merged(sections, "claims")
    manifest = run_manifest(table)
    declared = [manifest["config"]] if manifest is not None else sections
    screens = declared_screens(_merged(declared, "data_checks").get("signal_permutations", 0),
                               _merged(declared, "claims").get("signal_level"))
    screened = read_screened(os.path.join(os.path.dirname(table), "screened_datasets.csv")) if screens else None
    return empirical_claims(read_results(table), criteria, screened, screens, recorded_machine_mb(manifest))


def _merged(sections, key):
    """The ``key`` sections of configurations merged key by key, a later one winning."""
    merged = {}
    for section in sections:
        merged.update(section.get(key) or {})
    return merged


def empirical_inputs(design):
    """The results tables and their configuration files the design's empirical rows read.

    Either one table (``empirical.results_table`` with its ``configuration``) or one per
    protocol (``empirical.protocols``: name -> ``results_table``, ``configuration`` a file or a
    list, an overlay after its base), in the design's order; a protocol whose ``results_table``
    is null has no committed run yet and contributes nothing. A protocol's ``scale`` entry (the
    same keys) names its scale study, read after the protocol's own table when committed.
    Paths as the design gives them.
    """
    empirical = design["empirical"]
    protocols = empirical.get("protocols") or {}
    if protocols:
        run = [run for entry in protocols.values() if entry["results_table"] for run in _runs(entry)]
        return ([entry["results_table"] for entry in run],
                [path for entry in run for path in _configuration_files(entry)])
    table, configuration = empirical.get("results_table"), empirical.get("configuration")
    return ([table] if table else []), ([configuration] if configuration else [])


def _runs(entry):
    """A protocol's committed runs in reading order: its own, then its scale study's if committed."""
    scale = entry.get("scale") or {}
    return [entry] + ([scale] if scale.get("results_table") else [])


def _configuration_files(entry):
    """A protocol's configuration files in command-line order (one file, or a base and its overlays)."""
    return [entry["configuration"]] if isinstance(entry["configuration"], str) else list(entry["configuration"])


def _empirical(design, results_tables, results_configurations):
    """The empirical claims (one table, or :class:`ProtocolClaims` per protocol) and why they are missing."""
    protocols = design["empirical"].get("protocols") or {}
    if protocols:  # one table per protocol, in the design's order (rows 8a-<protocol> ...)
        empirical, tables, files = ProtocolClaims(), iter(results_tables), iter(results_configurations)
        pending = []
        for name, entry in protocols.items():
            if entry["results_table"]:
                claims = [_claims_of(next(tables), [next(files) for _ in _configuration_files(run)])
                          for run in _runs(entry)]
                empirical[name] = claims[0] if len(claims) == 1 else _with_scale(claims[0], claims[1],
                                                                                  entry["scale"]["results_table"])
            else:
                empirical[name] = None
                pending.append(f"{PROTOCOL_NAMES.get(name, name)} (empirical.protocols.{name}.results_table: null)")
        return empirical, ("no committed run yet of the " + ", ".join(pending)) if pending else ""
    if results_tables:
        return _claims_of(results_tables[0], list(results_configurations)[:1]), ""
    return None, "the design names no results table (empirical: no protocol with a results_table, and no results_table)"


#: The claims a scale study decides for its protocol (8c, 8d): the sizes where both sides run.
SCALE_KEYS = ("faster_beyond_10k", "exact_out_of_memory")


def _with_scale(claims, scale_claims, scale_table):
    """A protocol's claims with 8c and 8d read on its scale study's table instead of its own."""
    merged = dict(claims)
    for key in SCALE_KEYS:
        merged[key] = {**scale_claims[key],
                       "evidence": f"read on the scale study ({scale_table}): {scale_claims[key]['evidence']}"}
    return merged


def _offset_data(spec, path, problem_table):
    """Row O-data's per-cell summary and curvature bounds; its records must carry the offsets the design gives."""
    records = pd.read_csv(path)
    bounds = offset_data_bounds(spec)
    cells = records.drop_duplicates(["instance", "lam", "theta_lam"])
    for cell in cells.itertuples():
        expected = contracting_offset(cell.theta_lam / cell.lam, cell.lam, bounds[cell.instance].bound,
                                      name=spec["offset_data"]["step_offset"])
        if cell.step_offset != expected:
            raise ValueError(f"{path}: the offset of {cell.instance}, lam = {cell.lam:g}, theta*lam = "
                             f"{cell.theta_lam:g} is {cell.step_offset:g}, the design's offset_data section gives "
                             f"{expected}: the data are not this design's run")
    return summarise(records, problem_table, spec["convergence"]["criteria"]), bounds


def read_complexity(spec, path):
    """The complexity study's tidy records, checked to be the run of the design's complexity section.

    Raises
    ------
    ValueError
        When a sweep of the design is missing from the records, a swept size differs from the
        design's, or the records hold a sweep the design does not name (row 7 would silently
        aggregate other sweeps than the design's).
    """
    records = pd.read_csv(path)
    design_sizes = spec["complexity"]["sizes"]
    found = {name: sorted(int(s) for s in group["size"].unique()) for name, group in records.groupby("sweep")}
    for name in sorted(set(design_sizes) | set(found)):
        if found.get(name) != sorted(int(s) for s in design_sizes.get(name, [])):
            raise ValueError(f"{path}: sweep {name!r} has sizes {found.get(name)}, the design's complexity section "
                             f"gives {design_sizes.get(name)}: the data are not this design's run")
    return records


def informative_records(spec, path):
    """Design v2's Huberised-loss records at the checkpoints where its bounds are read (``t >= check_from``)."""
    records = pd.read_csv(path)
    return records[records["t"] >= spec["v2"]["huber_informative"]["check_from"]]


def assemble_ledger(*, design, convergence, problems, rate, rate_v2, huber, huber_problems, huber_informative,
                    huber_informative_problems, offset_data, complexity_v2, datasets, results_tables,
                    results_configurations, md, csv, summary, rate_summary, huber_summary, huber_informative_summary,
                    offset_data_summary):
    """Write the ledger (Markdown, CSV) and the per-cell summaries from the studies' tidy data.

    Parameters
    ----------
    design, convergence, problems, rate, rate_v2, huber, huber_problems, huber_informative, huber_informative_problems,
    offset_data, complexity_v2, datasets : str
        Paths of the design file and the studies' tidy data (``*_v2`` and ``huber_informative*``: design
        v2's runs, which the rows it redefines read; ``rate``: the v1 rate study, checked to parse and
        kept as the record of that design; ``datasets``: the dataset facts the theory run counted,
        :func:`qs3study.theory.dataset_facts.dataset_facts`; the mirror itself is never read here);
        ``design`` is written into the ledger's header as given.
    results_tables, results_configurations : list of str
        The benchmark tables of the empirical rows and the configuration files holding
        their criteria (:func:`empirical_inputs`; empty: the rows are not evaluated).
    md, csv, summary, rate_summary, huber_summary, huber_informative_summary, offset_data_summary : str
        Output paths (``rate_summary``: design v2's rate study).

    Raises
    ------
    ValueError
        When the offsets in ``offset_data`` are not those the design's ``offset_data`` section gives, or
        the complexity records are not the run of the design's sweeps.
    """
    spec = load_design(design)
    problem_table = pd.read_csv(problems)
    cells = summarise(pd.read_csv(convergence), problem_table, spec["convergence"]["criteria"])
    write_frame(summary, cells, index=False, float_format="%.6g")
    pd.read_csv(rate)
    rates = rate_equivalence_classes(pd.read_csv(rate_v2), problem_table, spec["v2"]["rate"]["criteria"])
    write_frame(rate_summary, rates, index=False, float_format="%.6g")
    huber_records, huber_table = pd.read_csv(huber), pd.read_csv(huber_problems)
    write_frame(huber_summary, summarise(huber_records, huber_table, spec["convergence"]["criteria"]), index=False,
                float_format="%.6g")
    huber_rates = rate_classes(huber_records, huber_table, spec["rate"]["criteria"])
    informative = summarise(informative_records(spec, huber_informative), pd.read_csv(huber_informative_problems),
                            spec["convergence"]["criteria"])
    write_frame(huber_informative_summary, informative, index=False, float_format="%.6g")
    offset_cells, bounds = _offset_data(spec, offset_data, problem_table)
    write_frame(offset_data_summary, offset_cells, index=False, float_format="%.6g")
    empirical, reason = _empirical(spec, results_tables, results_configurations)
    sweeps = read_complexity(spec, complexity_v2)
    criteria = spec["v2"]["complexity"]["criteria"]
    memory = sweeps[sweeps["sweep"] == MEMORY_VS_T]
    claims = build_claims(
        checks=run_checks(spec, float(problem_table["M1"].max())), summary=cells, rates=rates,
        huber_informative_summary=informative, huber_rates=huber_rates, design=spec,
        exponents=exponents_of(sweeps, criteria["confidence"]), local_exponents=local_exponents_of(sweeps),
        tail_exponents=tail_exponents_of(sweeps, tail=criteria["tail"], confidence=criteria["confidence"]),
        memory_growth=linear_growth(memory["size"], memory["value"], confidence=criteria["confidence"]),
        empirical=empirical, empirical_reason=reason, offset_data_summary=offset_cells, offset_data_bounds=bounds,
        dataset_facts=read_dataset_facts(datasets))
    write_ledger(claims, md, csv, header=HEADER.format(design=design, sha=design_sha256(design)),
                 footer=history_markdown(spec["history"]))


def figure_names(design):
    """Stems of the ledger's figures (each written as ``.png`` and ``.pdf``)."""
    return [f"convergence_{name}" for name in design["convergence"]["instances"]] + [
        "slopes", "bounds", "huber", "huber_informative", "rate", "transient", "lemma2_ratio", "thresholds", "complexity"]


def draw_figures(*, design, convergence, summary, huber_summary, huber_informative_summary, rate_summary, complexity_v2,
                 stems):
    """Draw every figure of the ledger.

    Parameters
    ----------
    design, convergence, summary, huber_summary, huber_informative_summary, rate_summary, complexity_v2 : str
        Paths of the design, the tidy data and the per-cell summaries (design v2's rate summary and
        complexity run).
    stems : dict
        Figure name (:func:`figure_names`) to its output path without extension.
    """
    design = load_design(design)
    criteria = design["convergence"]["criteria"]
    records = pd.read_csv(convergence)
    summary = pd.read_csv(summary)
    complexity = read_complexity(design, complexity_v2)
    for instance in design["convergence"]["instances"]:
        plots.save(plots.convergence_figure(records, instance, criteria), stems[f"convergence_{instance}"])
    plots.save(plots.slopes_figure(summary, criteria), stems["slopes"])
    plots.save(plots.bounds_figure(summary), stems["bounds"])
    plots.save(plots.huber_figure(pd.read_csv(huber_summary), design["huber"]["delta"]), stems["huber"])
    plots.save(plots.huber_figure(pd.read_csv(huber_informative_summary), design["v2"]["huber_informative"]["delta"]),
               stems["huber_informative"])
    plots.save(plots.rate_figure(pd.read_csv(rate_summary), design["v2"]["rate"]), stems["rate"])
    plots.save(plots.transient_figure(summary, criteria), stems["transient"])
    products = np.unique(np.r_[np.geomspace(0.2, 40, 60), np.arange(1, 41)])
    plots.save(plots.lemma2_figure(products, np.unique(np.geomspace(1, 1e4, 80).round())), stems["lemma2_ratio"])
    examples = [("hinge LP: minimiser not unique", *checks.PINNED_HINGE_NOT_UNIQUE),
                ("hinge LP: b_1* = b_2*", *checks.PINNED_HINGE_NOT_STRICT),
                ("squared hinge: not unique", *checks.PINNED_SQUARED_HINGE_NOT_UNIQUE),
                ("logistic: unique, ordered", *checks.PINNED_HINGE_NOT_STRICT[:3], "logistic")]
    plots.save(plots.thresholds_figure(examples), stems["thresholds"])
    criteria = design["v2"]["complexity"]["criteria"]
    tail = tail_exponents_of(complexity, tail=criteria["tail"], confidence=criteria["confidence"])
    memory = complexity[complexity["sweep"] == MEMORY_VS_T]
    growth = linear_growth(memory["size"], memory["value"], confidence=criteria["confidence"])
    plots.save(plots.complexity_figure(complexity, tail, sizes=criteria["tail"], growth=growth), stems["complexity"])
