"""Sinkhorn per-iteration figures (MAP-UOT Figs. 9 and 10): (a) median time of one iteration
(`part:iter`, and the fused mapuot / fused_uv, which have no part) vs problem size per variant
at 1 thread; (b) attained bandwidth as a fraction of the measured DRAM ceiling for the rows
the model places in DRAM (model.json `gbps` / `ceiling_gbps`: the DRAM bandwidth of the row's
read/copy/update traffic mix at its thread count, from machine.json); (c) thread scaling, 1 thread vs more, for every case run at both."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import load_run

FAMILY = "sinkhorn"
DTYPE_STYLE = {"f64": "-", "f32": "--"}


@dataclass
class IterationResult:
    out_path: Path
    has_data: bool
    per_iter: pd.DataFrame   # name, series, dtype, dims, cells, threads, median_s (the 1-thread panel)
    bandwidth: pd.DataFrame  # name, label, dtype, dims, threads, gbps, dram_gbps, fraction
    scaling: pd.DataFrame    # label, dtype, dims, threads, t1_s, tn_s, speedup (= t1_s / tn_s)
    omitted: list[str] = field(default_factory=list)


def _params_label(params: dict) -> str:
    return " ".join(f"{k}:{v}" for k, v in params.items() if k != "part")


def iteration_rows(model: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """OK rows that time one whole iteration, with label columns; plus the not-plotted rows."""
    ok, omitted = fc.family_rows(model, FAMILY)
    it = ok.loc[np.array([p.get("part", "iter") == "iter" for p in ok.params], dtype=bool)].copy()
    it["dims_s"] = [fc.dims_label(d) for d in it.dims]
    it["cells"] = [float(np.prod(d)) for d in it.dims]
    it["vlabel"] = [fc.variant_label(r) for _, r in it.iterrows()]
    it["plabel"] = [_params_label(p) for p in it.params]
    it["series"] = [" ".join(x for x in (r.vlabel, r["dtype"], r.plabel) if x) for _, r in it.iterrows()]
    return it, omitted


def bandwidth_data(it: pd.DataFrame) -> pd.DataFrame:
    """Rows the model places in DRAM: their ceiling_gbps is then the measured DRAM bandwidth of
    the row's traffic mix (read / copy / update kernels) at its thread count, so the fraction is
    attained / DRAM ceiling (= the efficiency of a memory-bound row). Rows without a prediction
    have no ceiling and are left out."""
    d = it[(it.level == "DRAM") & (it.ceiling_gbps > 0)]
    rows = []
    for _, r in d.sort_values(["dtype", "cells", "threads", "vlabel", "plabel"]).iterrows():
        rows.append({"name": r["name"], "label": f"{r.series} {r.dims_s} {r.threads}T", "dtype": r["dtype"],
                     "dims": r.dims_s, "threads": int(r.threads), "gbps": r.gbps, "dram_gbps": r.ceiling_gbps,
                     "fraction": r.gbps / r.ceiling_gbps})
    return pd.DataFrame(rows, columns=["name", "label", "dtype", "dims", "threads", "gbps", "dram_gbps", "fraction"])


def scaling_data(it: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (series, dims), g in it.groupby(["series", "dims_s"], sort=True):
        one = g[g.threads == 1]
        if one.empty:
            continue
        for _, r in g[g.threads > 1].sort_values("threads").iterrows():
            t1 = float(one.median_s.iloc[0])
            rows.append({"label": f"{series} {dims}", "dtype": r["dtype"], "dims": dims, "threads": int(r.threads),
                         "t1_s": t1, "tn_s": r.median_s, "speedup": t1 / r.median_s})
    return pd.DataFrame(rows, columns=["label", "dtype", "dims", "threads", "t1_s", "tn_s", "speedup"])


def _hbars(ax, labels, values, fmt, color):
    y = np.arange(len(labels))
    ax.barh(y, np.where(np.isfinite(values), values, 0), height=0.7, color=color, edgecolor="k", lw=0.4)
    ax.set_ylim(max(len(labels), 6) - 0.5, -0.5)  # few bars stay thin
    for yi, v in zip(y, values):
        ax.text(v if np.isfinite(v) else 0, yi, f" {fmt(v)}" if np.isfinite(v) else " n/a", va="center", fontsize=7.5)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7.5)
    ax.grid(True, axis="x", alpha=0.3)
    ax.margins(x=0.15)


def plot(run_dir, out_path) -> IterationResult:
    run = load_run(run_dir, required=("model",))
    it, omitted = iteration_rows(run.model_df)
    bw = bandwidth_data(it)
    sc = scaling_data(it)
    one = it[it.threads == 1].sort_values(["series", "cells"])
    per_iter = one[["name", "series", "dtype", "dims_s", "cells", "threads", "median_s"]].rename(columns={"dims_s": "dims"})
    if it.empty:
        if (run.model_df.family == FAMILY).any() and not omitted:
            out = fc.note_figure(f"Sinkhorn per-iteration time — {run.run_dir.name}",
                                 ["no sinkhorn rows timing a whole iteration (part:iter, mapuot, fused_uv)"], out_path)
        else:
            out = fc.no_family_figure(FAMILY, run.run_dir, out_path, omitted)
        return IterationResult(out, False, per_iter, bw, sc, omitted)

    nb = max(len(bw), len(sc), 3)
    h_top, h_bot, foot = 4.6, 0.24 * nb + 0.8, 0.3 + 0.14 * min(len(omitted), 7)
    H = h_top + h_bot + foot + 1.6
    fig = plt.figure(figsize=(14, H))
    top_a, bot_a = 1 - 0.75 / H, 1 - (0.75 + h_top) / H
    gs_a = fig.add_gridspec(1, 1, left=0.07, right=0.76, top=top_a, bottom=bot_a)
    gs_b = fig.add_gridspec(1, 2, left=0.22, right=0.97, top=bot_a - 1.3 / H, bottom=(foot + 0.45) / H, wspace=0.95)
    ax = fig.add_subplot(gs_a[0, 0])
    # (a) sizes as categories (sorted by M*N): 1x4097 and 4097x1 hold as many cells but are different problems.
    sizes = one.drop_duplicates("dims_s").sort_values(["cells", "dims_s"]).dims_s.tolist()
    xpos = {s: i for i, s in enumerate(sizes)}
    colors = fc.series_colors(one.vlabel.tolist())
    for series, g in one.groupby("series", sort=True):
        r0 = g.iloc[0]
        ax.plot([xpos[s] for s in g.dims_s], g.median_s * 1e3, color=colors[r0.vlabel],
                ls=DTYPE_STYLE.get(r0["dtype"], ":"), marker="o", ms=5, mfc="white" if r0.plabel else colors[r0.vlabel],
                label=series)
    ax.set_yscale("log")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels(sizes)
    ax.set_xlim(-0.3, len(sizes) - 0.7)
    ax.set_xlabel("problem size M x N (ordered by M*N)")
    ax.set_ylabel("time per iteration (ms, log)")
    ax.set_title("(a) one Sinkhorn iteration, 1 thread (solid f64, dashed f32; hollow = with a parameter such as fi)",
                 fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, ncol=1 if len(per_iter.series.unique()) <= 22 else 2)

    axb = fig.add_subplot(gs_b[0, 0])
    if bw.empty or bw.fraction.isna().all():
        axb.text(0.5, 0.5, "no iteration row predicted to stream from DRAM\n(or no predictions: "
                 "run `rooflab characterize` before `rooflab bench`)", ha="center", va="center",
                 transform=axb.transAxes, fontsize=9)
        axb.set_yticks([])
    else:
        _hbars(axb, bw.label.tolist(), bw.fraction.to_numpy(float), lambda v: f"{v:.2f}",
               [fc.LEVEL_COLORS["DRAM"] if t == 1 else "#7570b3" for t in bw.threads])
        axb.axvline(1.0, color="k", lw=1)
        axb.axvline(0.9, color="0.4", lw=1, ls="--")
        axb.set_xlabel("model.json gbps / ceiling_gbps (dashed: 0.9)", fontsize=8.5)
    axb.set_title("(b) attained / measured DRAM bandwidth of the row's traffic mix at its threads\n"
                  "(rows whose working set the model puts in DRAM; pink 1T, purple more)", fontsize=9.5)

    axc = fig.add_subplot(gs_b[0, 1])
    if sc.empty:
        axc.text(0.5, 0.5, "no case ran at both 1 thread and more", ha="center", va="center",
                 transform=axc.transAxes, fontsize=9)
        axc.set_yticks([])
    else:
        _hbars(axc, [f"{l} {t}T" for l, t in zip(sc.label, sc.threads)], sc.speedup.to_numpy(float),
               lambda v: f"{v:.2f}x", "#66a61e")
        axc.axvline(1.0, color="k", lw=1)
        for t in sorted(set(sc.threads)):
            axc.axvline(t, color="0.4", lw=1, ls="--")
        axc.set_xlabel("speed-up over 1 thread (time 1T / time nT; dashed: ideal)", fontsize=8.5)
    axc.set_title("(c) thread scaling of one iteration", fontsize=9.5)
    fig.suptitle(f"Sinkhorn iterations — {run.run_dir.name}", fontsize=12)
    fc.omitted_footer(fig, omitted)
    out = fc.save(fig, out_path)
    return IterationResult(out, True, per_iter, bw, sc, omitted)
