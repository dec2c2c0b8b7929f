#!/usr/bin/env python3
"""A/B of rooflab builds: the same cases timed by two or more builds in alternating order, in
the same minutes, so that the host's state (which moves a 2-vCPU guest's speed by 20% from hour
to hour) weighs on every build alike. For a change's effect, and for the CI gate's A/B against a
baseline's commit (scripts/perf_gate.sh: --pool, then `rooflab compare`; docs/measuring.md#ab).

usage: scripts/ab.py [--rounds N] [--reps R] [--min-time S] [--out DIR] [--pool] BIN [BIN ...] --case NAME [--case NAME ...]

BIN is a rooflab binary, LABEL=PATH (else labelled b0, b1, ...); the first is the reference. Each round runs one
`rooflab bench --case ...` process per build (every case verified first, as always; no in-cache
calibration runs, off for --case runs, so older builds take the same command), in
an order that gives every build every position equally often: round r takes the builds rotated
by (r - 1) // 2, reversed when r is even (two builds: A B, B A, B A, A B, ...). Per case and
build it prints the median over the rounds of time(reference) / time(build) (above 1: the build
is faster), their range, and the rounds it dropped because `rooflab bench` left a side
disturbed (docs/measuring.md). Writes OUT/LABEL-R/bench.json and OUT/ab.json; with --pool also
OUT/LABEL/bench.json: per case the repetitions of the rounds kept for it (of every round where
none was), for `rooflab compare OUT/REF OUT/LABEL`. Run it under `scripts/cpu_lock.sh time` and
beside nothing else.
Exit: 0 done, 1 a bench failed or nothing was comparable, 2 usage, 3 a case failed verification,
4 every round of every case left disturbed on a side (nothing judged: rerun on a quiet machine).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plots"))
try:  # bench.json is read as `rooflab compare` reads it; its packages live in the project's venv
    from rooflab.data.jsonfile import RooflabDataError
    from rooflab.gate import CompareError, load_bench, row_name
except ModuleNotFoundError as e:
    venv = ROOT / ".venv"
    if __name__ == "__main__" and (venv / "bin" / "python").exists() and Path(sys.prefix) != venv:
        os.execv(venv / "bin" / "python", [str(venv / "bin" / "python"), __file__, *sys.argv[1:]])
    sys.exit(f"scripts/ab.py: {e} (scripts/install_deps.sh makes the project's .venv)")


def order(nb: int, r: int) -> list[int]:
    """The builds' order in round r (1-based)."""
    k = (r - 1) // 2 % nb
    o = [(i + k) % nb for i in range(nb)]
    return o[::-1] if r % 2 == 0 else o


def parse_bin(s: str, i: int) -> tuple[str, str]:
    """LABEL=PATH (a label without '/'), else PATH labelled b<i>."""
    label, eq, path = s.partition("=")
    return (label, path) if eq and label and "/" not in label else (f"b{i}", s)


def times(bench: Path) -> dict[str, tuple[float | None, bool]]:
    """case (canonical name) -> (median of its repetitions' times in s or None, disturbed), as compare reads them."""
    _, sides = load_bench(bench)
    return {k: (statistics.median(v.times) if v.times else None, bool(v.disturbed)) for k, v in sides.items()}


def pool(out: Path, label: str, rounds: list[int], keep: dict[str, list[int]]) -> None:
    """OUT/LABEL/bench.json: the rows of each case from its kept rounds (all rounds where none was kept,
    so that compare shows it disturbed), in the first round's document."""
    docs = {r: json.loads((out / f"{label}-{r}" / "bench.json").read_text()) for r in rounds}
    rows = [b for r in rounds for b in docs[r]["benchmarks"]
            if r in (keep.get(row_name(b) or "") or rounds)]
    d = out / label
    d.mkdir(exist_ok=True)
    (d / "bench.json").write_text(json.dumps({**docs[rounds[0]], "benchmarks": rows}, indent=1) + "\n")


