#!/usr/bin/env python3
"""Per-iteration time of POT and rooflab's Sinkhorn solves on the same inputs, in one run.

Both sides solve the same problem: the grid cost C[i][j] = (i/M - (j+0.5)/N)^2 (rooflab's
`--grid MxN`), uniform marginals, reg, and for --reg-m the unbalanced problem. POT runs
ot.sinkhorn (sinkhorn_knopp) / ot.unbalanced.sinkhorn_unbalanced with stopThr=0 and a
fixed numItermax. Its per-iteration time is the difference of two solves, 2K and K
iterations (K a multiple of 10), divided by K: everything POT does once per call (K =
exp(-C/reg), Kp = K / a, allocations) cancels, while its marginal check every 10th
iteration (one more pass over K) stays in, as it is part of POT's iteration. rooflab runs
`sinkhorn --tol 0 --max-iter K` and reports its own iteration time (no K setup, no checks).

Each row also records the DRAM bytes one iteration must move and the bandwidth that implies,
so a speedup can be checked against what the memory system allows: POT 2 mat-vecs + 1/10 of a
check pass over K; a rooflab variant's traffic floor as its solve reports it
(bytes_per_iteration: the family model's traffic of one iteration).
Run timings under the machine's timing lock:

  flock /tmp/rooflab-timing.lock scripts/pot_compare.py --rooflab "build/release/rooflab sinkhorn" \
      --sizes 1024,4096 --threads 2 --out results/pot_compare.json
"""
import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plots"))
from rooflab import cli  # noqa: E402
from rooflab.data.jsonfile import RooflabDataError, parse_text, write_json_atomic  # noqa: E402

PROG = "scripts/pot_compare.py"


class Failure(Exception):
    """One line for stderr, exit 1."""


