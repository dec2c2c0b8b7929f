"""Sinkhorn per-iteration time of POT and rooflab on the same problems (MAP-UOT Fig. 9 shape),
from pot_compare.json (written by scripts/pot_compare.py in the same run): one group of bars
per size, POT first, each rooflab variant with its speed-up over POT."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.pot import load

@dataclass
class PotResult:
    out_path: Path
    rows: pd.DataFrame  # impl, variant, isa, N, threads, seconds_per_iteration, speedup_vs_pot


def plot(run_dir, out_path) -> PotResult:
    rows = load(run_dir)
    groups = sorted(rows.groupby(["N", "threads"]).groups)
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups) + 1, 4.5), squeeze=False)
    for ax, (n, t) in zip(axes[0], groups):
        g = rows[(rows.N == n) & (rows.threads == t)].sort_values("impl", key=lambda s: s != "pot")
        labels = ["POT" if r.impl == "pot" else r.variant + (f"/{r.isa}" if isinstance(r.isa, str) and r.isa else "")
                  for r in g.itertuples()]
        ms = g.seconds_per_iteration * 1e3
        bars = ax.barh(labels, ms, color=["#888888" if r.impl == "pot" else "#1f77b4" for r in g.itertuples()])
        for b, r in zip(bars, g.itertuples()):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2,
                    f" {b.get_width():.1f} ms" + ("" if r.impl == "pot" else f"  ({r.speedup_vs_pot:.1f}x POT)"),
                    va="center", fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("time per iteration (ms)")
        ax.set_title(f"{n}x{n}, {t} thread{'s' if t > 1 else ''}")
        ax.set_xlim(0, ms.max() * 1.6)
    fig.suptitle(f"Sinkhorn: POT vs rooflab, same problem — {Path(run_dir).name}")
    fig.tight_layout()
    return PotResult(fc.save(fig, out_path), rows)
