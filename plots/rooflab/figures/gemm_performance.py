"""GEMM per-shape performance (the SFC-CA paper's Fig. 6/9): GFLOP/s of every implementation on
every shape, the shapes sorted by operational intensity (2MNK / the minimal bytes of model.json),
with the roofline of machine.json for each shape (flops / model.json predicted_s: the FMA
ceiling or intensity x the bandwidth of the level the matrices live in), the FMA ceiling and,
when model.json's sfc_ca rows carry it (`rooflab model` with machine.json), the paper's tight
roofline: the per-BRGEMM model of SFC-CA at its best knob (gemm_data.tight_roofline).
One panel per dtype and thread count; the legend gives each implementation's WHM (plots/gemm_data.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.data import gemm as gd
from rooflab.figures.common import plt
from rooflab.data.run import load_run


@dataclass
class GemmPerfResult:
    out_path: Path
    has_data: bool
    points: pd.DataFrame                   # gemm_data.gemm_points() with "x", the position on the axis
    order: dict[tuple[str, int], list[str]]  # (dtype, threads) -> shapes ("MxNxK") in plotted order
    roofline: pd.DataFrame                 # dtype, threads, mnk, x, intensity, roof_gflops, tight_gflops
    fma: dict[tuple[str, int], float]      # (dtype, threads) -> FMA ceiling drawn
    omitted: list[str] = field(default_factory=list)


def shape_order(pts: pd.DataFrame) -> list[str]:
    """Shapes by increasing operational intensity (ties: by M, N, K)."""
    s = pts.drop_duplicates("mnk").sort_values(["intensity", "m", "n", "k"])
    return s["mnk"].tolist()


def plot(run_dir, out_path) -> GemmPerfResult:
    run = load_run(run_dir, required=("model",))
    pts, omitted = gd.gemm_points(run.model_df, gd.tight_roofline(run.run_dir))
    if pts.empty:
        out = fc.no_family_figure(gd.FAMILY, run.run_dir, out_path, omitted)
        return GemmPerfResult(out, False, pts, {}, pd.DataFrame(), {}, omitted)
    groups = [k for k, _ in pts.groupby(["dtype", "threads"], sort=True)]
    order, fma, roof_rows = {}, {}, []
    pts = pts.copy()
    pts["x"] = np.nan
    for dt, t in groups:
        sel = (pts["dtype"] == dt) & (pts.threads == t)
        order[(dt, t)] = shape_order(pts[sel])
        pos = {s: i for i, s in enumerate(order[(dt, t)])}
        pts.loc[sel, "x"] = pts.loc[sel, "mnk"].map(pos)
        # the prediction depends on the shape only: any row of the shape carries it
        for s, g in pts[sel].groupby("mnk"):
            r = g.iloc[0]
            roof_rows.append({"dtype": dt, "threads": t, "mnk": s, "x": pos[s], "intensity": r.intensity,
                              "roof_gflops": r.roof_gflops, "tight_gflops": r.tight_gflops})
        c = gd.fma_ceiling(run, dt, int(t))
        if c is not None:
            fma[(dt, int(t))] = c
    roofline = pd.DataFrame(roof_rows).sort_values(["dtype", "threads", "x"]).reset_index(drop=True)
    if roofline.roof_gflops.isna().all():
        omitted = ["model.json has no predictions (`rooflab model` had no machine.json): no roofline"] + omitted

    markers = "os^vD<>phx*+"
    nmax = max(len(v) for v in order.values())
    W = min(26, max(12, 0.14 * nmax + 5))
    foot = 0.3 + 0.14 * min(len(omitted), 7)
    H = 4.8 * len(groups) + 1.2 + foot
    fig, axes = plt.subplots(len(groups), 1, figsize=(W, H), squeeze=False)
    fig.subplots_adjust(left=0.7 / W, right=1 - 3.4 / W, top=1 - 0.9 / H, bottom=(foot + 0.9) / H, hspace=0.6)
    for ax, (dt, t) in zip(axes[:, 0], groups):
        g = pts[(pts["dtype"] == dt) & (pts.threads == t)]
        for i, (impl, d) in enumerate(sorted(g.groupby("impl"), key=lambda kv: -gd.whm(kv[1].flops, kv[1].gflops))):
            d = d.sort_values("x")
            w = gd.whm(d.flops, d.gflops)
            color, ls = fc.impl_style(impl)
            ax.plot(d.x, d.gflops, marker=markers[i % len(markers)], ms=4, lw=0.9, color=color, ls=ls,
                    label=f"{impl}: WHM {w:.1f} ({len(d)} shapes)", alpha=0.9)
        r = roofline[(roofline["dtype"] == dt) & (roofline.threads == t)]
        ax.step(r.x, r.roof_gflops, where="mid", color="k", lw=1.6, label="roofline (machine.json, per shape)")
        if r.tight_gflops.notna().any():
            ax.step(r.x, r.tight_gflops, where="mid", color="#b8860b", lw=1.6,
                    label="tight roofline (per-BRGEMM model, SFC-CA best knob)")
        if (dt, int(t)) in fma:
            ax.axhline(fma[(dt, int(t))], color="k", ls="--", lw=1,
                       label=f"fma_{dt} ceiling {fma[(dt, int(t))]:.1f}")
        shapes = order[(dt, t)]
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels(shapes, rotation=90, fontsize=7 if len(shapes) <= 40 else 5.5)
        ax.set_xlim(-0.7, len(shapes) - 0.3)
        ax.set_ylim(0, max(g.gflops.max(), r.roof_gflops.max() if r.roof_gflops.notna().any() else 0,
                           r.tight_gflops.max() if r.tight_gflops.notna().any() else 0,
                           fma.get((dt, int(t)), 0)) * 1.08)
        ax.set_ylabel("GFLOP/s")
        ax.grid(True, alpha=0.3)
        lo, hi = r.intensity.min(), r.intensity.max()
        ax.set_title(f"{dt}, {t} thread{'s' if t > 1 else ''}: {len(shapes)} shapes MxNxK sorted by operational "
                     f"intensity ({lo:.3g} .. {hi:.3g} flop/byte)", fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5,
                  title="implementation: WHM GFLOP/s", title_fontsize=8)
    fig.suptitle(f"GEMM GFLOP/s per shape vs roofline — {run.run_dir.name}", fontsize=12)
    fc.omitted_footer(fig, omitted)
    out = fc.save(fig, out_path)
    return GemmPerfResult(out, True, pts, order, roofline, fma, omitted)
