"""SFC-CA knob selection (the paper's Fig. 8 question, Section III-C): how much slower than the
autotuned best is the (k_layers, kbf) that the analytic roofline model and the nearest-neighbour
model pick, over the random shapes of `rooflab gemm-knobs evaluate` (RUN/gemm_knobs.json).
Left: each method's losses sorted (the fraction of shapes within a loss), with the paper's 3%
(NN) and 7% (analytic) marks; right: loss per shape against the shape's flops. The re-timed
autotuned best shows the run-to-run noise floor; `default` is the family's fixed knob."""
from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import figure_common as fc
from figure_common import plt
from rooflab_data import RooflabDataError, read_family_json

SCHEMA = "rooflab.gemm_knobs/1"
FILE = "gemm_knobs.json"
METHODS = ["analytic", "nn", "default"]  # plotted in this order when present
NOISE = "autotune_retimed"
LABELS = {"analytic": "analytic model", "nn": "nearest neighbour", "default": "fixed default knob",
          NOISE: "autotuned best, re-timed (noise)"}
COLORS = {"analytic": "#2ca02c", "nn": "#1f77b4", "default": "#999999", NOISE: "#d62728"}
HOW = "rooflab gemm-knobs evaluate --shapes 100 --out RUN"


@dataclass
class KnobsResult:
    out_path: Path
    losses: pd.DataFrame            # m, n, k, flops, method, knob, loss
    summary: dict = field(default_factory=dict)   # method -> the file's summary numbers
    doc: dict = field(default_factory=dict)


def load(run_dir) -> tuple[pd.DataFrame, dict]:
    """(one row per shape and method, the whole document); RooflabDataError when absent or malformed."""
    path = Path(run_dir) / FILE
    doc = read_family_json(run_dir, FILE, SCHEMA, f"`{HOW}` (under the timing lock)")
    if doc.get("kind") != "evaluation" or not doc.get("shapes"):
        raise RooflabDataError(f"{path}: no evaluation in it (kind {doc.get('kind')!r}); run `{HOW}`")
    rows = []
    for s in doc["shapes"]:
        try:
            m, n, k = int(s["m"]), int(s["n"]), int(s["k"])
            for method in METHODS + [NOISE]:
                if method == NOISE:
                    loss, knob = s["autotune"]["retimed_loss"], s["autotune"]["knob"]
                elif method in s:
                    loss, knob = s[method]["loss"], s[method]["knob"]
                else:
                    continue
                rows.append({"m": m, "n": n, "k": k, "flops": 2.0 * m * n * k, "method": method,
                             "knob": f"k_layers:{knob['k_layers']}/kbf:{knob['kbf']}/bk:{knob['bk']}",
                             "loss": float(loss)})
        except (KeyError, TypeError, ValueError) as e:
            raise RooflabDataError(f"{path}: malformed shape entry {s!r} ({e})") from e
    return pd.DataFrame(rows), doc


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


def report_section(run_dir, out_dir) -> str:
    """The report's HTML section: the figure and the summary table, or why there is none."""
    head = "<h2>GEMM knob selection (SFC-CA k_layers, kbf)</h2>"
    try:
        res = plot(run_dir, Path(out_dir) / "gemm_knobs.png")
    except RooflabDataError as e:
        return head + f'<p class="note">not drawn: {html.escape(str(e))}</p>'
    rows = []
    for m in METHODS + [NOISE]:
        s = res.summary.get(m)
        if not s:
            continue
        cells = [LABELS[m], str(s["shapes"])] + [f"{100 * s[k]:.2f}%" for k in ("mean_loss", "median_loss", "max_loss")]
        cells += [f"{100 * s[k]:.0f}%" for k in ("within_3pct", "within_7pct")]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    hdr = "".join(f"<th>{h}</th>" for h in ["method", "shapes", "mean loss", "median loss", "max loss",
                                           "within 3%", "within 7%"])
    d = res.doc
    meta = (f"{html.escape(str(d.get('dtype')))}, {d.get('threads')} threads, grid "
            f"<code>{html.escape(str(d.get('grid')))}</code>, fastest of {d.get('reps')} runs per knob; "
            f"NN set: {html.escape(str(d.get('nn_set', {}).get('entries')))} autotuned shapes; machine model "
            f"<code>{html.escape(str(d.get('machine')))}</code>. Loss = time of the method's knob / time of the "
            "autotuned best − 1. Paper (EMR, BF16): NN within 3%, analytic within 7% on average.")
    return (head + f'<p class="meta">{meta}</p><figure><figcaption>Loss of each method vs the autotuned best'
            '</figcaption><img src="gemm_knobs.png" alt="gemm knob losses"></figure>'
            f"<table><tr>{hdr}</tr>{''.join(rows)}</table>")


if __name__ == "__main__":
    sys.exit(fc.main(__doc__, plot))
