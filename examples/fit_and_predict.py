"""Fit QS3ORAO on labeled and unlabeled rows, rank and label the unlabeled ones, and check against f*.

Shows the scikit-learn style use of :class:`qs3orao.QS3ORAO`: ``y == -1``
marks the unlabeled rows, ``decision_function`` gives the latent ranking
score, ``predict`` the ordinal class and :func:`qs3orao.ordinal_auc` scores
the ranking.  The stable step (``step_offset="auto"``) picks the offset
``t0`` of ``eta_t = theta / (t + t0)`` that makes every step contract; the
paper's step (``step_offset=0``) can blow up at small ``lam``.  The kernel
parameter is read relative to the median squared distance between labeled
rows, as the study does.  On a problem this small the exact minimiser
``f*`` of the same objective (:func:`qs3orao.exact_solution`, O(n^2) memory)
shows how much of the AUC the stochastic optimiser keeps.

Run: ``python examples/fit_and_predict.py``
"""

import numpy as np

from qs3orao import QS3ORAO, exact_solution, ordinal_auc
from qs3orao.metrics import accuracy, mean_absolute_error

from ordinal_problem import make_problem, relative_gamma

X, y, y_true = make_problem(n_samples=600, n_labeled=100)
unlabeled = y == -1
params = dict(gamma=relative_gamma(X[~unlabeled]), lam=2.0**-3, tradeoff=0.5)

model = QS3ORAO(n_iter=1000, step_offset="auto", random_state=0, **params)
model.fit(X, y)
scores = model.decision_function(X[unlabeled])
predicted = model.predict(X[unlabeled])

print(f"{int((~unlabeled).sum())} labeled and {int(unlabeled.sum())} unlabeled rows, "
      f"{model.classes_.size} classes, gamma = {params['gamma']:.3f}, lam = {params['lam']}")
print(f"iterations: {model.n_iter_} (step offset t0 = {model.step_offset_:g})")
print(f"thresholds on f: {np.round(model.thresholds_, 3)}")
print(f"QS3ORAO ordinal AUC on the unlabeled rows: {ordinal_auc(y_true[unlabeled], scores):.4f}")
print(f"predicted classes of the first unlabeled rows: {predicted[:12]}")
print(f"true classes of the same rows:                {y_true[unlabeled][:12]}")
print(f"accuracy {accuracy(y_true[unlabeled], predicted):.3f}, "
      f"mean absolute error {mean_absolute_error(y_true[unlabeled], predicted):.3f} classes")

# The exact minimiser of the same objective, from every labeled and unlabeled row.
exact = exact_solution(X, y, **params)
exact_scores = exact.decision_function(X[unlabeled])
print(f"exact f* ordinal AUC on the unlabeled rows: {ordinal_auc(y_true[unlabeled], exact_scores):.4f}")
gap = np.linalg.norm(scores - exact_scores) / np.linalg.norm(exact_scores)
print(f"relative distance of QS3ORAO's scores from f*'s: {gap:.3f}")
