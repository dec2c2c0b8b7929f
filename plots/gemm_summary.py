#!/usr/bin/env python3
"""`python3 plots/gemm_summary.py RUN [--out FILE]`: RUN/gemm_summary.json (WHM per GEMM
implementation, the targets) and its table on stdout. The code is rooflab/data/gemm.py."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("plots/gemm_summary.py", "rooflab.data.gemm"))
