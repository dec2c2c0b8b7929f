#!/usr/bin/env python3
"""`rooflab claims RUN [--no-figures]` (the `rooflab` binary runs this file; --help for the
options). The code is rooflab/claims.py."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("rooflab claims", "rooflab.claims"))
