"""The study around the method: configuration, jobs, result tables, figures, provenance, engine benchmark.

Installed with the project (``pip install -e .``) from ``workflow/qs3study``, beside the
pipeline it serves; the Snakemake rules and their one-line scripts in ``workflow/scripts``
call it. It may import :mod:`qs3orao` and :mod:`baselines`; neither imports it.

Modules: :mod:`~qs3study.configuration` (configuration -> estimator, one precedence rule),
:mod:`~qs3study.design` (trial seeds, size tokens), :mod:`~qs3study.stages.data` (download and
prepare jobs, configured datasets, screened datasets), :mod:`~qs3study.stages.tuning` and
:mod:`~qs3study.stages.training` (the per-point jobs), :mod:`~qs3study.kernel_width` (the kernel
width on the data's scale, degenerate-kernel and grid-edge warnings),
:mod:`~qs3study.tools.tuning_check` (tuning once against per trial), :mod:`~qs3study.stages.tables`
(results table, AUC summary with Holm-adjusted tests),
:mod:`~qs3study.stages.figures` (Figures 2 and 3), :mod:`~qs3study.provenance` (manifest),
:mod:`~qs3study.tools.outputs` (the CI check of a finished run), :mod:`~qs3study.perf.summary` (engine
speed ratios), :mod:`~qs3study.files` (the one atomic writer), :mod:`~qs3study.runtime`
(a job's log, threads, memory, versions); :mod:`~qs3study.claims` (the claims ledger and the
empirical claims of a results table).
"""
