r"""Facts of the paper's Tables 1 and 2 that can be set against the project's records.

``TABLE2`` transcribes Table 2 (name, features, samples, classes) with the
registry entry each row corresponds to; :func:`compare_table2` sets it against
the documented shapes of :mod:`qs3study.datasets.registry`.
:func:`coefficient_storage` measures what Table 1's ``O(Dn)`` space leaves
out: the fitted model keeps ``t x D`` coefficients.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TABLE2", "compare_table2", "coefficient_storage"]

#: Table 2: registry name -> (paper's name, features, samples, classes).
TABLE2 = {
    "road3d": ("3D", 3, 434_874, 5),
    "sgemm": ("Sgemm", 14, 241_600, 5),
    "year_prediction_msd": ("Year", 90, 463_715, 5),
    "yolanda": ("Yolanda", 100, 400_000, 5),
    "amazon_baby": ("Baby", 1000, 160_792, 5),
    "amazon_beauty": ("Beauty", 1000, 198_502, 5),
    "amazon_clothing": ("Clothes", 1000, 278_677, 5),
    "amazon_pet": ("Pet", 1000, 157_836, 5),
}


def compare_table2(registry):
    """Table 2's rows and features against the registry's documented shapes.

    Parameters
    ----------
    registry : dict
        Name to :class:`qs3study.datasets.registry.DatasetSpec`.

    Returns
    -------
    list of dict
        Per Table 2 row: ``dataset``, ``paper_rows``, ``registry_rows``,
        ``paper_features``, ``registry_features`` (None when the data have no
        fixed width, i.e. text), ``rows_match``, ``features_match`` (None when
        not comparable) and ``notes`` (the registry's protocol notes).
    """
    out = []
    for name, (label, features, rows, _classes) in TABLE2.items():
        spec = registry.get(name)
        shape = spec.shape if spec is not None and spec.shape is not None else (None, None)
        out.append({
            "dataset": label, "registry": name if spec is not None else None,
            "paper_rows": rows, "registry_rows": shape[0],
            "paper_features": features, "registry_features": shape[1],
            "rows_match": shape[0] == rows,
            "features_match": None if shape[1] is None else shape[1] == features,
            "notes": spec.notes if spec is not None else "absent from the registry",
        })
    return out


def coefficient_storage(*, n, n_components, n_iters, seed=0):
    """Number of coefficients a fitted QS3ORAO keeps, at fixed ``n`` and ``D = 2 m``, per ``n_iter``.

    Returns
    -------
    list of int
        ``coef_.size`` for each value of ``n_iters``.
    """
    from qs3orao.estimator import QS3ORAO

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.arange(n) % 3
    y[rng.permutation(n)[: n // 2]] = -1
    return [int(QS3ORAO(n_iter=t, batch_size=1, n_components=n_components, random_state=seed).fit(X, y).coef_.size)
            for t in n_iters]
