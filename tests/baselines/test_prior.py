"""Energy-distance class-prior estimation on generated mixtures."""

import numpy as np
import pytest

from baselines.prior import energy_class_prior, split_priors


def mixture(n_labeled, n_unlabeled, prior, seed, shift=1.0):
    rng = np.random.default_rng(seed)
    pos = rng.normal(shift, 1.0, (n_labeled, 2))
    neg = rng.normal(-shift, 1.0, (n_labeled, 2))
    n_pos = rng.binomial(n_unlabeled, prior)
    unl = np.vstack([rng.normal(shift, 1.0, (n_pos, 2)), rng.normal(-shift, 1.0, (n_unlabeled - n_pos, 2))])
    return pos, neg, unl


@pytest.mark.parametrize("prior", [0.2, 0.5, 0.8])
def test_estimate_is_within_sampling_error(prior):
    errors = [energy_class_prior(*mixture(400, 1200, prior, seed)) - prior for seed in range(8)]
    # the binomial draw alone has standard deviation sqrt(p (1 - p) / 1200) <= 0.015
    assert abs(np.mean(errors)) < 0.03
    assert np.sqrt(np.mean(np.square(errors))) < 0.06


def test_estimate_improves_with_more_data():
    def rmse(n):
        errors = [energy_class_prior(*mixture(n, 3 * n, 0.3, seed)) - 0.3 for seed in range(12)]
        return np.sqrt(np.mean(np.square(errors)))

    small, large = rmse(40), rmse(800)
    assert large < 0.6 * small


def test_split_priors_of_an_ordinal_mixture():
    # Each split's positives are a mixture of classes; the estimate assumes the
    # labeled rows have the unlabeled rows' class proportions (a random labeling).
    rng = np.random.default_rng(0)
    centres = np.array([[-3.0, 0], [0, 0], [3.0, 0]])
    proportions = np.array([0.5, 0.3, 0.2])
    labeled = rng.choice(3, size=600, p=proportions)
    unlabeled = rng.choice(3, size=3000, p=proportions)
    codes = np.concatenate([labeled, np.full(3000, -1)])
    X = centres[np.concatenate([labeled, unlabeled])] + rng.normal(size=(3600, 2))
    truth = [np.mean(unlabeled > 0), np.mean(unlabeled > 1)]
    np.testing.assert_allclose(split_priors(X, codes, 3), truth, atol=0.03)


def test_needs_unlabeled_rows_and_two_rows_a_side():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="unlabeled"):
        split_priors(X, np.array([0, 0, 1, 1, 1]), 2)
    with pytest.raises(ValueError, match="at least two"):
        split_priors(X, np.array([0, 1, 1, -1, -1]), 2)
