"""Does tuning once per dataset move the AUC table less than the trial-to-trial spread?

    python -m qs3study.tuning_check ONCE_AUC_TABLE PER_TRIAL_AUC_TABLE --dataset NAME

Compares two AUC tables (:func:`qs3study.tables.auc_summary` CSVs) of the same
dataset, trials and splits: one tuned once per dataset, one tuned per trial
(``workflow/config/reproduction-tuning-check.yaml``). For every method the
change of the mean AUC must be smaller than the per-trial run's standard
deviation over trials. Prints one line per method and the verdict; exits 0
when it holds, 1 when it fails, 2 when the tables cannot be compared.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

__all__ = ["compare"]


def compare(once, per_trial, dataset):
    """Per method: ``mean_once``, ``mean_per_trial``, ``change``, ``spread`` (per-trial SD) and ``within``.

    Raises
    ------
    ValueError
        If ``dataset`` is missing from either table or no method has both means and a spread.
    """
    rows = []
    for name, table in (("once", once), ("per_trial", per_trial)):
        if dataset not in set(table["dataset"]):
            raise ValueError(f"dataset {dataset!r} is not in the {name} table")
    a = once[once["dataset"] == dataset].set_index("method")
    b = per_trial[per_trial["dataset"] == dataset].set_index("method")
    for method in a.index.intersection(b.index):
        change = abs(a.loc[method, "auc_mean"] - b.loc[method, "auc_mean"])
        spread = b.loc[method, "auc_std"]
        if pd.isna(change) or pd.isna(spread):
            continue
        rows.append({"method": method, "mean_once": a.loc[method, "auc_mean"],
                     "mean_per_trial": b.loc[method, "auc_mean"], "change": change, "spread": spread,
                     "within": bool(change < spread)})
    if not rows:
        raise ValueError(f"no method of {dataset!r} has a mean in both tables and a spread over trials")
    return pd.DataFrame(rows)


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("once")
    parser.add_argument("per_trial")
    parser.add_argument("--dataset", required=True)
    args = parser.parse_args(argv)
    try:
        result = compare(pd.read_csv(args.once), pd.read_csv(args.per_trial), args.dataset)
    except ValueError as error:
        print(f"cannot compare: {error}")
        return 2
    print(result.to_string(index=False, float_format="%.4f"))
    holds = bool(result["within"].all())
    print(f"verdict: {'holds' if holds else 'fails'} (change of mean AUC < trial-to-trial SD for "
          f"{int(result['within'].sum())}/{len(result)} methods)")
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
