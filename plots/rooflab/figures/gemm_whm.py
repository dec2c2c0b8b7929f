"""GEMM summary bars: the flop-weighted harmonic mean (WHM) of GFLOP/s of every implementation
(plots/gemm_data.py defines it), one panel per dtype and thread count, with the roofline WHM of
the same shapes as a black tick on each bar, the ratio to the best baseline, and the issue's
targets for that dtype in the panel title."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rooflab.figures import common as fc
from rooflab.data import gemm as gd
from rooflab.figures.common import plt


@dataclass
class GemmWhmResult:
    out_path: Path
    has_data: bool
    summary: dict                       # gemm_data.summary() of the run
    bars: list[dict] = field(default_factory=list)  # dtype, threads, impl, whm_gflops, roofline_whm_gflops, ratio


def target_line(t: dict) -> str:
    state = {True: "reached", False: "NOT reached", None: "not evaluated"}[t["reached"]]
    if t["value"] is None:
        return f"{t['id']}: {state} ({t.get('reason', '')})"
    return f"{t['id']}: {t['value']:.3f} vs {t['target']} — {state}" + (f" ({t['reason']})" if t.get("reason") else "")


def plot(run_dir, out_path) -> GemmWhmResult:
    doc = gd.summary(run_dir)
    groups = doc["groups"]
    if not groups:
        out = fc.no_family_figure(gd.FAMILY, run_dir, out_path, doc["not_used"])
        return GemmWhmResult(out, False, doc)
    ncol = min(2, len(groups))
    nrow = (len(groups) + ncol - 1) // ncol
    width = max(len(g["implementations"]) for g in groups)
    W = max(12, min(24, ncol * (1.0 * width + 2.5)))
    H = 5.2 * nrow + 0.8
    fig, axes = plt.subplots(nrow, ncol, figsize=(W, H), squeeze=False)
    fig.subplots_adjust(left=0.06, right=0.98, top=1 - 0.8 / H, bottom=0.9 / H, hspace=0.75, wspace=0.15)
    bars = []
    for ax, g in zip(axes.flat, groups):
        impls = g["implementations"]
        ymax = max(max(v["whm_gflops"], v["roofline_whm_gflops"] or 0) for v in impls) * 1.18
        for x, v in enumerate(impls):
            color, ls = fc.impl_style(v["impl"])
            ax.bar(x, v["whm_gflops"], 0.7, color=color, edgecolor="k", lw=0.5, hatch="//" if v["baseline"] else None,
                   alpha=0.55 if ls == ":" else 0.9)
            if v["roofline_whm_gflops"]:
                ax.plot([x - 0.35, x + 0.35], [v["roofline_whm_gflops"]] * 2, color="k", lw=1.8)
            ratio = v["ratio_to_best_baseline"]
            label = f"{v['whm_gflops']:.1f}" + ("" if ratio is None or v["impl"] == g["best_baseline"]
                                                else f"\n{ratio:.2f}x")
            if v.get("not_representative"):
                label += "\nnot representative"
            ax.text(x, v["whm_gflops"] + ymax * 0.01, label, ha="center", va="bottom", fontsize=7.5)
            bars.append({"dtype": g["dtype"], "threads": g["threads"], "impl": v["impl"],
                         "whm_gflops": v["whm_gflops"], "roofline_whm_gflops": v["roofline_whm_gflops"],
                         "ratio": ratio})
        if g["best_baseline_whm_gflops"]:
            ax.axhline(g["best_baseline_whm_gflops"], color="#d62728", ls=":", lw=1)
        ax.set_xticks(range(len(impls)))
        ax.set_xticklabels([f"{v['impl']}\n({v['n_shapes']})" for v in impls], rotation=40, ha="right", fontsize=7.5)
        ax.set_ylim(0, ymax)
        ax.set_ylabel("WHM GFLOP/s")
        ax.grid(True, axis="y", alpha=0.3)
        tl = [target_line(t) for t in doc["targets"] if t["dtype"] == g["dtype"] and t["threads"] == g["threads"]]
        ax.set_title(f"{g['dtype']}, {g['threads']} thread{'s' if g['threads'] > 1 else ''}, {g['n_shapes']} shapes; "
                     f"ratio = x best baseline ({g['best_baseline'] or 'none'})" + "".join("\n" + s for s in tl),
                     fontsize=8.5)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(f"GEMM WHM of GFLOP/s (total flops / total time; hatched = library; black tick = roofline WHM; "
                 f"(n) = shapes) — {Path(run_dir).name}", fontsize=10.5)
    out = fc.save(fig, out_path)
    return GemmWhmResult(out, True, doc, bars)
