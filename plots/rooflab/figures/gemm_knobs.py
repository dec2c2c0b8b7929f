"""SFC-CA knob selection (the paper's Fig. 8 question, Section III-C): how much slower than the
autotuned best is the (k_layers, kbf) that the analytic roofline model and the nearest-neighbour
model pick, over the random shapes of `rooflab gemm-knobs evaluate` (RUN/gemm_knobs.json).
Left: each method's losses sorted (the fraction of shapes within a loss), with the paper's 3%
(NN) and 7% (analytic) marks; right: loss per shape against the shape's flops. The re-timed
autotuned best shows the run-to-run noise floor; `default` is the family's fixed knob."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.knobs import METHODS, NOISE, load

LABELS = {"analytic": "analytic model", "nn": "nearest neighbour", "default": "fixed default knob",
          NOISE: "autotuned best, re-timed (noise)"}
COLORS = {"analytic": "#2ca02c", "nn": "#1f77b4", "default": "#999999", NOISE: "#d62728"}


@dataclass
class KnobsResult:
    out_path: Path
    losses: pd.DataFrame            # m, n, k, flops, method, knob, loss
    summary: dict = field(default_factory=dict)   # method -> the file's summary numbers
    doc: dict = field(default_factory=dict)


def plot(run_dir, out_path) -> KnobsResult:
    losses, doc = load(run_dir)
    present = [m for m in METHODS + [NOISE] if (losses.method == m).any()]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    for m in present:
        v = np.sort(losses[losses.method == m].loss.to_numpy()) * 100
        frac = np.arange(1, len(v) + 1) / len(v)
        s = doc.get("summary", {}).get(m, {})
        label = LABELS[m] + (f": mean {100 * s['mean_loss']:.1f}%, within 3% {100 * s['within_3pct']:.0f}%"
                             if s else "")
        ax.step(v, frac, where="post", color=COLORS[m], label=label, lw=2 if m in ("analytic", "nn") else 1.2,
                ls="--" if m == NOISE else "-")
        if m != NOISE:
            g = losses[losses.method == m]
            ax2.scatter(g.flops, g.loss * 100, s=14, color=COLORS[m], alpha=0.7, label=LABELS[m])
    for x, txt in ((3, "3% (paper: NN)"), (7, "7% (paper: analytic)")):
        ax.axvline(x, color="k", lw=0.8, ls=":")
        ax.text(x, 0.02, " " + txt, rotation=90, fontsize=8, va="bottom")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("loss vs autotuned best (%)")
    ax.set_ylabel("fraction of shapes with at most this loss")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    ax2.set_xscale("log")
    ax2.set_yscale("symlog", linthresh=1)
    ax2.set_xlabel("flops of the shape (2MNK)")
    ax2.set_ylabel("loss (%)")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    samp = doc.get("sampling", {})
    fig.suptitle(f"SFC-CA knobs chosen by model vs autotuning: {len(losses[losses.method == present[0]])} random "
                 f"shapes in [{samp.get('min')}, {samp.get('max')}]^3, {doc.get('dtype')}, "
                 f"{doc.get('threads')} threads, grid {doc.get('grid')}", fontsize=10)
    fig.tight_layout()
    return KnobsResult(fc.save(fig, out_path), losses, doc.get("summary", {}), doc)
