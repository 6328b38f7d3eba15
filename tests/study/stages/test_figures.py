"""Figure 2 marks every failed or budget-stopped point and stays legible; the report holds its configuration's
outputs."""

import tomllib
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from qs3study.stages import figures

REPO = Path(__file__).resolve().parents[3]


def _drawn(monkeypatch):
    drawn = {}
    monkeypatch.setattr(figures, "save", lambda fig, paths: drawn.setdefault("fig", fig))
    return drawn


def test_figure_2_marks_every_failed_or_budget_stopped_point(monkeypatch, tmp_path):
    drawn = _drawn(monkeypatch)
    rows = [("a", "100", 100, "ok", 1.0), ("a", "200", 200, "ok", 2.0), ("a", "400", 400, "failed", None),
            ("b", "100", 100, "ok", 1.5), ("b", "200", 200, "out_of_memory_budget", None),
            ("b", "400", 400, "out_of_memory_budget", None),
            ("c", "100", None, "failed", None),  # failed before its split: placed at its size
            ("c", "all", None, "failed", None),  # placed at the largest pool of the panel
            ("a", "800", None, "beyond_pool", None)]  # not run: not drawn
    table = pd.DataFrame(rows, columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A", "b": "B", "c": "C"}, [tmp_path / "f.png"])
    ax = drawn["fig"].axes[0]
    marks = {(line.get_marker(), x) for line in ax.get_lines() if line.get_transform() != ax.transData
             for x in line.get_xdata()}
    assert marks == {("v", 400), ("x", 200), ("x", 400), ("v", 100)}
    # Before the fix no failed point was drawn at all, and only the first budget stop of a method.
    assert not any(800 in np.atleast_1d(line.get_xdata()) for line in ax.get_lines())
    matplotlib.pyplot.close(drawn["fig"])


def test_figure_2_when_every_sweep_point_failed_says_so(monkeypatch, tmp_path):
    drawn = _drawn(monkeypatch)
    table = pd.DataFrame([("a", "100", 100, "failed", None), ("a", "200", None, "failed", None)],
                         columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A"}, [tmp_path / "f.png"])
    drawn["fig"].canvas.draw()
    assert "no finished run" in drawn["fig"].axes[0].get_title()
    matplotlib.pyplot.close(drawn["fig"])


def test_figure_2_every_point_failed_writes_a_file(tmp_path):
    table = pd.DataFrame([("a", "100", 100, "failed", None)],
                         columns=["method", "size", "n_unlabeled", "status", "fit_time"]).assign(dataset="d")
    figures.time_vs_unlabeled(table, ["d"], {"a": "A"}, [tmp_path / "f.png"])
    assert (tmp_path / "f.png").stat().st_size > 0


def test_figure_2_ticks_titles_and_markers_stay_legible(monkeypatch, tmp_path):
    drawn = _drawn(monkeypatch)
    rows = [(m, str(n), n, "ok", 0.1 * n / 2000) for m in "abcde" for n in (2000, 3000, 4000)]
    rows += [(m, str(n), n, "ok", 1.0) for m in "abcde" for n in (1000, 5000, 6408)]
    table = pd.DataFrame(rows, columns=["method", "size", "n_unlabeled", "status", "fit_time"])
    table["dataset"] = np.where(table["n_unlabeled"].isin([2000, 3000, 4000]), "d", "e")
    title = "a rather long dataset title (substitute of a paper dataset)"
    figures.time_vs_unlabeled(table, ["d", "e"], {m: m.upper() for m in "abcde"}, [tmp_path / "f.png"],
                              {"d": title, "e": title})
    fig = drawn["fig"]
    fig.canvas.draw()
    for ax in fig.axes[:2]:
        labels = [t for t in ax.get_xticklabels() if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0]
                  <= ax.get_xlim()[1]]
        boxes = [t.get_window_extent() for t in labels]
        assert len(boxes) >= 2 and all(not a.overlaps(b) for a, b in zip(boxes, boxes[1:]))
    assert not fig.axes[0].title.get_window_extent().overlaps(fig.axes[1].title.get_window_extent())
    styles = figures.method_styles(list("abcdefghij"))
    assert not {s["marker"] for s in styles.values()} & set(figures.UNFINISHED.values())
    matplotlib.pyplot.close(fig)


def test_the_report_holds_the_results_claims_and_manifest_of_its_configuration():
    rules = (REPO / "workflow" / "rules" / "figures.smk").read_text()
    for output in ('report(f"{FIGURES}/results.csv"', 'report(f"{FIGURES}/empirical_claims.csv"',
                   'report(f"{FIGURES}/manifest.json"'):
        assert output in rules
    text = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    assert "figures/manifest.json" not in text and 'figures/{{ snakemake.config["name"] }}/manifest.json' in text
    workflow_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["workflow"]
    assert any(requirement.startswith("pygments") for requirement in workflow_extra)
