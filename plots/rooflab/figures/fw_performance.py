"""Floyd-Warshall performance (the paper's 1-core and all-core plots and its ablation): GFLOP/s
(2 N^3 flops) vs N per variant and plan, one panel per thread count, with the add+min ceiling
of machine.json (`compute.ceilings.addmin_<dtype>`, the widest ISA's; not the FMA peak), and
the four ablations as a fraction of each row's own ceiling (model.json's `ceiling_gflops`: the
addmin ceiling of the ISA that priced it; the widest ISA's for a row without one):
  Rec-OPT = regblock sched:rec layout:bdl      NonRec-OPT = regblock sched:blocked layout:bdl
  Rec-NoBDL = regblock sched:rec layout:std    Rec-NoRBK = bdl sched:rec"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import load_run

FAMILY = "floyd_warshall"
ABLATIONS = ["Rec-OPT", "NonRec-OPT", "Rec-NoBDL", "Rec-NoRBK"]
PLAN_KEYS = ("sched", "layout")  # always in the series label; other params only where they vary
DTYPE_STYLE = {"f32": "-", "f64": "--"}


@dataclass
class FwResult:
    out_path: Path
    has_data: bool
    # name, series, variant, isa, dtype, n, threads, gflops, ceiling_gflops (addmin, NaN if unmeasured), fraction
    points: pd.DataFrame
    ablation: pd.DataFrame   # ablation, isa, dtype, n, threads, name, gflops, ceiling_gflops, fraction
    ceilings: pd.DataFrame   # key, threads, gflops (the addmin ceilings drawn)
    omitted: list[str] = field(default_factory=list)


def ablation_of(variant: str, params: dict) -> str | None:
    """The paper's ablation a row is, from its explicit sched/layout parameters (None if none)."""
    sched, layout = params.get("sched"), params.get("layout")
    if variant == "regblock" and sched == "rec" and layout == "bdl":
        return "Rec-OPT"
    if variant == "regblock" and sched == "blocked" and layout == "bdl":
        return "NonRec-OPT"
    if variant == "regblock" and sched == "rec" and layout == "std":
        return "Rec-NoBDL"
    if variant == "bdl" and sched == "rec":
        return "Rec-NoRBK"
    return None


def addmin_ceilings(machine_df) -> pd.DataFrame:
    """The addmin ceilings drawn (widest ISA)."""
    if machine_df is None:
        return pd.DataFrame(columns=["key", "threads", "gflops"])
    c = machine_df["compute"]
    return c[c.key.str.startswith("addmin_") & (c.gflops > 0)].reset_index(drop=True)


