#!/usr/bin/env python3
"""`rooflab fleet submit|status|collect`: rooflab on a Slurm cluster, one run directory per node
(the `rooflab` binary runs this file; --help for the commands). The code is rooflab/fleet.py;
docs/fleet.md is the recipe."""
import sys

from rooflab.cli import start

if __name__ == "__main__":
    sys.exit(start("rooflab fleet", "rooflab.fleet"))
