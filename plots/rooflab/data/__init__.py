"""Reading a run directory: jsonfile (the one JSON parser and writer, the typed Checker),
run (the four core files as DataFrames), steps, bench, and one module per family file
(mpi, gemm, pot, rtamm, gemm_knobs). Nothing here draws or formats."""
