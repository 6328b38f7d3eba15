"""The quantities the paper's claims talk about, as pure functions (the claims ledger's evidence).

Modules, one per claim or concern:

``risk_identity``      claim 1: ``R_PN = R_PU + R_NU - 1/2`` and the squared-loss bias
``features``           claim 2: ``xi = E_omega[zeta]``
``threshold_lemma``    claim 3: uniqueness and order of the all-threshold minimiser; the appendix's ``e_j``
``coefficients``       claim 4 (Lemma 2): the coefficients ``a_t^i``
``bounds``             the constants of Lemmas 1, 3 and Theorem 1
``bound_ratio``        Theorem 1's bound over the error of ``f = 0``: where the bound says something
``convergence``        claims 5-6: ``f_t`` and ``h_t`` against the exact ``f*``; curvature and transient
``algorithm_printed``  Algorithm 1 as printed against the gradient
``assumptions``        Assumption 3 for the pairwise losses
``paper_tables``       Tables 1 and 2 against the project's records
``complexity``         claim 7: Table 1's time and space exponents, measured
``checks``             deterministic checks and pinned counterexamples

The verdicts, the ledger and its figures are the study package's (``qs3study.claims``).
"""
