"""The generated blocks of README.md and docs/*.md: current on the repository, stale when an input changes."""

import doctest
import shutil
from pathlib import Path

import pandas as pd
import pytest

from qs3study.tools import documents

REPO = Path(__file__).resolve().parents[3]


def test_committed_documents_are_current(capsys):
    """Fails when a committed output changed without ``python -m qs3study.tools.documents`` being run."""
    assert documents.main(["--check", "--root", str(REPO)]) == 0, capsys.readouterr().err


def test_every_renderer_is_used_and_every_block_named():
    used = {name for path in documents.documents(REPO) for name in documents.MARKER.findall(path.read_text())}
    assert used == set(documents.RENDERERS)


@pytest.fixture
def copy(tmp_path):
    """The documents and the committed outputs they are rendered from, in a scratch repository."""
    for path in documents.documents(REPO):
        target = tmp_path / path.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    shutil.copytree(REPO / "figures", tmp_path / "figures", ignore=shutil.ignore_patterns("*.png", "*.pdf"))
    return tmp_path


def test_a_changed_verdict_makes_its_block_stale(copy, capsys):
    ledger = copy / "figures" / "theory" / "claims_ledger.csv"
    text = ledger.read_text()
    row = next(line for line in text.splitlines() if line.startswith("8d-best,"))
    assert ",holds," in row
    ledger.write_text(text.replace(row, row.replace(",holds,", ",fails,", 1)))

    assert documents.main(["--check", "--root", str(copy)]) == 1
    stale = capsys.readouterr().err
    assert "README.md: claims-empirical" in stale and "docs/claims.md: claims-empirical" in stale
    assert "auc-summary" not in stale and "claims-formal" not in stale

    assert documents.main(["--root", str(copy)]) == 0
    assert "| 8d | the exact baselines run out of memory on the larger sets | holds | fails |" in (
        copy / "README.md").read_text()
    assert documents.main(["--check", "--root", str(copy)]) == 0


def test_a_changed_auc_makes_the_summary_stale(copy):
    table = copy / "figures" / "reproduction-paper" / "auc_table.csv"
    lines = table.read_text().splitlines(keepends=True)
    header = lines[0].split(",")
    index = next(i for i, line in enumerate(lines) if line.startswith("sgemm,qs3orao,"))
    cells = lines[index].split(",")
    cells[header.index("auc_mean")] = "0.5"
    lines[index] = ",".join(cells)
    table.write_text("".join(lines))
    _, stale = documents.rewrite((copy / "README.md").read_text(), copy)
    assert stale == ["auc-summary"]


def test_the_summary_counts_unconverged_trials_beside_their_mean(copy):
    table_path = copy / "figures" / "reproduction-best" / "auc_table.csv"
    table = pd.read_csv(table_path)
    cell = (table["dataset"] == "uci_elevators") & (table["method"] == "qs3orao")
    assert table.loc[cell, "n_unconverged"].eq(0).all()
    table.loc[cell, "n_unconverged"] = 3
    table.to_csv(table_path, index=False)
    row = next(line for line in documents.auc_summary(copy).splitlines() if line.startswith("| uci_elevators |"))
    assert row.endswith(f"| {table.loc[cell, 'auc_mean'].iloc[0]:.3f} [3 of 10 unconverged] |")


@pytest.mark.parametrize(("output", "column", "block", "cell"),
                         [("convergence_audit.csv", "converged", "convergence-audit", "| {} of "),
                          ("convergence_audit_warmup.csv", "unconverged_x16", "convergence-warmup", "| {} |")])
def test_a_changed_audit_output_makes_its_block_stale(copy, output, column, block, cell):
    path = copy / "figures" / "reproduction-best" / output
    table = pd.read_csv(path)
    table.loc[0, column] += 1
    table.to_csv(path, index=False)
    new, stale = documents.rewrite((copy / "docs" / "claims.md").read_text(), copy)
    assert stale == [block]
    assert cell.format(table.loc[0, column]) in new


def test_text_outside_the_blocks_is_kept():
    text = "before\n<!-- generated:tuning-check -->\nold\n<!-- /generated:tuning-check -->\nafter 1.0\n"
    new, stale = documents.rewrite(text, REPO)
    assert stale == ["tuning-check"]
    assert new.startswith("before\n<!-- generated:tuning-check -->\n| method |")
    assert new.endswith("<!-- /generated:tuning-check -->\nafter 1.0\n")
    assert documents.rewrite(new, REPO) == (new, [])


@pytest.mark.parametrize("text, message", [
    ("<!-- generated:nothing -->\n<!-- /generated:nothing -->\n", "no renderer"),
    ("<!-- generated:tuning-check -->\nno end\n", "do not pair up"),
    ("<!-- generated:tuning-check -->\n<!-- /generated:run-costs -->\n", "do not pair up"),
])
def test_bad_markers_are_errors(text, message):
    with pytest.raises(ValueError, match=message):
        documents.rewrite(text, REPO)


def test_pipes_in_a_cell_stay_in_the_cell():
    assert documents.markdown_table(["a"], [["|x|"]]).splitlines()[-1] == "| \\|x\\| |"


def test_the_scale_table_names_the_fastest_method_to_the_target_or_none(copy):
    table_path = copy / "figures" / "scale-paper" / "time_at_accuracy.csv"
    table = pd.read_csv(table_path)
    cell = (table["dataset"] == "sgemm") & (table["n_unlabeled"] == 20000)
    exact = cell & table["method"].isin(["m-pnu-auc", "m-samult"])
    assert table.loc[cell & table["reached"], "method"].nunique() > 1
    table.loc[cell & ~exact, "reached"] = False
    table.loc[cell & (table["method"] == "m-pnu-auc"), "median_fit_time"] = 7.0
    table.loc[cell & (table["method"] == "m-samult"), ["reached", "median_fit_time"]] = [True, 3.0]
    table.to_csv(table_path, index=False)
    rows = {line.split(" | ")[2]: line for line in documents.scale_time_at_accuracy(copy).splitlines()
            if line.startswith("| `scale-paper` | sgemm |")}
    assert " | M-SAMULT, 3 s | " in rows["20,000"]
    assert "| 3 s, " in rows["20,000"] and "(short by" not in rows["20,000"].split(" | ")[-1]

    table.loc[cell, "reached"] = False
    table.to_csv(table_path, index=False)
    rows = {line.split(" | ")[2]: line for line in documents.scale_time_at_accuracy(copy).splitlines()
            if line.startswith("| `scale-paper` | sgemm |")}
    assert " | none | " in rows["20,000"]
    assert len(rows) == table.loc[table["dataset"] == "sgemm", "n_unlabeled"].nunique()


def test_the_docstring_examples_run():
    result = doctest.testmod(documents)
    assert result.attempted >= 2 and result.failed == 0
