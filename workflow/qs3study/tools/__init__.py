"""Analysis tools run by hand on finished runs: decomposition, reproduction checks, archives."""