def fw_data(model: pd.DataFrame, ceilings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    ok, omitted = fc.family_rows(model, FAMILY)
    # parameters other than sched/layout (bs, task) go into the label only where they vary
    varying = {k for k in {k for p in ok.params for k in p} - set(PLAN_KEYS)
               if len({p.get(k) for p in ok.params if k in p}) > 1}
    ceil = {(k[len("addmin_"):], int(t)): g for k, t, g in zip(ceilings.key, ceilings.threads, ceilings.gflops)}
    pts = []
    for _, r in ok.iterrows():
        plan = [f"{k}:{r.params[k]}" for k in PLAN_KEYS if k in r.params]
        plan += [f"{k}:{v}" for k, v in r.params.items() if k in varying]
        # `rooflab model` priced the row against FW's compute ceiling (addmin_<dtype>) of its ISA.
        c = r.ceiling_gflops if pd.notna(r.ceiling_gflops) else ceil.get((r["dtype"], int(r.threads)), np.nan)
        pts.append({"name": r["name"], "series": " ".join([fc.variant_label(r)] + plan), "variant": r.variant,
                    "isa": r.isa, "dtype": r["dtype"], "n": int(r.dims[0]), "threads": int(r.threads),
                    "gflops": r.gflops, "ceiling_gflops": c, "fraction": r.gflops / c,
                    "ablation": ablation_of(r.variant, r.params)})
    points = pd.DataFrame(pts, columns=["name", "series", "variant", "isa", "dtype", "n", "threads", "gflops",
                                        "ceiling_gflops", "fraction", "ablation"])
    ab = points[points.ablation.notna()].copy()
    ab["order"] = ab.ablation.map(ABLATIONS.index)
    ab = ab.sort_values(["dtype", "threads", "n", "order", "isa"])
    ablation = ab[["ablation", "isa", "dtype", "n", "threads", "name", "gflops", "ceiling_gflops", "fraction"]]
    return points.drop(columns="ablation"), ablation.reset_index(drop=True), omitted


def plot(run_dir, out_path) -> FwResult:
    run = load_run(run_dir, required=("model",))
    ceilings = addmin_ceilings(run.machine_df)
    points, ablation, omitted = fw_data(run.model_df, ceilings)
    if points.empty:
        out = fc.no_family_figure(FAMILY, run.run_dir, out_path, omitted)
        return FwResult(out, False, points, ablation, ceilings, omitted)
    if ceilings.empty:
        omitted = ["machine.json has no addmin ceiling: no ceiling line, no fractions "
                   "(run `rooflab characterize`)"] + omitted

    threads = sorted(points.threads.unique())
    groups = ablation.drop_duplicates(["dtype", "threads", "n"])[["dtype", "threads", "n"]].values.tolist()
    foot = 0.3 + 0.14 * min(len(omitted), 7)
    H = 4.8 + (4.9 if groups else 0) + foot + 1.2
    fig = plt.figure(figsize=(14, H))
    top = 1 - 0.7 / H
    gs_a = fig.add_gridspec(1, len(threads), left=0.06, right=0.74, top=top, bottom=top - 4.8 / H, wspace=0.22)
    colors = fc.series_colors(points.series.tolist())
    ymax = max(points.gflops.max(), ceilings.gflops.max() if not ceilings.empty else 0) * 1.15
    ax0 = None
    for i, t in enumerate(threads):
        ax = fig.add_subplot(gs_a[0, i], sharey=ax0)
        ax0 = ax0 or ax
        d = points[points.threads == t]
        for series, g in d.groupby(["series", "dtype"], sort=True):
            g = g.sort_values("n")
            ax.plot(g.n, g.gflops, marker="o" if series[1] == "f32" else "s", ms=5, color=colors[series[0]], ls=DTYPE_STYLE.get(series[1], ":"),
                    label=f"{series[0]} {series[1]}")
        dts = {f"addmin_{x}" for x in d["dtype"]}
        for _, c in ceilings[(ceilings.threads == t) & ceilings.key.isin(dts)].iterrows():
            ax.axhline(c.gflops, color="k", lw=1.4, ls=DTYPE_STYLE.get(c.key.split("_")[-1], ":"))
            ax.text(0.01, c.gflops, f" {c.key} {t}T: {c.gflops:.3g} GFLOP/s", transform=ax.get_yaxis_transform(),
                    va="bottom", fontsize=8)
        ns = sorted(d.n.unique())
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.set_xlim(min(ns) / 1.3, max(ns) * 1.3)
        ax.set_ylim(0, ymax)
        ax.set_xlabel("N (log)")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=10)
        ax.grid(True, alpha=0.3)
        if i == 0:
            ax.set_ylabel("GFLOP/s (2 N^3 / median time)")
    handles = {}
    for a in fig.axes:
        for h, l in zip(*a.get_legend_handles_labels()):
            handles.setdefault(l, h)
    fig.axes[-1].legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.03, 1.0),
                        fontsize=7.5, title="variant/isa plan dtype (f32 solid o, f64 dashed s)", title_fontsize=8)

    if groups:
        axb = fig.add_subplot(fig.add_gridspec(1, 1, left=0.06, right=0.74, top=top - 6.0 / H,
                                               bottom=(foot + 1.1) / H)[0, 0])
        isas = sorted({str(i) for i in ablation.isa})
        icol = fc.series_colors(isas)
        w = 0.8 / max(1, len(isas))
        xt, xl, x, spans = [], [], 0.0, []
        for dtype, t, n in groups:
            g = ablation[(ablation["dtype"] == dtype) & (ablation.threads == t) & (ablation.n == n)]
            x0 = x
            for ab in [a for a in ABLATIONS if (g.ablation == a).any()]:
                for j, isa in enumerate(isas):
                    b = g[(g.ablation == ab) & (g.isa.astype(str) == isa)]
                    if b.empty:
                        continue
                    v = float(b.fraction.iloc[0])
                    xpos = x + (j - (len(isas) - 1) / 2) * w
                    axb.bar(xpos, v if np.isfinite(v) else 0, w, color=icol[isa], edgecolor="k", lw=0.4,
                            label=isa)
                    axb.text(xpos, v if np.isfinite(v) else 0, f"{v:.2f}" if np.isfinite(v) else "n/a",
                             ha="center", va="bottom", fontsize=7)
                xt.append(x)
                xl.append(ab)
                x += 1
            spans.append(((x0 + x - 1) / 2, f"{dtype} N={n}, {t}T"))
            x += 0.6
        axb.set_xticks(xt)
        axb.set_xticklabels(xl, fontsize=7.5, rotation=25, ha="right")
        for xc, lab in spans:  # the problem under each group of bars
            axb.text(xc, -0.22, lab, transform=axb.get_xaxis_transform(), ha="center", va="top", fontsize=8.5,
                     weight="bold")
        axb.set_ylabel("fraction of add+min ceiling")
        axb.set_title("ablations: GFLOP/s / addmin_<dtype> ceiling at the row's threads", fontsize=10)
        axb.grid(True, axis="y", alpha=0.3)
        h, l = axb.get_legend_handles_labels()
        uniq = dict(zip(l, h))
        axb.legend(uniq.values(), [f"isa {k}" for k in uniq], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   fontsize=8)
    fig.suptitle(f"Floyd-Warshall — {run.run_dir.name}", fontsize=12)
    fc.omitted_footer(fig, omitted)
    out = fc.save(fig, out_path)
    return FwResult(out, True, points, ablation, ceilings, omitted)
