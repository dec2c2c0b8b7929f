#!/usr/bin/env python3
"""`rooflab report RUN [options]` (the `rooflab` binary runs this file; --help for the options).
The code is rooflab/report/."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("rooflab report", "rooflab.report.build"))
