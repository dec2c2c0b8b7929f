#!/usr/bin/env python3
"""The shape of the bandwidth curve, counted instead of timed: callgrind counts the instructions
of one timed sample of every bandwidth kernel (shape_probe: the calls measure_bandwidth makes)
at the sweep's sizes from 4 KiB to 64 KiB, powers of two and the sizes between. Per ISA and
curve, instructions per byte moved must stay within the tolerance (10%) across sizes: a loop
tail, a dependent scalar chain or a per-call reduction would make some sizes cost more per byte,
which is the saw tooth the timed curve showed. valgrind runs AVX2 but not AVX-512 code, so the
scalar and avx2 tables are counted (the avx512 one is built from the same template).

usage: check_shape.py PROBE OUTDIR [TOLERANCE]    exit 0 flat, 1 not flat or no data, 77 no valgrind
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    probe, out = sys.argv[1], Path(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) == 4 else 0.10
    valgrind = shutil.which("valgrind")
    if not valgrind:
        print("SKIP: valgrind not found on PATH (Debian: valgrind)")
        return 77
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("cg.out*"):
        f.unlink()
    r = subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={out}/cg.out",
                        "--dump-instr=no", "--dump-line=no", probe, "scalar", "avx2"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print(f"valgrind {probe} exited {r.returncode}:\n{r.stderr[-2000:]}", file=sys.stderr)
        return 1
    for line in r.stdout.splitlines():
        if line.startswith("unsupported"):
            print(f"note: {line} (valgrind's CPU lacks it): not counted")
    ir = {}
    for f in out.glob("cg.out.*"):
        text = f.read_text()
        tag = re.search(r"^desc: Trigger: Client Request: (shape .*)$", text, re.M)
        total = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
        if tag and total:
            ir[tag.group(1)] = int(total.group(1))
    tags = [line for line in r.stdout.splitlines() if line.startswith("shape ")]
    if not tags:
        print("the probe ran no kernel", file=sys.stderr)
        return 1
    missing = [t for t in tags if t not in ir]
    if missing:
        print(f"no callgrind dump for {len(missing)} sample(s), e.g. '{missing[0]}' "
              "(was shape_probe built without valgrind/callgrind.h?)", file=sys.stderr)
        return 1
    curves = {}
    for t in tags:
        _, isa, curve, ws, traffic = t.split()
        curves.setdefault((isa, curve), []).append((int(ws), ir[t] / int(traffic)))
    bad = []
    print(f"{'isa':7} {'curve':10} {'instr/B min':>11} {'max':>7} {'max/min':>7}  sizes")
    for (isa, curve), pts in sorted(curves.items()):
        lo = min(pts, key=lambda p: p[1])
        hi = max(pts, key=lambda p: p[1])
        ratio = hi[1] / lo[1]
        flag = "" if ratio <= 1 + tol else f"  NOT FLAT: {hi[0]} B costs {ratio:.2f}x {lo[0]} B"
        print(f"{isa:7} {curve:10} {lo[1]:11.4f} {hi[1]:7.4f} {ratio:7.3f}  {len(pts)}{flag}")
        if flag:
            bad.append(f"{isa} {curve}:{flag.strip()}")
    if bad:
        print(f"instructions per byte vary by more than {tol:.0%} across sizes:\n  " + "\n  ".join(bad),
              file=sys.stderr)
        return 1
    print(f"flat within {tol:.0%}: {len(curves)} curves x {len(next(iter(curves.values())))} sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
