"""The ledger survives every outcome of every check, and its evidence follows the outcome."""

import copy
import pathlib

import numpy as np
import pandas as pd
import pytest

from qs3orao.curvature import CurvatureBound
from qs3study.theory import checks
from qs3study.claims import verdicts as v
from qs3study.claims.assemble import _offset_data as _offset_data_summary
from qs3study.claims.assemble import exponents_of, local_exponents_of, tail_exponents_of
from qs3study.claims.design import load_design
from qs3study.claims.rows import build_claims
from qs3study.claims.rows.exact import row_2
from qs3study.claims.rate import rate_classes, rate_equivalence_classes
from qs3study.claims.studies import build_problems, offset_data_cells
from qs3study.claims.summary import summarise
from qs3study.datasets.registry import DATASETS
from qs3study.theory.complexity import linear_growth
from qs3study.theory.convergence import checkpoints
from qs3study.theory.dataset_facts import READ, dataset_facts
from qs3study.theory.paper_tables import TABLE2

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "figures" / "theory"


@pytest.fixture(scope="module")
def design():
    return load_design(ROOT / "tests" / "theory" / "design_ci.yaml")


@pytest.fixture(scope="module")
def summary(design):
    """Summaries of a few committed cells: the small-lambda transient and lambda = 1, in and outside the range."""
    records = pd.read_csv(COMMITTED / "convergence.csv")
    keep = records["lam"].isin([0.03125, 1.0]) & records["theta_lam"].isin([0.5, 1.5, 4.0])
    return summarise(records[keep], pd.read_csv(COMMITTED / "problems.csv"), design["convergence"]["criteria"])


@pytest.fixture(scope="module")
def real_checks():
    return {
        "claim1": checks.check_claim1(values=[0.0, 1.0], max_size=2, multiplicities=[0, 1]),
        "claim2": checks.check_claim2(gammas=[0.5], n_pairs=5, seed=0),
        "claim3": checks.check_claim3(values=[0.0, 1.0], max_rows=3, classes=[2, 3]),
        "claim4": checks.check_claim4(max_integer=6, max_exact_t=8, denominators=[2, 3], float_t=[100]),
        "algorithm1": checks.check_algorithm1(cases=3, seed=3, finite_difference_step=1e-7, lam=0.5, shrink_steps=5),
        "appendix_thresholds": checks.check_appendix_thresholds(cases=10, seed=5, max_rows=8, classes=[3]),
        "assumption3": checks.check_assumption3(bound=4.0, doublings=20),
        "table1_space": checks.check_table1_space(n=40, n_components=2, n_iters=[5, 10]),
    }


def rate_records(slopes, *, seeds=16, peak=1.0, marks=(1, 10, 100, 500, 700, 900, 1100, 1300, 1500, 2000), noise=0.05):
    """Synthetic rate-study records: per cell ``(instance, lam, theta_lam) -> slope``, multiplicative noise per seed
    and (log-sd ``noise``) per checkpoint."""
    rng = np.random.default_rng(0)
    rows = []
    for (instance, lam, c), slope in slopes.items():
        for seed in range(seeds):
            scale = rng.lognormal(0.0, 0.2)
            for t in marks:
                rows.append({"instance": instance, "lam": lam, "theta_lam": c, "seed": seed, "t": t,
                             "error_mean": scale * rng.lognormal(0.0, noise) * float(t) ** slope, "peak_error": peak})
    return pd.DataFrame(rows)


#: Checkpoints of design v2's rate study: 12 in the window t >= T / 16.
V2_MARKS = tuple(int(t) for t in checkpoints(8000, 16, window_from=0.0625, window_points=8))


def v2_rates(design, slopes, **options):
    """Design v2's rate classes of synthetic records with the given per-cell slopes."""
    return rate_equivalence_classes(rate_records(slopes, marks=V2_MARKS, **options), rate_problems(slopes),
                                    design["v2"]["rate"]["criteria"])


def growth_of(complexity, design):
    """The engine's memory growth in t of complexity records (MiB per iteration, interval)."""
    memory = complexity[complexity["sweep"] == "engine_memory_vs_t"]
    return linear_growth(memory["size"], memory["value"], confidence=design["v2"]["complexity"]["criteria"]["confidence"])


