import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import roc_auc_score

from qs3orao.metrics import binary_auc, c_index, ordinal_auc


def brute_auc(is_pos, s):
    pos, neg = s[is_pos], s[~is_pos]
    wins = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return wins.mean()


def brute_c_index(y, s):
    num = den = 0.0
    for i in range(y.size):
        for j in range(y.size):
            if y[i] < y[j]:
                den += 1
                num += (s[i] < s[j]) + 0.5 * (s[i] == s[j])
    return num / den


labels_and_scores = st.integers(2, 40).flatmap(lambda n: st.tuples(
    arrays(np.int64, n, elements=st.integers(0, 4)),
    arrays(np.float64, n, elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0, 3.25])),
)).filter(lambda t: np.unique(t[0]).size >= 2)


@given(labels_and_scores)
def test_ordinal_auc_is_mean_of_brute_force_split_aucs(data):
    y, s = data
    levels = np.unique(y)
    expected = np.mean([brute_auc(y > level, s) for level in levels[:-1]])
    assert ordinal_auc(y, s) == pytest.approx(expected, abs=1e-12)


@given(labels_and_scores)
def test_c_index_matches_brute_force(data):
    y, s = data
    assert c_index(y, s) == pytest.approx(brute_c_index(y, s), abs=1e-12)


def test_split_aucs_agree_with_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, size=2000)
    s = y + rng.normal(scale=2.0, size=y.size)
    s = np.round(s, 1)  # ties
    expected = np.mean([roc_auc_score(y > j, s) for j in range(4)])
    assert ordinal_auc(y, s) == pytest.approx(expected, abs=1e-12)
    for j in range(4):
        assert binary_auc(y > j, s) == pytest.approx(roc_auc_score(y > j, s), abs=1e-12)


def test_one_column_per_split():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, size=300)
    scores = rng.normal(size=(300, 2))
    expected = np.mean([roc_auc_score(y > j, scores[:, j]) for j in range(2)])
    assert ordinal_auc(y, scores) == pytest.approx(expected)


def test_metric_errors():
    with pytest.raises(ValueError, match="two classes"):
        ordinal_auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="mismatched"):
        ordinal_auc([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="columns"):
        ordinal_auc([0, 1, 2], np.zeros((3, 3)))
