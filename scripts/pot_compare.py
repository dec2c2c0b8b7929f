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

Each row also records the DRAM bytes one iteration must move (the variant's traffic floor:
POT 2 mat-vecs + 1/10 of a check pass over K; fused_uv 1 read of K; mapuot 1 read + 1 write;
c2r / microkernel row pass 1 read + 1 write, column pass 1 read + 1 read + 1 write) and the
bandwidth that implies, so a speedup can be checked against what the memory system allows.
Run timings under the machine's timing lock:

  flock /tmp/rooflab-timing.lock scripts/pot_compare.py --rooflab "build/release/rooflab sinkhorn" \
      --sizes 1024,4096 --threads 2 --out results/pot_compare.json
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time


# DRAM passes over the M x N matrix per iteration (reads + writes, f64 elements): the traffic
# floor of each rooflab variant, as in its roofline model.
VARIANT_PASSES = {"fused_uv": 1, "mapuot": 2, "c2r": 5, "microkernel": 5, "blocked": 5}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rooflab", required=True,
                   help="command prefix running the solve, e.g. 'build/release/rooflab sinkhorn'")
    p.add_argument("--sizes", default="1024,2048,4096", help="square sizes N (comma separated)")
    p.add_argument("--iters", type=int, default=20,
                   help="iterations per solve, a multiple of 10 (default 20; POT also runs 2x this)")
    p.add_argument("--reps", type=int, default=3, help="repetitions; the minimum is reported")
    p.add_argument("--reg", type=float, default=0.05)
    p.add_argument("--reg-m", type=float, default=None, help="unbalanced: POT's reg_m")
    p.add_argument("--threads", type=int, default=1, help="threads for both (BLAS threads for POT)")
    p.add_argument("--variants", default="fused_uv,mapuot,microkernel,c2r")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    return p.parse_args()


def main():
    args = parse_args()
    if args.iters < 10 or args.iters % 10:
        sys.exit(f"pot_compare: --iters must be a positive multiple of 10 (POT checks every 10th iteration), got {args.iters}")
    # BLAS threads must be fixed before numpy loads.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        import numpy as np
        import ot
    except ImportError as e:
        sys.exit(f"pot_compare: POT is not importable ({e}); install python3-pot")

    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
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
            short = min(pot_solve(args.iters) for _ in range(args.reps))
            long_ = min(pot_solve(2 * args.iters) for _ in range(args.reps))
        pot_s = (long_ - short) / args.iters
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
                out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
                if best is None or out["seconds_per_iteration"] < best["seconds_per_iteration"]:
                    best = out
            s = best["seconds_per_iteration"]
            nbytes = VARIANT_PASSES.get(variant, 0) * mn
            row = {"impl": "rooflab", "variant": variant, "isa": best["isa"], "N": n, "threads": args.threads,
                   "seconds_per_iteration": s, "speedup_vs_pot": pot_s / s}
            if nbytes:
                row.update({"bytes_per_iteration": nbytes, "gbps": nbytes / s / 1e9,
                            "traffic_ratio_pot": pot_bytes / nbytes})
            rows.append(row)
            print(f"{n}x{n} rooflab {variant}/{best['isa'] or '-'}: {s * 1e3:.2f} ms/iteration "
                  f"({pot_s / s:.1f}x POT" + (f"; {nbytes / s / 1e9:.1f} GB/s, POT moves "
                                              f"{pot_bytes / nbytes:.1f}x its bytes)" if nbytes else ")"), flush=True)
    result = {"schema": "rooflab.pot_compare/1", "reg": args.reg, "reg_m": args.reg_m, "iters": args.iters,
              "reps": args.reps, "pot_version": ot.__version__, "rows": rows}
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
