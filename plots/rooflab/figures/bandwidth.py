"""Bandwidth vs working-set size per kernel and thread count (machine.json bandwidth.curves),
with the cache capacities: measured (solid) and reported by the OS/hwloc (dashed)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import RooflabDataError, load_run


@dataclass
class BandwidthResult:
    out_path: Path
    curves: pd.DataFrame      # kernel, threads, nontemporal, n_points
    capacities: pd.DataFrame  # level, kind ("measured"|"reported"), bytes


def plot(run_dir, out_path) -> BandwidthResult:
    run = load_run(run_dir, required=("machine",))
    curves, caches = run.machine_df["curves"], run.machine_df["caches"]
    if curves.empty:
        raise RooflabDataError(f"{run.run_dir / 'machine.json'}: bandwidth.curves is empty "
                               f"(re-run `rooflab characterize`)")
    fig, ax = plt.subplots(figsize=(12, 7))
    fig.subplots_adjust(left=0.08, right=0.78, top=0.92, bottom=0.10)
    ax.set_xscale("log", base=2)
    kcolors = fc.series_colors(curves.kernel.tolist())
    max_t = int(curves.threads.max())
    summary = []
    for (kernel, threads, nt), g in curves.groupby(["kernel", "threads", "nontemporal"], sort=True):
        g = g.sort_values("bytes")
        one = threads == 1 and max_t > 1
        ax.plot(g.bytes, g.gbps, color=kcolors[kernel], lw=1.2 if one else 2, ls="--" if one else "-",
                marker="o", ms=3, label=f"{kernel}{' (NT stores)' if nt and not kernel.endswith('_nt') else ''}, "
                                        f"{threads} thread{'s' if threads > 1 else ''}")
        summary.append({"kernel": kernel, "threads": int(threads), "nontemporal": bool(nt), "n_points": len(g)})

    caps = []
    ymax = curves.gbps.max() * 1.12
    for _, c in caches.iterrows():
        for kind, ls in (("measured", "-"), ("reported", "--")):
            v = c[kind]
            if pd.notna(v):
                caps.append({"level": c.level, "kind": kind, "bytes": float(v)})
                ax.axvline(v, color=fc.LEVEL_COLORS.get(c.level, "k"), ls=ls, lw=1.3, alpha=0.8, zorder=1)
        label = (f"{c.level} {fc.human_bytes(c.measured)}" if c.measured == c.reported else
                 f"{c.level} measured {fc.human_bytes(c.measured)}" if pd.notna(c.measured) else "")
        if pd.notna(c.measured):
            ax.text(c.measured * 1.06, ymax * 0.985, label, rotation=90, va="top", ha="left", fontsize=8.5,
                    color=fc.LEVEL_COLORS.get(c.level, "k"))
        if pd.notna(c.reported) and c.reported != c.measured:
            ax.text(c.reported * 1.06, ymax * 0.985, f"{c.level} reported {fc.human_bytes(c.reported)}", rotation=90,
                    va="top", ha="left", fontsize=8.5, color=fc.LEVEL_COLORS.get(c.level, "k"))
    ax.set_ylim(0, ymax)
    ax.set_xlabel("working-set size (bytes, log scale)")
    ax.set_ylabel("bandwidth (GB/s, 1e9 B/s)")
    ticks = [2**k for k in range(10, 41, 2) if curves.bytes.min() / 2 <= 2**k <= curves.bytes.max() * 2]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fc.human_bytes(t) for t in ticks], rotation=30, fontsize=8.5)
    wa = (run.machine or {}).get("bandwidth", {}).get("write_allocate_counted")
    ax.set_title(f"Bandwidth vs working set — {run.run_dir.name}"
                 + ("" if wa is None else f"  (write-allocate traffic {'counted' if wa else 'not counted'})"),
                 fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="0.3", ls="-"), plt.Line2D([], [], color="0.3", ls="--")]
    labels += ["capacity: measured", "capacity: reported"]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8.5)
    out = fc.save(fig, out_path)
    return BandwidthResult(out_path=out, curves=pd.DataFrame(summary),
                           capacities=pd.DataFrame(caps, columns=["level", "kind", "bytes"]))
