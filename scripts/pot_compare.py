#!/usr/bin/env python3
"""Per-iteration time of POT and rooflab's Sinkhorn solves on the same inputs, in one run.

Both sides solve the same problem: the grid cost C[i][j] = (i/M - (j+0.5)/N)^2 (rooflab's
`--grid MxN`), uniform marginals, reg, and for --reg-m the unbalanced problem. POT runs
ot.sinkhorn (sinkhorn_knopp) / ot.unbalanced.sinkhorn_unbalanced with stopThr=0 and a
fixed numItermax, timed around the call minus the time to build K = exp(-C/reg) (which POT
does inside the call); rooflab runs `sinkhorn --tol 0 --max-iter K` and reports its own
iteration time (no K setup, no checks). Run timings under the machine's timing lock:

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


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rooflab", required=True,
                   help="command prefix running the solve, e.g. 'build/release/rooflab sinkhorn'")
    p.add_argument("--sizes", default="1024,2048,4096", help="square sizes N (comma separated)")
    p.add_argument("--iters", type=int, default=20, help="iterations per solve (default 20)")
    p.add_argument("--reps", type=int, default=3, help="repetitions; the minimum is reported")
    p.add_argument("--reg", type=float, default=0.05)
    p.add_argument("--reg-m", type=float, default=None, help="unbalanced: POT's reg_m")
    p.add_argument("--threads", type=int, default=1, help="threads for both (BLAS threads for POT)")
    p.add_argument("--variants", default="fused_uv,mapuot,microkernel,c2r")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    return p.parse_args()


def main():
    args = parse_args()
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

        def pot_once():
            t0 = time.perf_counter()
            if args.reg_m is None:
                ot.sinkhorn(a, b, C, args.reg, numItermax=args.iters, stopThr=0)
            else:
                ot.unbalanced.sinkhorn_unbalanced(a, b, C, args.reg, args.reg_m, numItermax=args.iters, stopThr=0)
            t1 = time.perf_counter()
            np.exp(C / -args.reg)  # the K setup inside the call, subtracted
            return (t1 - t0) - (time.perf_counter() - t1)

        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pot_s = min(pot_once() for _ in range(args.reps)) / args.iters
        rows.append({"impl": "pot", "variant": "sinkhorn_knopp" if args.reg_m is None else "sinkhorn_knopp_unbalanced",
                     "N": n, "threads": args.threads, "seconds_per_iteration": pot_s})
        print(f"{n}x{n} POT: {pot_s * 1e3:.2f} ms/iteration", flush=True)
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
            rows.append({"impl": "rooflab", "variant": variant, "isa": best["isa"], "N": n, "threads": args.threads,
                         "seconds_per_iteration": s, "speedup_vs_pot": pot_s / s})
            print(f"{n}x{n} rooflab {variant}/{best['isa'] or '-'}: {s * 1e3:.2f} ms/iteration "
                  f"({pot_s / s:.1f}x POT)", flush=True)
    result = {"schema": "rooflab.pot_compare/1", "reg": args.reg, "reg_m": args.reg_m, "iters": args.iters,
              "reps": args.reps, "pot_version": ot.__version__, "rows": rows}
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
