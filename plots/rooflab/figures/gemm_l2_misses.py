"""GEMM simulated L2 misses (the SFC-CA paper's Fig. 7): valgrind's cache simulator with its
last level set to the L2 size (`rooflab counters --backend cachegrind --ll-level L2`), SFC-CA
with k_layers 1 / 2 / 4 (2D, 2.5D, 3D) against the library baselines at one shape, misses per
GEMM call (DLmr + DLmw). The best baseline (highest WHM in the run's gemm_summary, else the one
with the fewest misses) is marked. Cachegrind counts the whole kernel: the GEMM phase and the
reduction of the k_layers copies of C are not separated, and valgrind runs the threads one at a
time on one simulated hierarchy (a shared L2 of one core's size, not one L2 per core).
GFLOP/s under the bars come from RUN/gemm_l2/model.json (the same cases timed natively) when
scripts/gemm_paper.sh wrote it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rooflab.figures import common as fc
from rooflab.data import gemm as gd
from rooflab.figures.common import plt
from rooflab.data.run import RooflabDataError, model_frame, read_json


@dataclass
class GemmL2Result:
    out_path: Path
    has_data: bool
    rows: pd.DataFrame      # gemm_data.l2_counters() rows plotted, with "group", "best_baseline", "gflops"
    config: dict            # the cachegrind back end's config (D1, LL, LL_level, sources)
    omitted: list[str] = field(default_factory=list)


def ranking_baseline(run_dir, dtype: str) -> str | None:
    """The best baseline of the run's WHM summary for dtype (most threads), or None."""
    try:
        doc = gd.summary(run_dir)
    except RooflabDataError:
        return None
    gs = [g for g in doc["groups"] if g["dtype"] == dtype and g["best_baseline"]]
    return max(gs, key=lambda g: g["threads"])["best_baseline"] if gs else None


def timed(run_dir) -> dict[str, float]:
    """name -> GFLOP/s from RUN/gemm_l2/model.json (absent: empty)."""
    d = Path(run_dir) / gd.L2_COUNTERS_DIR
    if not (d / "model.json").exists():
        return {}
    df = model_frame(read_json(d, "model"), d / "model.json")
    return dict(zip(df[df.status == "ok"]["name"], df[df.status == "ok"].gflops))


def plot(run_dir, out_path) -> GemmL2Result:
    rows, config, omitted = gd.l2_counters(run_dir)
    if rows.empty:
        out = fc.no_family_figure(gd.FAMILY + " (L2 counters)", run_dir, out_path, omitted)
        return GemmL2Result(out, False, rows, config, omitted)
    rows = rows.copy()
    base_variants = gd.baselines(run_dir)
    rows["group"] = rows["dtype"] + " " + rows["mnk"] + " " + rows.threads.astype(str) + "T"
    rows["k_layers"] = rows.k_layers.astype("Int64")  # None (baselines) stays missing, not NaN
    rows["order"] = [(0, 0 if pd.isna(k) else int(k)) if v == gd.TARGET_IMPL else (1, 0) if not gd.is_baseline(i, base_variants)
                     else (2, 0) for v, i, k in zip(rows.variant, rows.impl, rows.k_layers)]
    rows = rows.sort_values(["group", "order", "impl"]).reset_index(drop=True)
    gfl = timed(run_dir)
    rows["gflops"] = rows["name"].map(gfl)
    best = {dt: ranking_baseline(run_dir, dt) for dt in rows["dtype"].unique()}
    rows["best_baseline"] = False
    for grp, g in rows.groupby("group"):
        base = g[g.impl.map(lambda i: gd.is_baseline(i, base_variants))]
        if base.empty:
            continue
        pick = base[base.impl == best.get(g["dtype"].iloc[0])]
        idx = pick.index[0] if not pick.empty else base.l2_misses.idxmin()
        rows.loc[idx, "best_baseline"] = True

    groups = list(dict.fromkeys(rows.group))
    W = max(10, 1.3 * len(rows) + 3)
    fig, axes = plt.subplots(1, len(groups), figsize=(W, 6.2), squeeze=False)
    fig.subplots_adjust(left=0.09, right=0.98, top=0.78, bottom=0.32, wspace=0.3)
    for ax, grp in zip(axes[0], groups):
        g = rows[rows.group == grp].reset_index(drop=True)
        ref = g[g.best_baseline].l2_misses
        ref = float(ref.iloc[0]) if not ref.empty else None
        for x, r in g.iterrows():
            color, _ = fc.impl_style(r.impl)
            ax.bar(x, r.l2_misses, 0.7, color=color, edgecolor="k", lw=1.8 if r.best_baseline else 0.5,
                   hatch="//" if gd.is_baseline(r.impl, base_variants) else None)
            txt = f"{r.l2_misses:.3g}"
            if ref and not r.best_baseline and r.l2_misses > 0:
                txt += f"\n{ref / r.l2_misses:.2f}x fewer" if r.l2_misses < ref else f"\n{r.l2_misses / ref:.2f}x more"
            ax.text(x, r.l2_misses, txt, ha="center", va="bottom", fontsize=7.5)
        labels = [(r.impl if pd.isna(r.k_layers) else f"{r.impl}\nk_layers:{r.k_layers}") +
                  (" (best)" if r.best_baseline else "") +
                  (f"\n{r.gflops:.1f} GFLOP/s" if r.gflops == r.gflops else "") for _, r in g.iterrows()]
        ax.set_xticks(range(len(g)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7.5)
        ax.set_ylim(0, g.l2_misses.max() * 1.25)
        ax.set_ylabel("simulated L2 misses per GEMM (DLmr + DLmw)")
        ax.set_title(grp, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"GEMM simulated L2 misses: SFC-CA k_layers 1/2/4 vs baselines — {Path(run_dir).name}\n"
                 f"valgrind LL = {config.get('LL', '?')} (size,assoc,line; the {config.get('LL_level')}), "
                 f"D1 = {config.get('D1', '?')}; whole kernel (GEMM + reduction of the copies)\n"
                 f"threads serialized on one simulated hierarchy; ratios vs the best baseline (thick edge)",
                 fontsize=9.5)
    fc.omitted_footer(fig, omitted)
    out = fc.save(fig, out_path)
    return GemmL2Result(out, True, rows.drop(columns="order"), config, omitted)
