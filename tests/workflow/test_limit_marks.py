"""Tuned values on a search limit are marked apart from settled widenings and from natural-bound hits."""

import pandas as pd
import pytest

from qs3study.kernel_width import edge_kind, grid_edges, settled_edges, warning_kinds
from qs3study.stages import tables


@pytest.mark.parametrize("params, grid, kinds", [
    ({"tradeoff": [1.0, 0.0, 0.5]}, {"tradeoff": (0.0, 0.5, 1.0)}, ["natural bound", "natural bound"]),
    ({"pnu_mix": -1.0}, {"pnu_mix": (-1.0, 0.0, 1.0)}, ["natural bound"]),
    ({"l2_regularization": 0.0}, {"l2_regularization": (0.0, 1.0, 10.0)}, ["natural bound"]),
    ({"l2_regularization": 10.0}, {"l2_regularization": (0.0, 1.0, 10.0)}, ["search limit"]),
    ({"gamma": 0.125, "lam": 8.0}, {"gamma": (0.125, 1.0, 8.0), "lam": (0.125, 1.0, 8.0)},
     ["search limit", "search limit"]),
    # a trade-off grid that stops inside the domain: its edge is a search limit
    ({"tradeoff": 0.9}, {"tradeoff": (0.1, 0.5, 0.9)}, ["search limit"]),
])
def test_each_grid_edge_warning_is_read_as_its_kind(params, grid, kinds):
    assert [edge_kind(w) for w in grid_edges(params, grid)] == kinds


def test_a_row_on_some_search_limit_is_not_also_natural_and_other_warnings_stay_apart():
    limit = "tuning grid edge: gamma = 64 is the largest value of its grid (0.125 .. 64)"
    natural = "tuning grid edge: tradeoff[1] = 1 is the largest value of its grid (0 .. 1)"
    fit = "ConvergenceWarning: the risk still moved (max_iter=32000); history 1, 2"
    assert warning_kinds(f"{limit}; {natural}") == {"search limit"}
    assert warning_kinds(f"{natural}; {natural}") == {"natural bound"}
    assert warning_kinds(f"{natural}; {fit}") == {"natural bound", "other"}
    assert warning_kinds("") == set() and edge_kind(fit) is None


def test_settled_marks_only_the_search_limit_hits_of_widened_parameters():
    edges = grid_edges({"gamma": 2.0 ** -12, "lam": 8.0, "tradeoff": [1.0, 0.5]},
                       {"gamma": (2.0 ** -12, 1.0, 8.0), "lam": (0.125, 1.0, 8.0), "tradeoff": (0.0, 0.5, 1.0)})
    marked = settled_edges(edges, {"gamma": (-12, 6)}, 0.0004, 0.001)
    assert [edge_kind(w) for w in marked] == ["settled", "search limit", "natural bound"]
    assert "moved the best CV AUC by +0.0004, less than widen_tolerance 0.001" in marked[0]
    assert warning_kinds("; ".join(marked)) == {"search limit"}
    assert warning_kinds("; ".join(marked[::2])) == {"settled"}
    with pytest.raises(ValueError, match="below the widen_tolerance"):
        settled_edges(edges, {"gamma": (-12, 6)}, 0.001, 0.001)


def test_the_auc_table_counts_and_marks_each_kind():
    natural = "tuning grid edge: tradeoff[1] = 1 is the largest value of its grid (0 .. 1)"
    limit = "tuning grid edge: lam = 9.53674e-07 is the smallest value of its grid (9.53674e-07 .. 8)"
    settled = ("tuning grid edge: gamma = 0.000244141 is the smallest value of its grid (0.000244141 .. 0.125) "
               "(widening settled: the last round moved the best CV AUC by +0.0002, less than widen_tolerance 0.001)")
    warnings = [f"{natural}", f"{natural}; {limit}", "UserWarning: x", "", f"{settled}; {natural}"]
    rows = [{"dataset": "d", "method": m, "trial": t, "auc": 0.8 - t / 100, "size": "all", "comparison": True,
             "n_unlabeled": 100, "status": "ok", "mae": 0.5, "accuracy": 0.6, "warnings": warnings[t] if m == "b" else ""}
            for t in range(5) for m in ("a", "b")]
    summary = tables.auc_summary(pd.DataFrame(rows), "a", ["a", "b"]).set_index("method")
    counts = summary.loc["b", ["n_warnings", "n_search_limit", "n_settled", "n_natural_bound",
                               "n_other_warnings"]].tolist()
    assert counts == [4, 1, 1, 1, 1]
    assert summary.loc["a", "n_warnings"] == 0
    text = tables.summary_markdown(summary.reset_index(), "a", {"a": "A", "b": "B"})
    line = text.splitlines()[2]
    assert "[1 on a search limit] [1 on a settled edge] [1 on a natural bound] [1 warned]" in line
    assert "[n on a search limit]" in text and "[n on a settled edge]" in text and "[n on a natural bound]" in text
