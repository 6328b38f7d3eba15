"""QS3ORAO beside the exact-kernel baseline M-PNU-AUC and beside QS3ORAO fitted on the labeled rows only.

Shows how a baseline of :mod:`baselines` is used: it takes the same
``y == -1`` input and gives the same ``decision_function``, so the ordinal
AUC on the unlabeled rows compares the methods directly.  M-PNU-AUC
(:class:`baselines.MPNUAUC`) fits one exact kernel model per ordinal split,
its PN risk mixed with the PU risk on the unlabeled rows by ``pnu_mix``; its
columns of scores, one per split, are ranked split by split.  The
labeled-only fit answers whether the unlabeled rows help.

Every method gets the same kernel parameter and ``lam``, untuned (the study
tunes each method by cross-validation on the labeled rows,
:func:`baselines.model_selection.cross_validate_params`), and M-PNU-AUC's
``lam`` weighs a penalty on its coefficients, not the RKHS norm: read the
table as a usage example, not as a verdict.  ``baselines.registry.make_method``
builds any compared method by its name in the study's configurations.

Run: ``python examples/compare_with_baseline.py``
"""

import time

from baselines import MPNUAUC
from qs3orao import QS3ORAO, ordinal_auc

from ordinal_problem import make_problem, relative_gamma

X, y, y_true = make_problem(n_samples=600, n_labeled=100)
unlabeled = y == -1
labeled = ~unlabeled
params = dict(gamma=relative_gamma(X[labeled]), lam=2.0**-3)

fits = {
    "QS3ORAO": (QS3ORAO(n_iter=1000, tradeoff=0.5, step_offset="auto", random_state=0, **params), X, y),
    # tradeoff=1 puts all the weight on the labeled pairs: without unlabeled rows there is nothing else.
    "QS3ORAO, labeled rows only": (QS3ORAO(n_iter=1000, tradeoff=1.0, step_offset="auto", random_state=0, **params),
                                   X[labeled], y[labeled]),
    # The labeled rows here are a uniform sample, so their class frequencies estimate the unlabeled priors.
    "M-PNU-AUC (exact kernel)": (MPNUAUC(pnu_mix=0.5, priors="labeled_frequency", **params), X, y),
}

print(f"{int(labeled.sum())} labeled and {int(unlabeled.sum())} unlabeled rows; "
      f"gamma = {params['gamma']:.3f}, lam = {params['lam']}")
print(f"{'method':<28}{'AUC (unlabeled)':>16}{'fit time (s)':>14}")
for name, (model, X_fit, y_fit) in fits.items():
    start = time.perf_counter()
    model.fit(X_fit, y_fit)
    seconds = time.perf_counter() - start
    auc = ordinal_auc(y_true[unlabeled], model.decision_function(X[unlabeled]), classes=model.classes_)
    print(f"{name:<28}{auc:>16.4f}{seconds:>14.2f}")