def rate_problems(slopes, initial=1.0):
    return pd.DataFrame([{"instance": i, "lam": lam, "initial_error": initial} for i, lam, _ in slopes]
                        ).drop_duplicates()


@pytest.fixture(scope="module")
def rates(design):
    slopes = {("A", 1.0, 1.5): -1.0, ("A", 1.0, 4.0): -1.05, ("B", 1.0, 1.5): -0.98}
    return rate_classes(rate_records(slopes), rate_problems(slopes), design["rate"]["criteria"])


@pytest.fixture(scope="module")
def complexity():
    return pd.read_csv(COMMITTED / "complexity.csv")


#: Table 2's datasets as a theory run without the mirror counts them (none read).
FACTS = dataset_facts({name: DATASETS[name] for name in TABLE2}, None)


def _ledger(design, real_checks, summary, complexity, *, rates=None, empirical=None, offset_data=None, facts=FACTS):
    criteria = design["v2"]["complexity"]["criteria"]
    slopes = {("A", 1.0, 1.5): -1.0, ("B", 1.0, 4.0): -0.98}
    if rates is None:
        rates = v2_rates(design, slopes)
    claims = build_claims(
        checks=real_checks, summary=summary, rates=rates,
        huber_informative_summary=summary.assign(assumption3_exceeded=False),
        huber_rates=rate_classes(rate_records(slopes), rate_problems(slopes), design["rate"]["criteria"]),
        design=design,
        exponents=exponents_of(complexity, criteria["confidence"]), local_exponents=local_exponents_of(complexity),
        tail_exponents=tail_exponents_of(complexity, tail=criteria["tail"], confidence=criteria["confidence"]),
        memory_growth=growth_of(complexity, design),
        empirical=empirical, empirical_reason="no table", dataset_facts=facts,
        **(offset_data or _offset_data(summary)))
    return {c.id: c for c in claims}


def _offset_data(summary, bound=1.5, **cell_values):
    """Row O-data's inputs: the data-free offset's cells standing in for the data-based ones, and a bound."""
    cells = summary[summary["schedule"] == "offset_auto"].assign(schedule="offset_auto_data", **cell_values)
    bound = CurvatureBound(estimate=bound - 0.5, deviation=0.5, data_free=6.0, bound=bound, n_draws=256, delta=0.01)
    return {"offset_data_summary": cells, "offset_data_bounds": {name: bound for name in cells["instance"].unique()}}


def test_offset_data_row_follows_its_cells_and_its_bound(design, real_checks, summary, complexity):
    ledger = _ledger(design, real_checks, summary, complexity)
    assert ledger["O-data"].verdict == ledger["O"].verdict  # the same cells under row O's criteria
    paper = summary[(summary["schedule"] == "paper") & (summary["batch_size"] == 1)].set_index(
        ["instance", "lam", "theta_lam"])
    auto = summary[summary["schedule"] == "offset_auto"].set_index(["instance", "lam", "theta_lam"])
    tame = _offset_data(summary, measured_peak=1.0)
    tame["offset_data_summary"]["error_mean_rate"] = paper.loc[auto.index, "error_mean_rate"].to_numpy()
    row = _ledger(design, real_checks, summary, complexity, offset_data=tame)["O-data"]
    assert row.verdict == v.HOLDS and "Largest measured peak with the offset: 1 " in row.evidence
    wild = _ledger(design, real_checks, summary, complexity, offset_data=_offset_data(summary, measured_peak=50.0))
    assert wild["O-data"].verdict == v.FAILS
    exact = summary["curvature"].max()
    assert "<= h_delta" in _ledger(design, real_checks, summary, complexity,
                                    offset_data=_offset_data(summary, bound=exact + 1))["O-data"].evidence
    assert "> h_delta" in _ledger(design, real_checks, summary, complexity,
                                  offset_data=_offset_data(summary, bound=exact / 2))["O-data"].evidence


