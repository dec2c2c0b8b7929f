#!/usr/bin/env python3
"""`python3 plots/cpu_identity.py FILE [OTHER]`: a machine.json's CPU as compared with another's
(scripts/perf_gate.sh picks its baseline with it). The code is rooflab/data/cpu_identity.py."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("plots/cpu_identity.py", "rooflab.data.cpu_identity"))
