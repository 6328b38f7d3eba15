"""Fits a memo of scored candidates saves in the best-effort protocol's widened search, round by round.

    python timing/widened_search_fits.py

On one generated problem (300 rows of :func:`qs3study.datasets.make_latent_regression`
with 3 features, cut into 5 equal-frequency classes, 150 labeled, the rest unlabeled),
runs :func:`qs3study.stages.tuning.widened_search` over each method's registered staged
search with the ranges of ``workflow/config/reproduction-best.yaml`` (lam 2^-20..2^3,
kernel width 2^-6..2^6), 5 folds, the rounds sharing a
:class:`baselines.model_selection.ScoreMemo`, and prints per method the rounds, the
candidates each round scores, the candidate-fold fits a search without the memo makes
(every candidate of every round on every fold: the rounds and their tables are the
same with or without the memo, tests/study/stages/test_widened_search.py) and the fits
made (the ``fitted_folds`` column). Counts only, no timing.
"""

import warnings

import numpy as np

from baselines.model_selection import ScoreMemo, cross_validate_params
from baselines.registry import tuning_grid
from qs3study.datasets import equal_frequency_bins, make_latent_regression
from qs3study.stages.tuning import widened_search

#: Method -> parameters every fit shares (M-PNU-AUC's seed of its prior estimate).
METHODS = {"m-samult": {}, "qs3orao-exact": {}, "m-pnu-auc": {"random_state": 0}}
RANGES = {"lam": (-20, 3), "gamma": (-6, 6)}
N_FOLDS = 5


def main():
    X, target = make_latent_regression(300, 3, random_state=0)
    y, _ = equal_frequency_bins(target, 5)
    y = y.astype(np.int64)
    y[150:] = -1
    print(f"300 rows (150 labeled, 5 classes), {N_FOLDS}-fold staged search widened over {RANGES}")
    print("method          rounds  candidates per round     fits without memo  fits with memo  saved")
    for name, fixed in METHODS.items():
        memo, tables = ScoreMemo(), []

        def run(grid):
            result = cross_validate_params(name, X, y, grid, n_folds=N_FOLDS, fixed_params=fixed, memo=memo)
            tables.append(result.table)
            return result

        widened_search(run, tuning_grid(name), RANGES)
        without = sum(len(table) for table in tables) * N_FOLDS
        fitted = sum(row["fitted_folds"] for table in tables for row in table)
        assert fitted == len(memo)
        print(f"{name:<15} {len(tables):>6}  {str([len(t) for t in tables]):<24} {without:>17}  {fitted:>14}  "
              f"{without - fitted} ({(without - fitted) / without:.0%})")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