def test_offset_data_from_another_design_is_refused(design, tmp_path):
    """The ledger recomputes the design's offsets and refuses records whose offsets differ."""
    problems, _ = build_problems(design)
    cells = pd.DataFrame(offset_data_cells(design, problems))
    cells.to_csv(tmp_path / "right.csv", index=False)
    cells.loc[3, "step_offset"] += 1
    cells.to_csv(tmp_path / "wrong.csv", index=False)
    with pytest.raises(ValueError, match="not this design's run"):
        _offset_data_summary(design, tmp_path / "wrong.csv", pd.DataFrame())
    with pytest.raises(KeyError):  # past the check: the summary needs the study's records, not the cells alone
        _offset_data_summary(design, tmp_path / "right.csv", pd.DataFrame())


def _flip_checks(c):
    """Every deterministic check's result turned to its other outcome."""
    c = copy.deepcopy(c)
    c["claim1"].update(zero_one_failures=1, squared_unbiased_cases=c["claim1"]["cases"])
    c["claim2"].update(max_kernel_error=1.0)
    for loss in ("hinge", "squared_hinge", "logistic"):
        c["claim3"][loss].update(not_unique=0, not_ordered_midpoints=0)
    c["appendix_thresholds"].update(not_increasing=0, equal_to_mean=0)
    c["claim4"].update(violations=0, violating_products=[], smallest=None, last_violating_t={},
                       holding_products=[1, 2, 3, 4, 5, 6])
    c["algorithm1"].update(printed_deviation=1e-9, shrink_deviation=0.0)
    c["assumption3"]["squared"] = None
    c["table1_space"].update(coefficients=[40, 40], per_iteration=[8.0, 4.0])
    return c


def _flip_facts(facts):
    """The dataset facts with Table 2's first dataset read from a file that disagrees with Table 2."""
    facts = facts.copy()
    facts.loc[0, ["source", "file", "rows", "features", "status", "reason"]] = ["mirror", "f", 1, 3, READ, ""]
    return facts


def test_every_check_flipped_flips_its_row(design, real_checks, summary, complexity):
    before = _ledger(design, real_checks, summary, complexity)
    after = _ledger(design, _flip_checks(real_checks), summary, complexity, facts=_flip_facts(FACTS))
    for row in ("1a", "1b", "2", "3", "3p", "4", "4p", "A1", "A3", "7s", "T2"):
        assert before[row].verdict != after[row].verdict, row
    assert after["4"].verdict == v.HOLDS and "no violation" in after["4"].evidence
    assert "Violated in 0/" in after["4"].evidence and "smallest" not in after["4"].evidence
    assert after["4p"].verdict == v.HOLDS and "Unproven" not in after["4p"].evidence
    assert "No violation of Assumption 3" in after["4p"].evidence
    assert "strictly increasing on every instance" in after["3p"].evidence
    assert "different objective" not in after["3p"].evidence
    assert "Unique and strictly ordered on every grid instance: hinge" in after["3"].evidence


def _with(summary, **columns):
    out = summary.copy()
    for name, value in columns.items():
        out[name] = value
    return out


def test_bound_rows_follow_the_premise(design, real_checks, summary, complexity):
    rows = ("5a", "5b", "6")
    exceeded = {f"{n}_class": "exceeded" for n in ("lemma1", "lemma3", "theorem1")}
    respected = {f"{n}_class": "respected" for n in ("lemma1", "lemma3", "theorem1")}
    premise_fails = _ledger(design, real_checks, _with(summary, assumption3_exceeded=True, **exceeded), complexity)
    counterexample = _ledger(design, real_checks, _with(summary, assumption3_exceeded=False, **exceeded), complexity)
    holds = _ledger(design, real_checks, _with(summary, assumption3_exceeded=False, **respected), complexity)
    # every committed cell's bound lies above the error of f = 0: a 'holds' there is uninformative
    vacuous = _ledger(design, real_checks, _with(summary, assumption3_exceeded=False, **respected), complexity)
    informative = {f"{n}_power": 0.5 for n in ("lemma1", "lemma3", "theorem1")}
    holds = _ledger(design, real_checks, _with(summary, assumption3_exceeded=False, **respected, **informative),
                    complexity)
    for row in rows:
        assert premise_fails[row].verdict == v.PREMISE_FAILS
        assert "No cell meets the premise" in premise_fails[row].evidence
        assert counterexample[row].verdict == v.FAILS
        assert "in 0/" in counterexample[row].evidence and "Cells meeting the premise: exceeded" in \
            counterexample[row].evidence
        assert holds[row].verdict == v.HOLDS and "Smallest lambda" not in holds[row].evidence
        assert vacuous[row].verdict == v.UNINFORMATIVE


