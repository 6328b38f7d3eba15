"""Bad input gets the same errors as QS3ORAO (scikit-learn conventions: test_sklearn_conformance.py)."""

import re

import numpy as np
import pytest
from sklearn.base import clone

from baselines import MPNUAUC, MSAMULT, SVOREX, NystromAUC, RFFAUC
from qs3orao import QS3ORAO

ESTIMATORS = [MPNUAUC(), MSAMULT(), SVOREX(), RFFAUC(n_random_features=20), NystromAUC(n_landmarks=20)]


def bad_inputs():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    y = np.tile([0, 1, 2, -1], 10)
    nan_X = X.copy()
    nan_X[3, 1] = np.nan
    return {
        "nan": (nan_X, y),
        "inf": (np.where(X > 0.99, np.inf, X), y),
        "lengths": (X, y[:-1]),
        "one class": (X, np.where(y > 0, -1, y)),
        "non-integer": (X, y + 0.5),
        "1-d X": (X[:, 0], y),
        "2-d y": (X, y[:, None]),
        "overflowing scale": (X * 1e300, y),
    }


def qs3orao_error(X, y):
    with pytest.raises((ValueError, TypeError)) as info:
        QS3ORAO(n_iter=2).fit(X, y)
    return info.type, str(info.value)


@pytest.mark.parametrize("case", ["nan", "inf", "lengths", "one class", "non-integer", "1-d X", "2-d y",
                                  "overflowing scale"])
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_bad_data_gets_the_qs3orao_error(estimator, case):
    X, y = bad_inputs()[case]
    kind, message = qs3orao_error(X, y)
    with pytest.raises(kind, match=re.escape(message)):
        clone(estimator).fit(X, y)


@pytest.mark.parametrize("estimator", [MSAMULT(), RFFAUC(n_random_features=20), NystromAUC(n_landmarks=20)],
                         ids=lambda e: type(e).__name__)
def test_missing_unlabeled_rows_get_the_qs3orao_error(estimator):
    X = np.random.default_rng(0).uniform(size=(30, 2))
    y = np.arange(30) % 3
    kind, message = qs3orao_error(X, y)
    with pytest.raises(kind, match=re.escape(message)):
        clone(estimator).fit(X, y)
    clone(estimator).set_params(tradeoff=1.0).fit(X, y)


def test_pnu_needs_unlabeled_rows_only_for_nonzero_eta():
    X = np.random.default_rng(0).uniform(size=(30, 2))
    y = np.arange(30) % 3
    with pytest.raises(ValueError, match="pnu_mix"):
        MPNUAUC(pnu_mix=0.5).fit(X, y)
    assert np.isnan(MPNUAUC(pnu_mix=0.0).fit(X, y).priors_).all()


@pytest.mark.parametrize("params, kind, match", [
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(gamma="wide"), TypeError, "gamma"),
    (dict(lam=0), ValueError, "lam"),
    (dict(tradeoff=1.5), ValueError, "tradeoff"),
    (dict(tradeoff=[0.5, 0.5, 0.5]), ValueError, "tradeoff"),
    (dict(threshold_loss="l1"), ValueError, "threshold_loss"),
])
@pytest.mark.parametrize("cls", [MSAMULT, RFFAUC, NystromAUC])
def test_bad_hyperparameters_are_named(cls, params, kind, match, problem):
    X, y, _ = problem
    with pytest.raises(kind, match=match):
        cls(**params).fit(X, y)


@pytest.mark.parametrize("params, match", [(dict(pnu_mix=1.5), "pnu_mix"), (dict(pnu_mix=[0.1]), "pnu_mix"),
                                           (dict(priors=[0.5, 1.0], pnu_mix=0.5), "priors"),
                                           (dict(n_basis=0), "n_basis")])
def test_bad_pnu_hyperparameters_are_named(params, match, problem):
    X, y, _ = problem
    with pytest.raises(ValueError, match=match):
        MPNUAUC(**params).fit(X, y)


@pytest.mark.parametrize("params, kind", [(dict(C=0), ValueError), (dict(gamma=None), TypeError)])
def test_bad_svorex_hyperparameters_are_named(params, kind, problem):
    X, y, _ = problem
    with pytest.raises(kind, match=next(iter(params))):
        SVOREX(**params).fit(X, y)
