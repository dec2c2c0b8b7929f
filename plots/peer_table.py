#!/usr/bin/env python3
"""`python3 plots/peer_table.py RUN [--tables DIR] [--class NAME]`: the peer table of a
scripts/peer_table.sh run, DIR/<cpu-class>.md and the index DIR/README.md. The code is
rooflab/peers.py."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("plots/peer_table.py", "rooflab.peers"))
