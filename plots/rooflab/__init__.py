"""The Python side of rooflab: it reads the run directory's JSON and draws; it never derives a
flop count, a byte count or a prediction (those come from the C++ side's JSON).

Layers (tests/plots/test_layout.py checks that imports only go down this list, without cycles):
  cli          the command-line shape of every entry point (standard library only)
  data         the ONE JSON loader (data.jsonfile) and the readers of each file of a run
  figures      one module per figure: plot(run_dir, out_path)
  gate         `rooflab compare`: the performance regression gate
  claims       `rooflab claims`: the papers' claims vs a run
  report       `rooflab report`: the HTML pages and the Markdown summary
Entry points are the files beside this package: report.py, compare.py, claims.py (run by the
`rooflab` binary), figure.py and gemm_summary.py.
"""
