#!/usr/bin/env python3
"""ReFrame references for rooflab_checks.py from a stored rooflab run of one system.

usage: references.py RUN --system NAME [--out FILE] [--tolerance 0.1] [--filter REGEX]
                     [--both-sides] [--profile P]

  RUN            a rooflab run directory: RUN/machine.json (-> rooflab_characterize) and/or
                 RUN/model.json (-> rooflab_bench, with `rooflab model` run on it)
  --system NAME  the ReFrame system ('cluster') or system:partition ('cluster:compute') the
                 references are for
  --out FILE     the references file (default rooflab_references.json); an existing one keeps
                 its other systems, so one file holds a centre's systems
  --tolerance F  the fraction a value may fall short of the reference (default 0.1): a ceiling,
                 efficiency or GFLOP/s below (1 - F) x reference, or a time above (1 + F) x, fails
  --both-sides   also fail when a value beats its reference by more than F (a figure that jumps
                 up is often a measurement that went wrong)
  --filter REGEX only the kernels of model.json whose name matches (default: every kernel)

The file gives rooflab_bench its cases too (the kernels referenced), so the test measures what
the references describe. Exit: 0, 1 bad input (one message on stderr), 2 usage.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rooflab_perf as rp  # noqa: E402


def _tuple(value: float, unit: str, tolerance: float, higher_better: bool, both: bool) -> list:
    """ReFrame's reference tuple [value, lower, upper, unit]: thresholds are fractions of the
    value, None for no bound."""
    lower, upper = (-tolerance, tolerance if both else None) if higher_better else \
        (-tolerance if both else None, tolerance)
    return [value, lower, upper, unit]


def build(run: str, tolerance: float, both: bool, select: str | None) -> dict:
    """{test name: {"references": {...}[, "cases": [...]]}} from the run's JSON files."""
    out = {}
    machine_path, model_path = os.path.join(run, "machine.json"), os.path.join(run, "model.json")
    if not os.path.exists(machine_path) and not os.path.exists(model_path):
        raise rp.RunError(f"{run}: neither machine.json nor model.json (not a rooflab run?)")
    if os.path.exists(machine_path):
        machine = rp.load(machine_path, rp.MACHINE_SCHEMA)
        values = rp.ceiling_values(machine)
        if not values:
            raise rp.RunError(f"{machine_path}: no bandwidth or compute ceilings")
        out["rooflab_characterize"] = {
            "profile": machine.get("profile"),
            "references": {k: _tuple(v, u, tolerance, True, both) for k, (v, u) in values.items()},
        }
    if os.path.exists(model_path):
        model = rp.load(model_path, rp.MODEL_SCHEMA)
        values = rp.kernel_values(model, select)
        if not values:
            raise rp.RunError(f"{model_path}: no measured and predicted kernel"
                              + (f" matches {select!r}" if select else ""))
        cases = sorted({row["name"] for row in model["rows"]
                        if f"{rp.kernel_key(row['name'])}/time" in values})
        out["rooflab_bench"] = {
            "cases": cases,
            "references": {k: _tuple(v, u, tolerance, rp.higher_is_better(k), both)
                           for k, (v, u) in values.items()},
        }
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="references.py", description="ReFrame references for rooflab_checks.py from a "
        "stored rooflab run (RUN/machine.json, RUN/model.json)")
    ap.add_argument("run", metavar="RUN", help="a rooflab run directory")
    ap.add_argument("--system", required=True,
                    help="ReFrame system or system:partition the references are for")
    ap.add_argument("--out", default="rooflab_references.json",
                    help="references file (default rooflab_references.json; other systems kept)")
    ap.add_argument("--tolerance", type=float, default=0.1,
                    help="fraction a value may fall short of its reference (default 0.1)")
    ap.add_argument("--both-sides", action="store_true",
                    help="also fail a value above its reference by more than the tolerance")
    ap.add_argument("--filter", default=None, help="only the kernels whose name matches REGEX")
    a = ap.parse_args(argv)
    if not 0 < a.tolerance < 1:
        ap.error(f"--tolerance {a.tolerance}: expected a fraction in (0, 1)")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?", a.system):
        ap.error(f"--system {a.system!r}: expected NAME or NAME:PARTITION")
    if a.filter:
        try:
            re.compile(a.filter)
        except re.error as e:
            ap.error(f"--filter {a.filter!r}: {e}")
    try:
        tests = build(a.run, a.tolerance, a.both_sides, a.filter)
        doc = {"schema": rp.REFERENCES_SCHEMA, "systems": {}}
        if os.path.exists(a.out):
            doc = rp.load(a.out, rp.REFERENCES_SCHEMA)
    except rp.RunError as e:
        print(f"references.py: {e}", file=sys.stderr)
        return 1
    tests["source"] = {"run": os.path.abspath(a.run), "tolerance": a.tolerance,
                       "both_sides": a.both_sides, "filter": a.filter,
                       "created": datetime.datetime.now(datetime.timezone.utc)
                       .strftime("%Y-%m-%dT%H:%M:%SZ")}
    doc["systems"][a.system] = tests
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    n = sum(len(t.get("references", {})) for t in tests.values() if isinstance(t, dict))
    print(f"{a.out}: {n} references for system {a.system} from {a.run}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
