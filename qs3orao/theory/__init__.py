"""Executable checks of the paper's formal and empirical claims (the claims ledger).

Modules, one per claim or concern:

``risk_identity``   claim 1: ``R_PN = R_PU + R_NU - 1/2`` and the squared-loss bias
``features``        claim 2: ``xi = E_omega[zeta]``
``threshold_lemma`` claim 3: uniqueness and order of the all-threshold minimiser
``coefficients``    claim 4 (Lemma 2): the coefficients ``a_t^i``
``bounds``          the constants of Lemmas 1, 3 and Theorem 1
``convergence``     claims 5-6: ``f_t``, ``h_t`` and kernel SGD against the exact ``f*``
``complexity``      claim 7: Table 1's time and space exponents
``empirical``       claim 8: the Results section on the benchmark table
``checks``          deterministic checks and pinned counterexamples of claims 1-4
``ledger``          verdicts and evidence -> ``figures/claims_ledger.{md,csv}``
``plots``           the ledger's figures
"""
