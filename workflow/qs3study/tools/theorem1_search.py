"""Where Theorem 1's bound is below the error of f = 0, in the huber section's setting.

    python -m qs3study.tools.theorem1_search [--design workflow/config/theory.yaml]
        [--out workflow/config/theorem1_search.csv]

Evaluates :func:`qs3study.theory.bound_ratio.bound_ratio_grid` on the grid of
the design's ``v2.theorem1_search`` (lambda, theta * lambda, t) for the
convergence section's instances with the huber section's loss (``f*`` solved
exactly for every lambda of the grid), writes the table and prints the finding:
the informative settings inside Lemma 2's stated range, or the smallest ratio
reached there. No stochastic run: the bound is a closed form.
"""

from __future__ import annotations

import argparse
import copy

from qs3study.claims.design import load_design, require
from qs3study.claims.studies import build_huber_problems
from qs3study.files import write_frame
from qs3study.theory.bound_ratio import bound_ratio_grid

__all__ = ["search"]


def search(design):
    """The bound-ratio table on the design's ``v2.theorem1_search`` grid."""
    grid = require(design, "v2.theorem1_search")
    spec = copy.deepcopy(design)
    spec["huber"]["lambdas"] = list(grid["lambdas"])
    _, problems = build_huber_problems(spec)
    return bound_ratio_grid(problems, grid["theta_lams"], grid["t_values"])


def finding(table):
    """One line per instance: the informative settings in Lemma 2's range, or the smallest ratio there."""
    lines = []
    for instance, rows in table[table["in_domain"]].groupby("instance", sort=True):
        below = rows[rows["ratio"] < 1.0]
        best = rows.loc[rows["ratio"].idxmin()]
        where = f"lambda {best['lam']:g}, theta*lambda {best['theta_lam']:g}, t {best['t']}"
        if below.empty:
            lines.append(f"{instance}: none within the stated range; smallest ratio {best['ratio']:.3g} at {where}")
            continue
        first = below.loc[below["informative_from"].idxmin()]
        lines.append(f"{instance}: bound below the error of f = 0 in {len(below)} of {len(rows)} grid points; "
                     f"smallest ratio {best['ratio']:.3g} at {where}; earliest from t = {first['informative_from']} "
                     f"(lambda {first['lam']:g}, theta*lambda {first['theta_lam']:g})")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", default="workflow/config/theory.yaml")
    parser.add_argument("--out", default="workflow/config/theorem1_search.csv")
    args = parser.parse_args(argv)
    table = search(load_design(args.design))
    write_frame(args.out, table, index=False, float_format="%.6g")
    print("\n".join(finding(table)))


if __name__ == "__main__":
    main()
