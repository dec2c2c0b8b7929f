"""Model vs measurement. Left: the calibration, the ping-pong (ranks 0 and 1) with the fitted
alpha + bytes / beta line and MPI_Allreduce over the calibration's ranks against the model's
MPICH prediction, plus the core-sharing constants (--timeslice). Middle: each design's
allreduce alone (--comm-only runs) against the model (mpi_sweep.json's model_table); right: the full
iteration against the model. Colour: regime (one core per rank; ranks sharing cores while MPI
busy-polls; sharing with --wait yield); marker: design."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.data import mpi as mpi_data
from rooflab.figures.common import plt
from rooflab.figures.mpi_scaling import STYLE

# the regimes of mpi_sweep.json's model_table (docs/json.md)
REGIME_COLOR = {"unshared": "#2ca02c", "shared-spin": "#d62728", "shared-yield": "#1f77b4"}

@dataclass
class ModelResult:
    out_path: Path
    table: pd.DataFrame  # the stored model_table: one row per full run, comm from its --comm-only twin


def _calibration(ax, sw):
    pp = sw.pingpong
    pts = pd.DataFrame(pp.get("points", []))
    if not pts.empty:
        ax.loglog(pts.bytes, pts.seconds * 1e6, "o", color="#1f77b4", label="ping-pong (half round trip)")
        xs = np.logspace(math.log10(pts.bytes.min()), math.log10(pts.bytes.max()), 100)
        ax.loglog(xs, (pp["alpha_s"] + xs / pp["beta_bytes_per_s"]) * 1e6, "-", color="#1f77b4",
                  label=f"alpha = {pp['alpha_s'] * 1e6:.2f} µs, beta = {pp['beta_bytes_per_s'] / 1e9:.2f} GB/s "
                        f"(rms rel. err {pp.get('fit', {}).get('rms_rel_err', float('nan')):.0%})")
    ar = pd.DataFrame(pp.get("allreduce", {}).get("points", []))
    if not ar.empty:
        n = pp.get("allreduce", {}).get("ranks", "?")
        ax.loglog(ar.bytes, ar.seconds * 1e6, "s", color="#d62728", label=f"MPI_Allreduce, {n} ranks")
        ax.loglog(ar.bytes, ar.predicted_s * 1e6, "--", color="#d62728", label="model (MPICH's algorithm)")
    ts = sw.timeslice
    if ts.get("spin_gap_s"):
        ax.axhline(ts["spin_gap_s"] * 1e6, color="#555555", lw=0.8, ls="-.",
                   label=f"shared core, busy-polling: wait {ts['spin_gap_s'] * 1e3:.2f} ms for a turn "
                         f"({ts.get('ranks')} ranks / {ts.get('cpus')} CPUs)")
    if ts.get("yield_round_s"):
        ax.axhline(ts["yield_round_s"] * 1e6, color="#555555", lw=0.8, ls=":",
                   label=f"shared core, MPI_Test + sched_yield turn: {ts['yield_round_s'] * 1e6:.1f} µs")
    ax.set_xlabel("message bytes")
    ax.set_ylabel("time (µs)")
    ax.set_title("calibration")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def _scatter(ax, t, pred, meas, ratio, what):
    g = t[t[pred].notna() & t[meas].notna() & (t[pred] > 0)]
    if g.empty:
        ax.text(0.5, 0.5, f"no {what} with a prediction", ha="center", transform=ax.transAxes)
        return
    for reg, color in REGIME_COLOR.items():
        for d in mpi_data.DESIGNS:
            h = g[(g.regime == reg) & (g.design == d)]
            if not h.empty:
                ax.loglog(h[pred] * 1e3, h[meas] * 1e3, STYLE[d][1], color=color, ls="none", alpha=0.8, markersize=5)
    lo = min(g[pred].min(), g[meas].min()) * 1e3 / 1.5
    hi = max(g[pred].max(), g[meas].max()) * 1e3 * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    lines = []
    for reg, color in REGIME_COLOR.items():
        r = g[g.regime == reg][ratio]
        if not r.empty:
            lines.append(f"{reg}: measured/predicted {r.median():.2f} (median), {r.min():.2f} .. {r.max():.2f}, "
                         f"{len(r)} runs")
    ax.text(0.02, 0.98, "\n".join(lines), transform=ax.transAxes, va="top", fontsize=7)
    ax.set_xlabel(f"predicted {what} (ms)")
    ax.set_ylabel(f"measured {what} (ms, max over ranks)")
    ax.grid(True, which="both", alpha=0.3)


def plot(run_dir, out_path) -> ModelResult:
    sw = mpi_data.load(run_dir)
    t = sw.model_table()
    fig, (a0, a1, a2) = plt.subplots(1, 3, figsize=(18, 5.4))
    _calibration(a0, sw)
    if t.empty:
        for a in (a1, a2):
            a.text(0.5, 0.5, sw.doc.get("model_error") or "no runs with more than one rank", ha="center",
                   transform=a.transAxes, wrap=True)
    else:
        _scatter(a1, t, "predicted_comm_s", "measured_comm_s", "comm_ratio", "allreduce time")
        a1.set_title("the allreduce alone (--comm-only)")
        _scatter(a2, t, "predicted_iter_s", "measured_iter_s", "iter_ratio", "time per iteration")
        a2.set_title("full iteration")
        handles = [plt.Line2D([], [], color=c, marker="o", ls="none", label=r) for r, c in REGIME_COLOR.items()]
        handles += [plt.Line2D([], [], color="k", marker=STYLE[d][1], ls="none", label=d) for d in mpi_data.DESIGNS]
        a2.legend(handles=handles, fontsize=7, loc="lower right")
    fig.suptitle(f"model from measured constants vs measurement, {sw.cpus} CPUs — {Path(run_dir).name}")
    fig.tight_layout()
    return ModelResult(fc.save(fig, out_path), t)
