#!/usr/bin/env python3
"""`rooflab history add|import|list|check`: the results history (the `rooflab` binary runs this
file; --help for the commands). The code is rooflab/history/."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("rooflab history", "rooflab.history.command"))
