"""The data-validity screen and the signal screen's permutation null, on generated data with known answers."""

from dataclasses import replace

import numpy as np
import pytest

from qs3study.datasets import DATASETS, semisupervised_split
from qs3study.datasets.checks import group_lookup, nearest_neighbour_auc, rank_leak
from qs3study.stages.data_checks import data_checks, refusal
from qs3study.stages.signal_null import batched_ordinal_auc, permutation_screen
from qs3orao.metrics import ordinal_auc

SETTINGS = {"rank_level": 0.999, "group_level": 0.9, "group_min_groups": 10, "group_max_distinct_fraction": 0.02,
            "max_rows": 20000, "on_trip": "refuse", "signal_permutations": 0, "signal_alpha": 0.05,
            "signal_widths": [-1, 0, 1], "signal_lams": [1e-4, 1e-2]}


def _bins(target, k=5):
    return np.searchsorted(np.quantile(target, np.linspace(0, 1, k + 1)[1:-1]), target).astype(np.int64)


def test_sum_of_two_features_is_caught_and_dropping_them_clears_it():
    rng = np.random.default_rng(0)
    X = rng.gamma(2.0, size=(3000, 6)) * np.array([1, 5, 1, 30, 2, 1])
    target = X[:, 1] + X[:, 3]
    value, combination = rank_leak(X, target)
    assert value == pytest.approx(1.0) and combination == "feature 1 + feature 3"
    assert rank_leak(np.delete(X, [1, 3], axis=1), target)[0] < 0.999


def test_bike_registry_entry_drops_casual_and_registered():
    spec = DATASETS["uci_bike"]
    assert spec.drop_features == (15, 16) and "casual + registered" in spec.notes


def test_leak_refuses_a_dataset_whose_entry_does_not_answer_it():
    rng = np.random.default_rng(1)
    X = rng.random((1000, 4))
    target = X[:, 0] - X[:, 2]
    spec = DATASETS["synthetic"]
    table = data_checks("leaky", spec, X, _bins(target), (X, target), SETTINGS, n_labeled=100, base_seed=0)
    row = table.set_index("check").loc["rank_leak"]
    assert row.tripped and row.action == "refused" and "feature 0 - feature 2" in row.detail
    assert "rank_leak" in str(refusal(table))
    warned = data_checks("leaky", spec, X, _bins(target), (X, target), {**SETTINGS, "on_trip": "warn"},
                         n_labeled=100, base_seed=0)
    assert refusal(warned) is None


def test_group_column_is_caught_and_the_group_split_keeps_groups_apart():
    rng = np.random.default_rng(2)
    subject = np.repeat(np.arange(40), 100)
    level = rng.normal(size=40)[subject]
    X = np.column_stack([subject, rng.random(subject.size)])
    y = _bins(level + 0.1 * rng.normal(size=subject.size))
    split = semisupervised_split(y, n_labeled=300, seed=0)
    labeled = np.isin(np.arange(y.size), split.train_idx[split.labeled_mask])
    auc, column, n_groups = group_lookup(X, y, labeled, min_groups=10, max_distinct_fraction=0.02)
    assert column == 0 and n_groups == 40 and auc > 0.9
    grouped = semisupervised_split(y, n_labeled=300, seed=0, groups=subject)
    labeled = set(subject[grouped.train_idx[grouped.labeled_mask]])
    unlabeled = set(subject[grouped.train_idx[~grouped.labeled_mask]])
    assert grouped.n_labeled == 300 and not labeled & unlabeled
    assert len(labeled) == len(unlabeled) == 20  # 300 rows from each of the labeled side's 20 subjects


def test_parkinsons_entry_splits_by_its_subject_column():
    spec = DATASETS["uci_parkinsons"]
    assert spec.group_column == 0 and "subject ID" in spec.notes and "not a feature" in spec.notes


def test_grouped_split_is_unchanged_without_groups():
    y = np.repeat(np.arange(5), 200)
    before = semisupervised_split(y, n_labeled=50, seed=3, n_unlabeled=400)
    after = semisupervised_split(y, n_labeled=50, seed=3, n_unlabeled=400, groups=None)
    np.testing.assert_array_equal(before.train_idx, after.train_idx)


