"""Performance measurements: the ``perf`` target's side-by-side ratios and time to accuracy."""
