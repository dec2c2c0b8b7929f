"""rooflab's results history: a store of runs (store), their per-benchmark series (series), and
change-point detection over those series (check). `rooflab history ...` (plots/history.py) is
the command line."""
