"""Communication model vs measurement. Left: the ping-pong (ranks 0 and 1) and the fitted
alpha + bytes / beta line, with MPI_Allreduce over the calibration's ranks and the model's
MPICH prediction. Right: each design's measured allreduce time (--comm-only runs) against the
model's prediction; hollow markers are oversubscribed runs (more ranks than CPUs)."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import figure_common as fc
import mpi_data
from figure_common import plt
from mpi_scaling import STYLE


@dataclass
class ModelResult:
    out_path: Path
    comm: pd.DataFrame  # comm-only runs with predicted_comm_s and ratio = measured / predicted


def comm_rows(runs: pd.DataFrame) -> pd.DataFrame:
    c = runs[runs.comm_only & runs.predicted_comm_s.notna() & (runs.predicted_comm_s > 0)].copy()
    c["ratio"] = c.comm_time_per_iter_s / c.predicted_comm_s
    return c.sort_values(["design", "ranks", "ranks_per_node"]).reset_index(drop=True)


def plot(run_dir, out_path) -> ModelResult:
    sw = mpi_data.load(run_dir)
    pp = sw.pingpong
    c = comm_rows(sw.runs)
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(13, 5))

    pts = pd.DataFrame(pp.get("points", []))
    if not pts.empty:
        a0.loglog(pts.bytes, pts.seconds * 1e6, "o", color="#1f77b4", label="ping-pong (half round trip)")
        xs = np.logspace(math.log10(pts.bytes.min()), math.log10(pts.bytes.max()), 100)
        a0.loglog(xs, (pp["alpha_s"] + xs / pp["beta_bytes_per_s"]) * 1e6, "-", color="#1f77b4",
                  label=f"alpha = {pp['alpha_s'] * 1e6:.2f} µs, beta = {pp['beta_bytes_per_s'] / 1e9:.2f} GB/s "
                        f"(rms rel. err {pp.get('fit', {}).get('rms_rel_err', float('nan')):.0%})")
    ar = pd.DataFrame(pp.get("allreduce", {}).get("points", []))
    if not ar.empty:
        n = pp.get("allreduce", {}).get("ranks", "?")
        a0.loglog(ar.bytes, ar.seconds * 1e6, "s", color="#d62728", label=f"MPI_Allreduce, {n} ranks")
        a0.loglog(ar.bytes, ar.predicted_s * 1e6, "--", color="#d62728", label="model (MPICH's algorithm)")
    a0.set_xlabel("message bytes")
    a0.set_ylabel("time (µs)")
    a0.set_title("calibration")
    a0.grid(True, which="both", alpha=0.3)
    a0.legend(fontsize=8)

    if c.empty:
        a1.text(0.5, 0.5, "no --comm-only runs with a model", ha="center", transform=a1.transAxes)
    else:
        for d in mpi_data.DESIGNS:
            g = c[c.design == d]
            if g.empty:
                continue
            color, marker = STYLE[d]
            for over, face in ((False, color), (True, "none")):
                h = g[g.oversubscribed == over]
                if not h.empty:
                    a1.loglog(h.predicted_comm_s * 1e6, h.comm_time_per_iter_s * 1e6, marker, mfc=face, color=color,
                              ls="none", label=f"{d}" + (" (oversubscribed)" if over else ""))
        lo = min(c.predicted_comm_s.min(), c.comm_time_per_iter_s.min()) * 1e6 / 1.5
        hi = max(c.predicted_comm_s.max(), c.comm_time_per_iter_s.max()) * 1e6 * 1.5
        a1.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="measured = predicted")
        a1.set_xlim(lo, hi)
        a1.set_ylim(lo, hi)
        ok = c[~c.oversubscribed]
        if not ok.empty:
            a1.text(0.02, 0.98, f"not oversubscribed: measured / predicted median {ok.ratio.median():.2f} "
                                f"(range {ok.ratio.min():.2f} .. {ok.ratio.max():.2f})",
                    transform=a1.transAxes, va="top", fontsize=8)
        a1.legend(fontsize=8, loc="lower right")
    a1.set_xlabel("predicted allreduce time (µs)")
    a1.set_ylabel("measured allreduce time (µs, max over ranks)")
    a1.set_title("each design's allreduce")
    a1.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"alpha-beta model vs measurement — {Path(run_dir).name}")
    fig.tight_layout()
    return ModelResult(fc.save(fig, out_path), c)


if __name__ == "__main__":
    sys.exit(fc.main(__doc__, plot))
