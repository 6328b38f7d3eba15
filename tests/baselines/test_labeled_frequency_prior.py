"""M-PNU-AUC's class priors from the labeled class frequencies (best-effort protocol)."""

import warnings

import numpy as np
import pytest

from baselines import MPNUAUC
from baselines.prior import labeled_frequency_priors
from qs3study.datasets import semisupervised_split


def _uniform_sample(proportions, n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(len(proportions), size=n, p=proportions)
    X = rng.normal(size=(n, 2)) + y[:, None]
    return X, y


@pytest.mark.parametrize("proportions", [[0.5, 0.3, 0.2], [0.1, 0.1, 0.6, 0.2]])
def test_labeled_frequency_priors_equal_the_true_priors_of_a_uniform_sample(proportions):
    proportions = np.asarray(proportions)
    true = proportions[::-1].cumsum()[::-1][1:]
    n_labeled, errors = 500, []
    for seed in range(20):
        _, y = _uniform_sample(proportions, 5000, seed)
        split = semisupervised_split(y, n_labeled=n_labeled, seed=seed)
        errors.append(labeled_frequency_priors(split.y_train, len(proportions)) - true)
    errors = np.array(errors)
    se = np.sqrt(true * (1 - true) / n_labeled)  # binomial standard error of each frequency
    assert np.all(np.abs(errors.mean(axis=0)) < 3 * se / np.sqrt(len(errors)))  # unbiased
    assert np.all(np.abs(errors).max(axis=0) < 4 * se)  # every draw within sampling error
    assert np.all(np.abs(errors.std(axis=0) / se - 1) < 0.5)


def test_labeled_frequency_is_used_by_m_pnu_auc_and_differs_from_energy_distance():
    X, y = _uniform_sample([0.5, 0.3, 0.2], 600, 0)
    y_train = np.where(np.arange(600) < 150, y, -1)
    params = dict(gamma=0.5, lam=1.0, pnu_mix=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # energy estimates may be clipped
        energy = MPNUAUC(**params).fit(X, y_train)
    frequency = MPNUAUC(priors="labeled_frequency", **params).fit(X, y_train)
    np.testing.assert_array_equal(frequency.priors_, labeled_frequency_priors(y_train, 3))
    assert not np.array_equal(frequency.priors_, energy.priors_)
    assert not np.allclose(frequency.coef_, energy.coef_)


def test_labeled_frequency_fits_where_energy_distance_refuses():
    # features carrying no class information: the energy estimate is not identified
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = np.where(np.arange(400) < 100, rng.integers(0, 3, 400), -1)
    with pytest.raises(ValueError, match="class prior cannot be estimated|indistinguishable"):
        MPNUAUC(gamma=1.0, pnu_mix=0.5).fit(X, y)
    model = MPNUAUC(gamma=1.0, pnu_mix=0.5, priors="labeled_frequency").fit(X, y)
    assert np.all((model.priors_ > 0) & (model.priors_ < 1))


def test_unknown_prior_source_is_refused():
    with pytest.raises(ValueError, match="priors must be numbers or one of"):
        MPNUAUC(priors="labelled").fit(np.zeros((4, 1)), np.array([0, 1, -1, -1]))
