"""Whether a rerun reproduces a committed results table bit for bit, on the datasets it ran.

    python -m qs3study.tools.results_diff RERUN_RESULTS COMMITTED_RESULTS

A rerun of a committed reproduction on some of its datasets (``select:``, in a
clone at a later commit, say after an engine change meant to change no bit) is
compared row by row with the committed rows of the same datasets.  Every column
that the configuration and the code determine (all but the machine's
measurements, :data:`qs3study.stages.tables.MEASUREMENT_COLUMNS`, and ``versions``,
the environment's package versions) must be equal, floats bit for bit (NaN
equal to NaN), and both tables must hold the same rows.  Prints the number of
differing rows per column and the first differences; the exit status is 1 when
anything differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from qs3study.stages.tables import COLUMNS, KEY_COLUMNS, MEASUREMENT_COLUMNS, read_results

__all__ = ["COMPARED_COLUMNS", "results_diff", "main"]

#: The columns a rerun must reproduce.
COMPARED_COLUMNS = [c for c in COLUMNS if c not in KEY_COLUMNS + MEASUREMENT_COLUMNS + ["versions"]]


def results_diff(rerun, committed):
    """Compare the rerun's rows with the committed rows of the rerun's datasets.

    Parameters
    ----------
    rerun, committed : pandas.DataFrame
        Results tables (:func:`qs3study.stages.tables.read_results`).

    Returns
    -------
    counts : pandas.Series
        Per compared column, the number of rows present in both whose values differ.
    differences : pandas.DataFrame
        Those rows: the key columns, ``column``, ``committed`` and ``rerun``.
    unmatched : pandas.DataFrame
        Key columns and ``side`` ("rerun only" or "committed only") of rows without a partner.

    Raises
    ------
    ValueError
        If a table repeats a key or lacks a compared column, or the rerun has no rows or no dataset of
        the committed table (nothing would be compared).
    """
    for name, table in (("rerun", rerun), ("committed", committed)):
        missing = [c for c in KEY_COLUMNS + COMPARED_COLUMNS if c not in table]
        if missing:
            raise ValueError(f"the {name} table lacks the columns {missing}")
        if table.duplicated(KEY_COLUMNS).any():
            raise ValueError(f"the {name} table repeats the keys {KEY_COLUMNS}")
    if rerun.empty:
        raise ValueError("the rerun table has no rows: nothing to compare")
    shared = committed["dataset"].isin(rerun["dataset"].unique())
    if not shared.any():
        raise ValueError(f"the committed table holds no dataset of the rerun's "
                         f"({', '.join(map(str, sorted(rerun['dataset'].unique())))}): nothing to compare")
    committed = committed[shared]
    both = committed.merge(rerun, on=KEY_COLUMNS, how="outer", suffixes=("_committed", "_rerun"), indicator=True)
    unmatched = both.loc[both["_merge"] != "both", KEY_COLUMNS + ["_merge"]].rename(columns={"_merge": "side"})
    unmatched["side"] = unmatched["side"].map({"left_only": "committed only", "right_only": "rerun only"})
    both = both[both["_merge"] == "both"]
    counts, differences = {}, []
    for column in COMPARED_COLUMNS:
        old, new = both[f"{column}_committed"], both[f"{column}_rerun"]
        differ = ~((old == new) | (old.isna() & new.isna()))
        counts[column] = int(differ.sum())
        if differ.any():
            rows = both.loc[differ, KEY_COLUMNS].assign(column=column, committed=old[differ], rerun=new[differ])
            differences.append(rows)
    differences = (pd.concat(differences, ignore_index=True) if differences
                   else pd.DataFrame(columns=KEY_COLUMNS + ["column", "committed", "rerun"]))
    return pd.Series(counts, name="differing rows"), differences, unmatched.reset_index(drop=True)


def main(argv=None):
    """Command-line entry point: print the comparison; 0 if the rerun reproduces the committed rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rerun", type=Path, help="results.csv of the rerun")
    parser.add_argument("committed", type=Path, help="the committed results.csv")
    args = parser.parse_args(argv)
    rerun, committed = read_results(args.rerun), read_results(args.committed)
    try:
        counts, differences, unmatched = results_diff(rerun, committed)
    except ValueError as error:
        print(f"results_diff {args.rerun} {args.committed}: {error}", file=sys.stderr)
        return 1
    datasets = sorted(rerun["dataset"].unique())
    print(f"{len(rerun)} rerun rows of {len(datasets)} datasets ({', '.join(datasets)}) against the committed "
          f"rows of the same datasets; {len(COMPARED_COLUMNS)} columns compared bit for bit")
    print(counts.to_string())
    if len(unmatched):
        print(f"\n{len(unmatched)} rows without a partner:\n{unmatched.head(20).to_string(index=False)}")
    if len(differences):
        print(f"\nfirst differences:\n{differences.head(20).to_string(index=False)}")
    same = not len(unmatched) and not len(differences)
    print("reproduced bit for bit" if same else "NOT reproduced")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
