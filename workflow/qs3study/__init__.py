"""The study around the method: benchmarks, result tables, figures and the claims ledger.

Installed with the project (``pip install -e .``) from ``workflow/qs3study``; the
Snakemake rules call it through thin scripts in ``workflow/scripts``. It may import
:mod:`qs3orao` and :mod:`baselines`; neither imports it.
"""
