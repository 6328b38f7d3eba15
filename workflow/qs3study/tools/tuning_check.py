"""Does tuning once per dataset move the AUC table less than the trial-to-trial spread?

    python -m qs3study.tools.tuning_check ONCE_RESULTS PER_TRIAL_RESULTS --dataset NAME

Compares two tidy results tables (``results.csv`` of :func:`qs3study.stages.tables.build_results`)
of the same dataset, seeds and splits: one tuned once per dataset, one tuned per
trial (``workflow/config/reproduction-tuning-check.yaml``). Only the comparison
rows that finished in both runs are used, matched by method and trial, so that
a run with fewer trials is compared on the trials it has. For every method the
change of the mean AUC must be smaller than the per-trial run's standard
deviation over those trials. Prints one line per method and the verdict; exits
0 when it holds, 1 when it fails, 2 when the tables cannot be compared.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from qs3study.files import write_frame
from qs3study.stages.tables import finished_comparison, one_draw, read_results

__all__ = ["compare"]


def _finished(results, dataset):
    rows = finished_comparison(results)
    return rows[rows["dataset"] == dataset].set_index(["method", "trial"])["auc"]


def compare(once, per_trial, dataset):
    """Per method: ``n_trials``, ``mean_once``, ``mean_per_trial``, ``change``, ``spread`` and ``within``.

    ``spread`` is the per-trial run's standard deviation (ddof 1) over the shared trials.

    Raises
    ------
    ValueError
        If ``dataset`` is missing from either table or no method has two shared finished trials.
    """
    for name, table in (("once", once), ("per_trial", per_trial)):
        if dataset not in set(table["dataset"]):
            raise ValueError(f"dataset {dataset!r} is not in the {name} table")
    a, b = _finished(once, dataset), _finished(per_trial, dataset)
    shared = a.index.intersection(b.index)
    rows = []
    for method in shared.get_level_values("method").unique():
        keys = shared[shared.get_level_values("method") == method]
        if len(keys) < 2:
            continue
        mean_once, mean_per_trial = a.loc[keys].mean(), b.loc[keys].mean()
        spread = b.loc[keys].std(ddof=1)
        rows.append({"method": method, "n_trials": len(keys), "mean_once": mean_once,
                     "mean_per_trial": mean_per_trial, "change": abs(mean_once - mean_per_trial),
                     "spread": spread, "within": bool(abs(mean_once - mean_per_trial) < spread)})
    if not rows:
        raise ValueError(f"no method of {dataset!r} has two finished trials in both tables")
    return pd.DataFrame(rows)


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("once")
    parser.add_argument("per_trial")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--out", help="also write the comparison to this CSV")
    args = parser.parse_args(argv)
    try:
        result = compare(one_draw(read_results(args.once)), one_draw(read_results(args.per_trial)), args.dataset)
    except ValueError as error:
        print(f"cannot compare: {error}")
        return 2
    if args.out:
        write_frame(args.out, result, index=False)
    print(result.to_string(index=False, float_format="%.4f"))
    holds = bool(result["within"].all())
    print(f"verdict: {'holds' if holds else 'fails'} (change of mean AUC < trial-to-trial SD for "
          f"{int(result['within'].sum())}/{len(result)} methods)")
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