def test_nearest_neighbour_reference_known_answers():
    rng = np.random.default_rng(4)
    # Classes on separated intervals: every unlabeled row's nearest labeled row has its class.
    y = np.repeat(np.arange(4), 250)
    X = (y + rng.uniform(0.0, 0.4, size=y.size))[:, None]
    labeled = np.zeros(y.size, dtype=bool)
    labeled[rng.choice(y.size, 80, replace=False)] = True
    assert nearest_neighbour_auc(X, y, labeled) == 1.0
    # Features unrelated to the labels: about one half.
    noise = rng.random((4000, 3))
    labels = rng.integers(0, 5, 4000)
    assert abs(nearest_neighbour_auc(noise, labels, np.arange(4000) < 500) - 0.5) < 0.03


def test_batched_auc_equals_ordinal_auc():
    rng = np.random.default_rng(5)
    Y, P = rng.integers(0, 5, (60, 4)), rng.random((60, 4))
    np.testing.assert_allclose(batched_ordinal_auc(Y, P), [ordinal_auc(Y[:, j], P[:, j]) for j in range(4)])


@pytest.mark.slow
def test_signal_free_data_pass_the_screen_at_most_at_the_declared_rate():
    # 40 signal-free sets, 19 permutations each: a level-0.05 test passes each with probability at most 0.05,
    # so more than 6 passes (binomial tail about 0.3 %) would mean the null is wrong.
    passes = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        X, y = rng.random((150, 4)), rng.integers(0, 5, 150)
        passes += permutation_screen(X, y, n_permutations=19, alpha=0.05, seed=seed, widths=[-1, 0, 1],
                                     lams=[1e-3, 1e-1])["signal"]
    assert passes <= 6


def test_signal_is_found():
    rng = np.random.default_rng(6)
    X = rng.random((150, 4))
    result = permutation_screen(X, _bins(np.sin(4 * X[:, 0]) + X[:, 1]), n_permutations=19, alpha=0.05, seed=0,
                                widths=[-1, 0, 1], lams=[1e-3, 1e-1])
    assert result["signal"] and result["observed"] > result["null_level"]


def test_group_check_reads_a_plain_split_while_the_group_column_splits_the_run():
    rng = np.random.default_rng(7)
    subject = np.repeat(np.arange(40), 50)
    y = _bins(rng.normal(size=40)[subject] + 0.1 * rng.normal(size=subject.size))
    X = np.column_stack([subject, rng.random(subject.size)])
    grouped = replace(DATASETS["uci_parkinsons"], group_column=0)
    table = data_checks("subjects", grouped, X, y, (X, y.astype(float)), SETTINGS, n_labeled=200, base_seed=0)
    row = table.set_index("check").loc["group_lookup"]
    assert row.tripped and row.value > 0.9
    assert row.action.startswith("split by group (group_column 0, not a feature): 0 of trial 0's ")
    assert row.action.endswith(" unlabeled rows share a group with a labeled row")
    assert refusal(table) is None
    # without a declared group column the same finding is not answered
    table = data_checks("subjects", replace(grouped, group_column=None), X, y, (X, y.astype(float)), SETTINGS,
                        n_labeled=200, base_seed=0)
    assert table.set_index("check").loc["group_lookup"].action == "refused" and refusal(table) is not None


def test_the_references_of_a_grouped_dataset_do_not_read_its_group_column(monkeypatch):
    from qs3study.stages import data_checks as module

    rng = np.random.default_rng(8)
    subject = np.repeat(np.arange(40), 50)
    y = _bins(rng.normal(size=40)[subject] + 0.1 * rng.normal(size=subject.size))
    X = np.column_stack([rng.random(subject.size), subject, rng.random(subject.size)])
    seen = []
    monkeypatch.setattr(module, "nearest_neighbour_auc", lambda X, y, labeled: seen.append(X) or 0.5)
    data_checks("subjects", replace(DATASETS["uci_parkinsons"], group_column=1), X, y, None, SETTINGS,
                n_labeled=200, base_seed=0)
    assert seen[0].shape[1] == 2 and not np.isin(seen[0], subject[subject > 0]).any()
