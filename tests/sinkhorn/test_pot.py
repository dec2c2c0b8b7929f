#!/usr/bin/env python3
"""rooflab's Sinkhorn solves agree with POT's on random problems.

usage: test_pot.py SOLVE_CLI   (the `rooflab sinkhorn` subcommand, or the test helper
sinkhorn_solve_cli that runs the same solve_main). Exit 77 (CTest skip) if POT is missing.

Balanced: ot.sinkhorn (sinkhorn_knopp) against every rooflab variant; unbalanced:
ot.unbalanced.sinkhorn_unbalanced against fused_uv (the only variant running POT's UOT
iteration). Both sides run to a tight tolerance; plans must agree to 1e-6 relative, element
by element.
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    import ot
except ImportError as e:
    print(f"SKIP: POT (python3-pot / pip 'pot') is not importable: {e}")
    sys.exit(77)

RTOL = 1e-6


def problem(rng, m, n, mass_b=1.0):
    x, y = rng.random((m, 2)), rng.random((n, 2))
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    a = rng.random(m) + 0.5
    b = rng.random(n) + 0.5
    return C, a / a.sum(), mass_b * b / b.sum()


def rooflab(cli, tmp, C, a, b, reg, variant, reg_m=None, threads=1):
    paths = {k: os.path.join(tmp, k + ".txt") for k in ("C", "a", "b", "plan")}
    np.savetxt(paths["C"], C, fmt="%.17g")
    np.savetxt(paths["a"], a, fmt="%.17g")
    np.savetxt(paths["b"], b, fmt="%.17g")
    cmd = [cli, "--cost", paths["C"], "--a", paths["a"], "--b", paths["b"], "--reg", repr(reg),
           "--variant", variant, "--tol", "1e-14", "--max-iter", "20000", "--check-every", "1",
           "--threads", str(threads), "--plan", paths["plan"]]
    if reg_m is not None:
        cmd += ["--reg-m", repr(reg_m)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return np.loadtxt(paths["plan"], ndmin=2), json.loads(out)


def max_rel(x, y):
    return float(np.max(np.abs(x - y) / np.abs(y)))


def main():
    cli = sys.argv[1]
    rng = np.random.default_rng(20240611)
    failures = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # POT's "did not converge" chatter; we check the result
        for m, n, reg in ((20, 30, 0.1), (57, 41, 0.05), (100, 100, 0.02), (1, 9, 0.1)):
            C, a, b = problem(rng, m, n)
            ref = ot.sinkhorn(a, b, C, reg, numItermax=100000, stopThr=1e-15)
            for variant, threads in (("typical", 1), ("c2r", 2), ("blocked", 1),
                                     ("microkernel", 2), ("mapuot", 2), ("fused_uv", 1), ("fused_uv", 3)):
                plan, info = rooflab(cli, tmp, C, a, b, reg, variant, threads=threads)
                err = max_rel(plan, ref)
                tag = f"balanced {m}x{n} reg={reg} {variant} threads={threads}"
                print(f"{tag}: {info['iterations']} iterations, max rel diff {err:.2e}")
                if err > RTOL or not info["converged"]:
                    failures.append(f"{tag}: {err:.3e} (converged={info['converged']})")
        for m, n, reg, reg_m, mass_b in ((20, 30, 0.1, 1.0, 1.0), (57, 41, 0.05, 0.1, 1.7), (64, 64, 0.03, 5.0, 0.6)):
            C, a, b = problem(rng, m, n, mass_b)
            ref = ot.unbalanced.sinkhorn_unbalanced(a, b, C, reg, reg_m, numItermax=100000, stopThr=1e-15)
            for threads in (1, 2):
                plan, info = rooflab(cli, tmp, C, a, b, reg, "fused_uv", reg_m=reg_m, threads=threads)
                err = max_rel(plan, ref)
                tag = f"unbalanced {m}x{n} reg={reg} reg_m={reg_m} threads={threads}"
                print(f"{tag}: {info['iterations']} iterations, max rel diff {err:.2e}")
                if err > RTOL or not info["converged"]:
                    failures.append(f"{tag}: {err:.3e} (converged={info['converged']})")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("all plans agree with POT to", RTOL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
