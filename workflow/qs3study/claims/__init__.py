"""The claims ledger: the theory studies' design, verdicts, ledger assembly, figures and manifest.

``design``     the pre-registered design file: loading, validation, hash
``verdicts``   verdict functions: a check's results and the design's criteria -> a verdict
``summary``    per-cell summaries of the convergence study (slopes, bounds, transient)
``rows``       the ledger's rows, one module per family of claims (statement, criterion, verdict, evidence)
``ledger``     the row type and its Markdown/CSV rendering
``assemble``   from the design and the studies' tidy data to the ledger (runs the rows, renders the table)
``plots``      the ledger's figures
``manifest``   how the theory outputs were made

The quantities the claims talk about live in :mod:`qs3study.theory`.
"""
