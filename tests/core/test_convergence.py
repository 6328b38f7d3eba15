"""A correctness guard on the O(1/t) rate; the full study is the theory stage's."""

import numpy as np
import pytest

from qs3orao import QS3ORAO, exact_solution

from .problems import ordinal_problem, quality_bar_problem

CHECKPOINTS = np.array([100, 300, 1000, 2000])


@pytest.mark.slow
def test_mean_squared_gap_to_f_star_falls_like_one_over_t():
    X, y, _ = ordinal_problem(n=250, n_labeled=80, d=3, k=3, seed=11)
    params = dict(gamma=2.0, lam=0.5, tradeoff=0.5)
    f_star = exact_solution(X, y, **params).train_scores
    gaps = np.zeros(CHECKPOINTS.size)
    for seed in range(3):
        for i, t in enumerate(CHECKPOINTS):
            # theta * lam = 1.5, inside the theorem's range (1, 2).
            model = QS3ORAO(n_iter=int(t), n_components=16, batch_size=8, theta=3.0, random_state=seed,
                            **params).fit(X, y)
            gaps[i] += np.mean((model.train_scores_ - f_star) ** 2) / 3
    slope = np.polyfit(np.log(CHECKPOINTS), np.log(gaps), 1)[0]
    # "Roughly like 1/t": a slope of -1 within the spread of three seeds.
    assert -1.35 < slope < -0.65, (slope, gaps)
    assert np.all(np.diff(gaps) < 0), gaps


OFFSET_CHECKPOINTS = np.array([25, 50, 100, 200, 400, 800, 1600, 3200])


@pytest.mark.slow
def test_auto_offset_has_no_transient_and_keeps_the_one_over_t_rate():
    """lam = 0.05, theta * lam = 1.5: here the paper's schedule ends at AUC ~0.5 (see timing/).

    Ten seeds: the first version of this test averaged three and measured a slope of -0.64 (just
    outside the criterion); a ten-seed run then showed local slopes between -1.5 and +0.2 from one
    doubling of t to the next, i.e. three seeds cannot separate -1 from -0.65.  The criterion is
    unchanged; with ten seeds the slope measured -1.03.
    """
    X, y, _ = quality_bar_problem()
    params = dict(gamma=1.0, lam=0.05, tradeoff=0.5)
    f_star = exact_solution(X, y, **params).train_scores
    gaps = np.zeros(OFFSET_CHECKPOINTS.size)
    n_seeds = 10
    for seed in range(n_seeds):
        for i, t in enumerate(OFFSET_CHECKPOINTS):
            model = QS3ORAO(n_iter=int(t), n_components=16, batch_size=4, theta=30.0, step_offset="auto",
                            random_state=seed, **params).fit(X, y)
            gaps[i] += np.mean((model.train_scores_ - f_star) ** 2) / n_seeds
    t0 = model.step_offset_
    # No transient: no checkpoint is more than twice the first one.
    assert np.all(gaps <= 2 * gaps[0]), gaps
    # The rate: E|f_t - f*|^2 <= R / (t + t0); a slope of -1 against t + t0 on the later half.
    late = OFFSET_CHECKPOINTS >= 200
    slope = np.polyfit(np.log(OFFSET_CHECKPOINTS[late] + t0), np.log(gaps[late]), 1)[0]
    assert -1.35 < slope < -0.65, (slope, gaps)
    assert gaps[-1] < gaps[0] / 10, gaps