def test_rate_classes_adjust_over_cells_and_set_transients_apart(design):
    criteria = design["rate"]["criteria"]
    slopes = {("A", 1.0, 1.5): -1.0, ("A", 1.0, 4.0): -0.5, ("B", 1.0, 1.5): -0.85, ("B", 0.5, 1.5): -3.0}
    records = rate_records(slopes)
    table = rate_classes(records, rate_problems(slopes), criteria).set_index(["instance", "lam", "theta_lam"])
    assert table.loc[("A", 1.0, 1.5), "rate_class"] == "consistent"
    assert table.loc[("A", 1.0, 4.0), "rate_class"] == "slower"
    assert table.loc[("B", 1.0, 1.5), "rate_class"] == "inconclusive"  # at the criterion's edge
    assert table.loc[("B", 0.5, 1.5), "rate_class"] == "consistent"  # steep, but no amplification: counted
    assert (table["n_fitted"] == 7).all()
    # Holm: every adjusted p-value is at least the raw one, over the 4 cells tested
    assert (table["holm_slower"] >= table["p_slower"]).all()
    transient = rate_classes(rate_records(slopes, peak=1e6), rate_problems(slopes), criteria)
    transient = transient.set_index(["instance", "lam", "theta_lam"])
    assert transient.loc[("B", 0.5, 1.5), "rate_class"] == "transient"
    assert np.isnan(transient.loc[("B", 0.5, 1.5), "holm_slower"])
    sparse = rate_classes(records[records["t"].isin([1, 10, 100, 500, 2000])], rate_problems(slopes), criteria)
    assert (sparse["rate_class"] == "too few checkpoints").all()


def test_rate_row_survives_every_outcome(design, real_checks, summary, complexity):
    # the inconclusive case: slopes of -1 measured too noisily to put inside the margin
    cases = {v.HOLDS: ({("A", 1.0, 1.5): -1.0, ("B", 1.0, 4.0): -1.05}, 0.05),
             v.FAILS: ({("A", 1.0, 1.5): -1.0, ("B", 1.0, 4.0): -0.4}, 0.05),
             v.INCONCLUSIVE: ({("A", 1.0, 1.5): -1.0, ("B", 1.0, 4.0): -1.0}, 2.0)}
    for expected, (slopes, noise) in cases.items():
        row = _ledger(design, real_checks, summary, complexity, rates=v2_rates(design, slopes, noise=noise))["6r"]
        assert row.verdict == expected, (expected, row.evidence)
        assert ("Slower, smallest lambda" in row.evidence) == (expected == v.FAILS)
        assert ("Inconclusive, smallest lambda" in row.evidence) == (expected == v.INCONCLUSIVE)
    only_transient = {("A", 0.5, 1.5): -3.0}
    row = _ledger(design, real_checks, summary, complexity, rates=v2_rates(design, only_transient, peak=1e6))["6r"]
    assert row.verdict == v.NOT_EVALUATED and "Transient (apart)" in row.evidence
    assert "still above it" in row.evidence


def test_rate_equivalence_classes_confirm_the_rate_and_set_transients_apart(design):
    slopes = {("A", 1.0, 1.5): -1.0, ("A", 1.0, 4.0): -0.5, ("B", 1.0, 1.5): -1.6, ("B", 1.0, 2.0): -0.8,
              ("B", 0.5, 1.5): -3.0, ("B", 1.0, 0.5): -1.0}
    table = v2_rates(design, slopes).set_index(["instance", "lam", "theta_lam"])
    assert table.loc[("A", 1.0, 1.5), "rate_class"] == "consistent"
    assert table.loc[("A", 1.0, 4.0), "rate_class"] == "slower"
    assert table.loc[("B", 1.0, 1.5), "rate_class"] == "faster"
    assert table.loc[("B", 1.0, 2.0), "rate_class"] == "inconclusive"  # on the margin's edge
    assert table.loc[("B", 1.0, 0.5), "rate_class"] == "outside range"
    assert (table["n_fitted"] == 12).all()
    # the interval the TOST reads: slope +- z_{1 - alpha} se
    z = 1.6448536269514722
    assert np.allclose(table["high"] - table["slope"], z * table["se"])
    transient = v2_rates(design, slopes, peak=1e6).set_index(["instance", "lam", "theta_lam"])
    assert transient.loc[("B", 0.5, 1.5), "rate_class"] == "transient"
    assert transient.loc[("B", 0.5, 1.5), "final_ratio"] > 0
    assert np.isnan(transient.loc[("B", 0.5, 1.5), "holm_slower"])
    sparse = rate_equivalence_classes(rate_records(slopes), rate_problems(slopes), design["v2"]["rate"]["criteria"])
    assert (sparse["rate_class"] == "too few checkpoints").all()


