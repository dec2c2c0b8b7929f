"""RTAMM on this machine (the paper's Table 3 / 4 questions) from `rooflab rtamm evaluate`
(RUN/rtamm.json, schema rooflab.rtamm/1). Left: every plan's predicted cost (the cost formulas
with the measured unit costs) against its measured time, one point per (shape, plan), the
adaptive choice highlighted; right: the histogram of the adaptive plan's gain over the static
plan (static time / adaptive time - 1) with the paper's mean (+18.78%). The numbers are
rooflab.data.rtamm's."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.rtamm import FILE, accuracy_table, frames, load

ORDER_COLORS = {"mnk": "#1f77b4", "mkn": "#ff7f0e", "nkm": "#2ca02c"}
PAPER_MEAN_GAIN = 0.1878


@dataclass
class RtammResult:
    out_path: Path
    points: pd.DataFrame    # shape, category, plan, order, ahead, predicted_ns, measured_ns, chosen
    shapes: pd.DataFrame    # shape, category, m, n, k, chosen_ns, oracle_ns, static_ns, gain, loss, accurate, overhead
    table: pd.DataFrame     # category, shapes, accuracy, mean_gain, max_gain, mean_loss, overhead
    doc: dict = field(default_factory=dict)


def plot(run_dir, out_path) -> RtammResult:
    doc = load(run_dir)
    points, shapes = frames(doc, str(Path(run_dir) / FILE))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5.2))
    for order, color in ORDER_COLORS.items():
        g = points[(points.order == order) & ~points.chosen]
        ax.scatter(g.measured_ns * 1e-6, g.predicted_ns * 1e-6, s=5, alpha=0.35, color=color, label=f"{order} plans")
    ch = points[points.chosen]
    ax.scatter(ch.measured_ns * 1e-6, ch.predicted_ns * 1e-6, s=14, facecolors="none", edgecolors="k", lw=0.7,
               label="adaptive choice")
    lo = max(1e-4, min(points.measured_ns.min(), points.predicted_ns.min()) * 1e-6)
    hi = max(points.measured_ns.max(), points.predicted_ns.max()) * 1e-6
    ax.plot([lo, hi], [lo, hi], "k:", lw=1, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured time (ms)")
    ax.set_ylabel("predicted cost (ms)")
    err = np.median(np.abs(points.predicted_ns / points.measured_ns - 1))
    ax.set_title(f"every plan x shape ({len(points)} points), median |error| {100 * err:.1f}%", fontsize=10)
    ax.legend(fontsize=8, markerscale=2)
    ax.grid(alpha=0.3, which="both")

    gains = shapes.gain.to_numpy() * 100
    bins = np.linspace(min(-10.0, gains.min()), max(10.0, gains.max()), 40)
    ax2.hist(gains, bins=bins, color="#1f77b4", alpha=0.8)
    ax2.axvline(gains.mean(), color="k", lw=1.2, label=f"mean {gains.mean():.2f}%")
    ax2.axvline(PAPER_MEAN_GAIN * 100, color="#d62728", lw=1, ls="--", label="paper's mean (SW26010) 18.78%")
    ax2.set_xlabel("gain of the adaptive plan over the static plan (%)")
    ax2.set_ylabel("shapes")
    acc = shapes.accurate.mean() * 100
    ax2.set_title(f"{len(shapes)} shapes: accuracy {acc:.1f}% (within 5% of the oracle), "
                  f"mean loss {100 * shapes.loss.mean():.2f}%", fontsize=10)
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    cfg = doc.get("config", {})
    fig.suptitle(f"RTAMM: {len(doc['plans'])} plans, pool {cfg.get('pool')}, static {cfg.get('static_plan')}, "
                 f"{cfg.get('threads')} threads, {cfg.get('dtype')}", fontsize=10)
    fig.tight_layout()
    return RtammResult(fc.save(fig, out_path), points, shapes, accuracy_table(shapes), doc)
