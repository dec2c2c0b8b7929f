#!/usr/bin/env python3
"""`python3 plots/figure.py NAME RUN [--out FILE.png]`: one figure of a run directory
(`--list` names them). The code is rooflab/figures/."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("plots/figure.py", "rooflab.figures"))