def positive_float(text: str) -> float:
    v = cli.finite_float(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return v


def sizes(text: str) -> list[int]:
    return [cli.positive_int(s) for s in text.split(",")]


def parse_args(argv=None):
    p = cli.Parser("scripts/pot_compare.py", "--rooflab CMD [--sizes N,N] [--iters K] [--reps R] [--reg X] "
                   "[--reg-m X] [--threads T] [--variants V,V] [--out FILE]", description=__doc__,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rooflab", required=True,
                   help="command prefix running the solve, e.g. 'build/release/rooflab sinkhorn'")
    p.add_argument("--sizes", type=sizes, default=[1024, 2048, 4096], help="square sizes N (comma separated)")
    p.add_argument("--iters", type=cli.positive_int, default=20,
                   help="iterations per solve, a multiple of 10 (default 20; POT also runs 2x this)")
    p.add_argument("--reps", type=cli.positive_int, default=3, help="repetitions; the minimum is reported")
    p.add_argument("--reg", type=positive_float, default=0.05)
    p.add_argument("--reg-m", type=positive_float, default=None, help="unbalanced: POT's reg_m")
    p.add_argument("--threads", type=cli.positive_int, default=1, help="threads for both (BLAS threads for POT)")
    p.add_argument("--variants", default="fused_uv,mapuot,microkernel,blocked,c2r")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    a = p.parse_args(argv)
    if a.iters % 10:
        p.error(f"--iters must be a multiple of 10 (POT checks every 10th iteration), got {a.iters}")
    return a


def solve(cmd: list[str]) -> dict:
    """One `rooflab sinkhorn` run's JSON (rooflab.sinkhorn_solve/1), checked."""
    what = shlex.join(cmd)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise Failure(f"cannot run {what}: {e.strerror or e}") from None
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise Failure(f"{what} failed (exit {p.returncode}): {last}")
    doc = parse_text(p.stdout, f"the output of {what}")
    for key in ("seconds_per_iteration", "bytes_per_iteration"):
        t = doc.get(key) if isinstance(doc, dict) else None
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not t > 0:
            raise Failure(f"the output of {what}: {key} is {t!r}, expected a positive number")
    return doc


def main(argv=None) -> int:
    args = parse_args(argv)
    # BLAS threads must be fixed before numpy loads.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        import numpy as np
        import ot
    except ImportError as e:
        raise Failure(f"POT is not importable ({e}); install python3-pot") from None

    rows = []
    for n in args.sizes:
        i = np.arange(n) / n
        j = (np.arange(n) + 0.5) / n
        C = (i[:, None] - j[None, :]) ** 2
        a = np.full(n, 1.0 / n)
        b = np.full(n, 1.0 / n)

        def pot_solve(iters):
            t0 = time.perf_counter()
            if args.reg_m is None:
                ot.sinkhorn(a, b, C, args.reg, numItermax=iters, stopThr=0)
            else:
                ot.unbalanced.sinkhorn_unbalanced(a, b, C, args.reg, args.reg_m, numItermax=iters, stopThr=0)
            return time.perf_counter() - t0

        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pot_solve(args.iters)  # untimed: the first call's one-time costs would land in `short` only
            short = min(pot_solve(args.iters) for _ in range(args.reps))
            long_ = min(pot_solve(2 * args.iters) for _ in range(args.reps))
        pot_s = (long_ - short) / args.iters
        if not pot_s > 0:
            raise Failure(f"{n}x{n}: POT's {2 * args.iters} iterations took no longer than {args.iters}: raise --iters")
        mn = 8.0 * n * n  # bytes of K (f64)
        pot_bytes = 2 * mn + mn / 10  # K^T u and K v, plus the every-10th marginal check
        rows.append({"impl": "pot", "variant": "sinkhorn_knopp" if args.reg_m is None else "sinkhorn_knopp_unbalanced",
                     "N": n, "threads": args.threads, "seconds_per_iteration": pot_s,
                     "bytes_per_iteration": pot_bytes, "gbps": pot_bytes / pot_s / 1e9})
        print(f"{n}x{n} POT: {pot_s * 1e3:.2f} ms/iteration, {pot_bytes / 1e6:.0f} MB/iteration "
              f"({pot_bytes / pot_s / 1e9:.1f} GB/s)", flush=True)
        for variant in args.variants.split(","):
            if args.reg_m is not None and variant != "fused_uv":
                continue  # only fused_uv runs POT's unbalanced iteration
            cmd = shlex.split(args.rooflab) + ["--grid", f"{n}x{n}", "--reg", repr(args.reg), "--variant", variant,
                                               "--tol", "0", "--max-iter", str(args.iters),
                                               "--check-every", str(args.iters), "--threads", str(args.threads)]
            if args.reg_m is not None:
                cmd += ["--reg-m", repr(args.reg_m)]
            best = None
            for _ in range(args.reps):
                out = solve(cmd)
                if best is None or out["seconds_per_iteration"] < best["seconds_per_iteration"]:
                    best = out
            s = best["seconds_per_iteration"]
            nbytes = best["bytes_per_iteration"]
            rows.append({"impl": "rooflab", "variant": variant, "isa": best.get("isa"), "prefetch": best.get("prefetch"), "N": n,
                         "threads": args.threads, "seconds_per_iteration": s, "speedup_vs_pot": pot_s / s,
                         "bytes_per_iteration": nbytes, "gbps": nbytes / s / 1e9,
                         "traffic_ratio_pot": pot_bytes / nbytes})
            pf = f"/pf:{best['prefetch']}" if best.get("prefetch") not in (None, "l2") else ""
            print(f"{n}x{n} rooflab {variant}/{best.get('isa') or '-'}{pf}: {s * 1e3:.2f} ms/iteration "
                  f"({pot_s / s:.1f}x POT; {nbytes / s / 1e9:.1f} GB/s, POT moves "
                  f"{pot_bytes / nbytes:.1f}x its bytes)", flush=True)
    result = {"schema": "rooflab.pot_compare/1", "reg": args.reg, "reg_m": args.reg_m, "iters": args.iters,
              "reps": args.reps, "pot_version": ot.__version__, "rows": rows}
    if args.out:
        write_json_atomic(args.out, result)
    return 0


def run(argv=None) -> int:
    """main() with its errors as one line on stderr (exit 1), never a traceback."""
    try:
        return main(argv)
    except (Failure, RooflabDataError) as e:
        print(f"{PROG}: error: {' '.join(str(e).split())}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the last guard: one line, never a traceback
        print(f"{PROG}: error: internal error, please report it: {type(e).__name__}: {' '.join(str(e).split())}",
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(run())
