"""The feature-space quality bar: QS3ORAO against the same objective solved exactly on fixed features.

For each dataset and trial, QS3ORAO's final function has ``D = 2 x n_iter x m``
random features; RFF-AUC and Nystroem-AUC are fitted at that D ("equal D") and
at the smaller D of the default configuration ("equal time"). Prints one line
per fit: dataset, trial, method, D, ordinal AUC on the unlabeled rows, fit time.

Run: ``python timing/feature_space_comparison.py [--mirror ../shared/data]``
(SGEMM is included when a mirror holding it is given).
"""

import argparse
import time

from baselines.registry import make_method
from qs3study.datasets import load_ordinal, semisupervised_split
from qs3orao.metrics import ordinal_auc

N_ITER, FREQUENCIES = 1000, 2
EQUAL_D = 2 * N_ITER * FREQUENCIES
EQUAL_TIME = {"rff-auc": 1024, "nystrom-auc": 512}
WIDTH = {"rff-auc": "n_random_features", "nystrom-auc": "n_landmarks"}
# (dataset, n_labeled, n_unlabeled or None for all, gamma, lam): the default configuration's values,
# and the SGEMM mirror run's.
SETTINGS = [("synthetic", 200, 2000, 1.0, 0.1), ("swd", 200, None, 0.5, 0.1), ("sgemm", 500, 5000, 1.0, 0.125)]


def runs(gamma, lam):
    yield "qs3orao", EQUAL_D, dict(n_iter=N_ITER, n_components=FREQUENCIES, gamma=gamma, lam=lam)
    for name, small in EQUAL_TIME.items():
        for D in (EQUAL_D, small):
            yield name, D, {WIDTH[name]: D, "gamma": gamma, "lam": lam}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=None)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    print("dataset,trial,method,D,auc,fit_seconds")
    for name, n_labeled, n_unlabeled, gamma, lam in SETTINGS:
        if name == "sgemm" and args.mirror is None:
            continue
        data = load_ordinal(name, mirror=args.mirror)
        for trial in range(args.trials):
            split = semisupervised_split(data.y, n_labeled=n_labeled, seed=trial, n_unlabeled=n_unlabeled)
            X, unlabeled = data.X[split.train_idx], split.y_train == -1
            for method, D, params in runs(gamma, lam):
                start = time.perf_counter()
                model = make_method(method, random_state=trial, **params).fit(X, split.y_train)
                seconds = time.perf_counter() - start
                auc = ordinal_auc(split.y_true[unlabeled], model.decision_function(X[unlabeled]))
                print(f"{name},{trial},{method},{D},{auc:.4f},{seconds:.2f}", flush=True)


if __name__ == "__main__":
    main()