def run(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="scripts/ab.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bins", nargs="+", metavar="BIN", help="rooflab binaries (LABEL=PATH), the first the reference")
    ap.add_argument("--case", action="append", required=True, help="a benchmark name (repeatable)")
    ap.add_argument("--rounds", type=int, default=4, help="rounds, 1..99 (default 4)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per case per round, 1..99 (default 3)")
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds per repetition, > 0 (default 0.2)")
    ap.add_argument("--out", help="where the runs go (default: a new /tmp/rooflab-ab.* directory)")
    ap.add_argument("--pool", action="store_true", help="also write OUT/LABEL/bench.json, each case's kept rounds pooled")
    a = ap.parse_intermixed_args(argv)
    if not 1 <= a.rounds <= 99:
        ap.error(f"--rounds must be 1..99, got {a.rounds}")
    if not 1 <= a.reps <= 99:
        ap.error(f"--reps must be 1..99, got {a.reps}")
    if not a.min_time > 0:
        ap.error(f"--min-time must be > 0, got {a.min_time}")
    if len(a.bins) < 2:
        ap.error("give at least two builds to compare")
    bins = [parse_bin(s, i) for i, s in enumerate(a.bins)]
    labels = [lb for lb, _ in bins]
    if len(set(labels)) != len(labels):
        ap.error("two builds have the same label: name them LABEL=PATH")
    for lb, p in bins:
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            ap.error(f"{p} is not an executable")
    out = Path(a.out or tempfile.mkdtemp(prefix="rooflab-ab."))
    out.mkdir(parents=True, exist_ok=True)
    cases = [x for c in a.case for x in ("--case", c)]
    opts = [f"--benchmark_repetitions={a.reps}", f"--benchmark_min_time={a.min_time}"]

    got: dict[tuple[int, int], dict[str, tuple[float | None, bool]]] = {}
    for r in range(1, a.rounds + 1):
        for i in order(len(bins), r):
            lb, p = bins[i]
            d = out / f"{lb}-{r}"
            print(f"[ab] round {r}/{a.rounds}: {lb}", file=sys.stderr, flush=True)
            with open(out / f"{lb}-{r}.log", "w") as log:
                rc = subprocess.run([p, "bench", *cases, "--out", str(d), *opts], stdout=log, stderr=subprocess.STDOUT).returncode
            if rc != 0:
                what = "a case failed verification" if rc == 3 else f"exit {rc}"
                print(f"scripts/ab.py: {lb} (round {r}): {what}; see {out / f'{lb}-{r}.log'}", file=sys.stderr)
                return 3 if rc == 3 else 1
            try:
                got[i, r] = times(d / "bench.json")
            except (CompareError, RooflabDataError) as e:
                print(f"scripts/ab.py: {lb} (round {r}): {e}", file=sys.stderr)
                return 1

    result = {"schema": "rooflab.ab/1", "reference": labels[0], "rounds": a.rounds, "order": [[labels[i] for i in order(len(bins), r)] for r in range(1, a.rounds + 1)], "cases": {}}
    comparable, missing = False, False
    keep: dict[str, list[int]] = {}  # case -> the rounds no build left it disturbed in (for --pool)
    for c in got[0, 1]:  # the reference's names, canonical, in its order
        rows = {}
        keep[c] = [r for r in range(1, a.rounds + 1) if not any(got[i, r].get(c, (None, True))[1] for i in range(len(bins)))]
        for i in range(1, len(bins)):
            ratios, dropped, untimed = [], [], []
            for r in range(1, a.rounds + 1):
                (t0, d0), (t1, d1) = got[0, r].get(c, (None, False)), got[i, r].get(c, (None, False))
                if t0 is None or t1 is None:  # not timed by a build (a name it lacks): not the host's doing
                    untimed.append(r)
                elif d0 or d1:
                    dropped.append(r)
                else:
                    ratios.append(t0 / t1)
            rows[labels[i]] = {"ratios": ratios, "dropped_rounds": dropped, "untimed_rounds": untimed,
                               "median": statistics.median(ratios) if ratios else None}
            comparable |= bool(ratios)
            missing |= bool(untimed)
            m = f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} rounds)" if ratios else "no round"
            print(f"{labels[0]} / {labels[i]}: {m}{f', dropped (disturbed) {dropped}' if dropped else ''}"
                  f"{f', not timed by a build in rounds {untimed}' if untimed else ''}  {c}")
        result["cases"][c] = rows
    (out / "ab.json").write_text(json.dumps(result, indent=1) + "\n")
    if a.pool:
        for lb in labels:
            pool(out, lb, list(range(1, a.rounds + 1)), keep)
    print(f"[ab] time(reference) / time(build), median over rounds: above 1 the build is faster; {out}/ab.json", file=sys.stderr)
    if not comparable:
        print("scripts/ab.py: nothing compared: " + ("a case has no times in a build's runs" if missing
              else "every round of every case left disturbed on a side (rerun on a quiet machine)"), file=sys.stderr)
        return 1 if missing else 4
    return 0


if __name__ == "__main__":
    try:
        sys.exit(run(sys.argv[1:]))
    except KeyboardInterrupt:
        print("scripts/ab.py: interrupted", file=sys.stderr)
        sys.exit(130)