def test_rate_power_is_computed_from_the_design(design, real_checks, summary, complexity):
    """The CI design's 4 seeds cannot confirm O(1/t): its power says so; the committed design's can."""
    from qs3study.claims.rows.rate import rate_design_power

    small, _ = rate_design_power(design["v2"]["rate"])
    assert "below the required power" in small
    committed = load_design(ROOT / "workflow" / "config" / "theory.yaml")
    text, can_fail = rate_design_power(committed["v2"]["rate"])
    assert can_fail and "below the required power" not in text and "a factor 16" in text
    row = _ledger(design, real_checks, summary, complexity)["6r"]
    assert small in row.evidence


def test_complexity_row_follows_the_upper_bound(design, real_checks, summary, complexity):
    quadratic = complexity.copy()
    grow = quadratic["size"].astype(float)
    claimed = {name: value for name, value in design["complexity"]["criteria"]["claimed"].items()}
    quadratic["value"] = [1e-9 * n ** (claimed[s] if claimed[s] is not None else 1.0) for n, s
                          in zip(grow, quadratic["sweep"])]
    assert _ledger(design, real_checks, summary, quadratic)["7"].verdict == v.HOLDS
    faster = quadratic.copy()
    faster["value"] = faster["value"] * grow ** 1.0
    row = _ledger(design, real_checks, summary, faster)["7"]
    assert row.verdict == v.FAILS and "inconsistent" in row.evidence


def test_complexity_row_reads_memory_against_t_by_its_linear_growth(design, real_checks, summary, complexity):
    """Design v2: the engine's memory in t is a constant plus t D coefficients, read by a linear fit."""
    claimed = design["complexity"]["criteria"]["claimed"]
    base = complexity.copy()
    base["value"] = [1e-9 * float(n) ** (claimed[s] if claimed[s] is not None else 1.0)
                     for n, s in zip(base["size"], base["sweep"])]
    memory = base["sweep"] == "engine_memory_vs_t"

    def row(bytes_per_iteration):
        records = base.copy()
        records.loc[memory, "value"] = 15.0 + records.loc[memory, "size"] * bytes_per_iteration / 2**20
        return _ledger(design, real_checks, summary, records)["7"]

    flat, grows, between = row(0.0), row(128.0), row(64.0)
    assert flat.verdict == v.HOLDS and "does not grow vs O(Dn)" in flat.evidence
    assert grows.verdict == v.FAILS and "grows as expected vs O(Dn)" in grows.evidence
    assert between.verdict == v.INCONCLUSIVE and "64 bytes per iteration" in between.evidence
    assert "linear fit" in grows.check


def test_linear_growth_matches_a_direct_least_squares_fit():
    rng = np.random.default_rng(4)
    sizes = np.repeat([100, 200, 400, 800, 1600, 3200], 2)
    values = 3.0 + 0.5 * sizes + rng.normal(0, 5.0, sizes.size)
    slope, low, high = linear_growth(sizes, values, confidence=0.95)
    assert np.isclose(slope, np.polyfit(sizes, values, 1)[0])
    assert low < slope < high and low < 0.5 < high
    assert all(np.isnan(linear_growth([1, 2], [1.0, 2.0], confidence=0.95)))


