"""A correctness guard on the O(1/t) rate; the full study is the theory stage's."""

import numpy as np

from qs3orao import QS3ORAO, exact_solution

from .problems import ordinal_problem

CHECKPOINTS = np.array([100, 300, 1000, 2000])


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
