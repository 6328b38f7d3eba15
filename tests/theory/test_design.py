"""The design file is the only place the theory studies' settings live."""

import ast
import copy
import pathlib

import pytest
import yaml

from qs3study.claims import design as design_module
from qs3study.claims.studies import build_cells

ROOT = pathlib.Path(__file__).resolve().parents[2]
DESIGN = ROOT / "workflow" / "config" / "theory.yaml"
CI_DESIGN = ROOT / "tests" / "theory" / "design_ci.yaml"
# Modules that run the studies or decide verdicts from them: they take every number from the design.
SETTING_FREE = [*sorted((ROOT / "workflow" / "scripts").glob("theory_*.py")),
                ROOT / "workflow" / "qs3study" / "claims" / "studies.py",
                ROOT / "workflow" / "qs3study" / "claims" / "summary.py",
                ROOT / "workflow" / "qs3study" / "claims" / "design.py"]
#: Literals that are arithmetic, not settings (indices, halves of an interval).
ARITHMETIC = {0, 1, 2}


def _keys(node, prefix=""):
    if isinstance(node, dict):
        out = set()
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            # instance names, sweep names and schedules are data, not structure
            out |= {path} | (set() if key in ("instances", "sizes", "claimed", "schedules", "history", "protocols")
                             else _keys(value, path))
        return out
    return set()


@pytest.mark.parametrize("path", SETTING_FREE, ids=lambda p: p.name)
def test_study_code_has_no_numeric_settings(path):
    literals = [node.value for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool) and node.value not in ARITHMETIC]
    assert literals == [], f"{path.name} holds numbers that belong in the design: {literals}"


def test_theory_quantity_modules_declare_no_criteria():
    """The criteria that lived in qs3study.theory (SLOPE_TOLERANCE, EXPONENT_TOLERANCE, ...) are gone."""
    for name in ("convergence", "complexity"):
        tree = ast.parse((ROOT / "workflow" / "qs3study" / "theory" / f"{name}.py").read_text())
        numeric = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                   if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant)
                   and isinstance(node.value.value, (int, float))]
        assert numeric == [], f"workflow/qs3study/theory/{name}.py declares settings {numeric}"


def test_committed_design_loads_and_ci_design_has_its_structure():
    design = design_module.load_design(DESIGN)
    ci = design_module.load_design(CI_DESIGN)
    assert _keys(design) == _keys(ci)
    assert design["convergence"]["primary"] == {"batch_size": 1, "n_components": 1}
    lambdas = design["convergence"]["lambdas"]
    assert min(lambdas) <= 2 ** -5 and max(lambdas) >= 2 ** 3
    products = design["convergence"]["theta_lams"]
    assert any(1 < c < 2 for c in products) and any(c == int(c) for c in products)
    assert any(not (1 < c < 2 or c == int(c)) for c in products)
    assert len(design["convergence"]["instances"]) >= 2
    for sizes in design["complexity"]["sizes"].values():
        assert len(sizes) >= 6 and max(sizes) / min(sizes) >= 10 ** 1.5
    assert design["complexity"]["repeats"] >= 2
    assert any("10 to 30" in str(h["change"]) or "10 seeds" in str(h["change"]) for h in design["history"])


@pytest.mark.parametrize("key", design_module.REQUIRED[::5])
def test_a_missing_setting_is_an_error_not_a_default(tmp_path, key):
    design = yaml.safe_load(DESIGN.read_text())
    parent = design
    for part in key.split(".")[:-1]:
        parent = parent[part]
    del parent[key.split(".")[-1]]
    broken = tmp_path / "design.yaml"
    broken.write_text(yaml.safe_dump(design))
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        design_module.load_design(broken)


def test_the_cells_follow_the_design():
    design = design_module.load_design(CI_DESIGN)
    from qs3study.claims.studies import build_problems

    problems, table = build_problems(design)
    conv = design["convergence"]
    cells = build_cells(design, problems)
    expected = (len(conv["instances"]) * len(conv["lambdas"]) * len(conv["theta_lams"]) * len(conv["schedules"])
                + len(conv["instances"]) * len(conv["secondary"]["lambdas"]) * len(conv["secondary"]["theta_lams"]))
    assert len(cells) == expected and len(table) == len(conv["instances"]) * len(conv["lambdas"])
    changed = copy.deepcopy(design)
    changed["convergence"]["theta_lams"] = conv["theta_lams"][:1]
    assert len(build_cells(changed, problems)) < expected
    auto = [c for c in cells if c["schedule"] == "offset_auto"]
    assert auto and all(c["step_offset"] > 0 for c in auto)