def test_huber_rows_test_the_theorem_where_its_premise_holds(design, real_checks, summary, complexity):
    ledger = _ledger(design, real_checks, summary, complexity)
    for row in ("H5a", "H5b", "H6", "H6r"):
        assert row in ledger and "Huberised" in ledger[row].claim
    exceeded = _with(summary, theorem1_class="exceeded")
    criteria = design["v2"]["complexity"]["criteria"]
    claims = build_claims(
        checks=real_checks, summary=exceeded.assign(assumption3_exceeded=True),
        rates=v2_rates(design, {("A", 1.0, 1.5): -1.0}),
        huber_informative_summary=exceeded.assign(assumption3_exceeded=False), huber_rates=rate_classes(
            rate_records({("A", 1.0, 1.5): -1.0}), rate_problems({("A", 1.0, 1.5): -1.0}), design["rate"]["criteria"]),
        design=design, exponents=exponents_of(complexity, criteria["confidence"]),
        local_exponents=local_exponents_of(complexity),
        tail_exponents=tail_exponents_of(complexity, tail=criteria["tail"], confidence=criteria["confidence"]),
        memory_growth=growth_of(complexity, design),
        empirical=None, empirical_reason="-", dataset_facts=FACTS, **_offset_data(summary))
    rows = {c.id: c for c in claims}
    assert rows["6"].verdict == v.PREMISE_FAILS and rows["H6"].verdict == v.FAILS
    assert rows["H6r"].verdict == v.HOLDS


def _sweeps_of(design, exponent_of):
    """Synthetic complexity records at the design's sizes: cost = size^exponent_of(sweep), three repeats."""
    spec = design["complexity"]
    return pd.DataFrame([{"sweep": name, "size_name": "n", "size": size, "quantity": "cpu_seconds", "repeat": r,
                          "value": 1e-9 * float(size) ** exponent_of(name) * (1.0 + 0.01 * r)}
                         for name, sizes in spec["sizes"].items() for size in sizes for r in range(3)])


def test_complexity_row_aggregates_the_baselines_and_the_operation_counts(design, real_checks, summary):
    claimed = design["complexity"]["criteria"]["claimed"]
    assert {"samult_time_vs_n", "pnu_auc_time_vs_n", "samult_operations_vs_n"} <= set(claimed)

    def bound(name):
        return claimed[name] if claimed[name] is not None else 1.0

    row = _ledger(design, real_checks, summary, _sweeps_of(design, bound))["7"]
    assert row.verdict == v.HOLDS and "samult_operations_vs_n" in row.evidence
    assert "CPU seconds" in row.check and "1 thread" in row.check
    # one baseline growing faster than its O(n^3) fails the row on its own
    faster = _ledger(design, real_checks, summary,
                     _sweeps_of(design, lambda name: bound(name) + (1.0 if name == "pnu_auc_time_vs_n" else 0.0)))["7"]
    assert faster.verdict == v.FAILS and "pnu_auc_time_vs_n" in faster.evidence.split("inconsistent")[0]


def test_complexity_data_must_be_the_designs_run(design, tmp_path):
    from qs3study.claims.assemble import read_complexity

    records = _sweeps_of(design, lambda name: 1.0)
    records.to_csv(tmp_path / "complexity.csv", index=False)
    assert len(read_complexity(design, tmp_path / "complexity.csv")) == len(records)
    records[records["sweep"] != "samult_time_vs_n"].to_csv(tmp_path / "missing.csv", index=False)
    with pytest.raises(ValueError, match="samult_time_vs_n"):
        read_complexity(design, tmp_path / "missing.csv")
    records[records["size"] != records["size"].max()].to_csv(tmp_path / "sizes.csv", index=False)
    with pytest.raises(ValueError, match="not this design's run"):
        read_complexity(design, tmp_path / "sizes.csv")


def test_row_2_reads_the_same_for_errors_that_differ_in_their_rounding_digits():
    """The committed ledger was assembled with 2.2e-16 on one CPU and 3.3e-16 on another: the row must not differ."""
    c2 = {"max_kernel_error": 3.3e-16, "printed_scaling_gap": -0.5, "ks_pvalue": 0.58, "n_frequency_draws": 12800}
    one, other = (row_2({**c2, "max_gradient_error": e}, 1e-10) for e in (2.2e-16, 3.3e-16))
    assert one == other
    assert "max |E[zeta] - xi| < 1e-15" in one.evidence
    assert "< 1e-9" in row_2({**c2, "max_gradient_error": 2e-10}, 1e-10).evidence
