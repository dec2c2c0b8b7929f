#!/usr/bin/env python3
"""`rooflab compare BASE NEW [options]`: the regression gate (the `rooflab` binary runs this
file; --help for the options). The code is rooflab/gate.py."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("rooflab compare", "rooflab.gate"))
