"""The claims ledger: the theory studies' design, verdicts, ledger assembly, figures and manifest.

``design``     the pre-registered design file: loading, validation, hash
``verdicts``   verdict functions: a check's results and the design's criteria -> a verdict
``summary``    per-cell summaries of the convergence study (slopes, bounds, transient)
``ledger``     the ledger's rows and its Markdown/CSV rendering
``plots``      the ledger's figures
``manifest``   how the theory outputs were made

The quantities the claims talk about live in :mod:`qs3study.theory`.
"""
