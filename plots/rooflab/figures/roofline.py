"""Log-log roofline: compute ceilings, bandwidth ceilings per memory level, and each
benchmark's attained point linked to its predicted point (from model.json)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import LEVELS, RooflabDataError, family_rows, load_run

DEFAULT_KERNEL = "read"


@dataclass
class RooflineResult:
    out_path: Path
    kernel: str                 # bandwidth kernel used for the slanted ceilings
    ceilings: pd.DataFrame      # kind ("compute"|"bandwidth"), name, threads, value (GFLOP/s or GB/s)
    points: pd.DataFrame        # name, family, variant, threads, intensity, attained_gflops, predicted_gflops
    omitted: list[str] = field(default_factory=list)  # rows not drawn, with the reason


def _compute_ceilings(compute: pd.DataFrame) -> pd.DataFrame:
    """Each compute key at its largest thread count and at 1 thread."""
    rows = []
    for key, g in compute.groupby("key", sort=True):
        for t in sorted({int(g.threads.max()), 1} & set(g.threads)):
            rows.append({"kind": "compute", "name": key, "threads": t,
                         "value": float(g.loc[g.threads == t, "gflops"].iloc[0])})
    return pd.DataFrame(rows, columns=["kind", "name", "threads", "value"])


def _bandwidth_ceilings(levels: pd.DataFrame, kernel: str) -> pd.DataFrame:
    """Per level, the chosen kernel's plateau at the largest thread count measured and at 1
    thread (most single-threaded predictions sit on the latter)."""
    rows = []
    for lv in LEVELS:
        g = levels[(levels.level == lv) & (levels.kernel == kernel)]
        for t in sorted({int(g.threads.max()), 1} & set(g.threads)) if not g.empty else []:
            rows.append({"kind": "bandwidth", "name": lv, "threads": t,
                         "value": float(g.loc[g.threads == t, "gbps"].iloc[0])})
    return pd.DataFrame(rows, columns=["kind", "name", "threads", "value"])


def plot(run_dir, out_path, kernel: str | None = None) -> RooflineResult:
    run = load_run(run_dir, required=("machine", "model"))
    mdf = run.machine_df
    levels, compute, model = mdf["levels"], mdf["compute"], run.model_df
    kernels = sorted(set(levels.kernel))
    if kernel is None:
        kernel = DEFAULT_KERNEL if DEFAULT_KERNEL in kernels else (kernels[0] if kernels else DEFAULT_KERNEL)
    if kernel not in kernels:
        raise RooflabDataError(f"{run.run_dir / 'machine.json'}: no bandwidth.levels entry for kernel "
                               f'"{kernel}" (available: {", ".join(kernels) or "none"})')
    omitted: list[str] = []
    ceilings = pd.concat([_compute_ceilings(compute), _bandwidth_ceilings(levels, kernel)], ignore_index=True)
    bad = ceilings[ceilings.value <= 0]
    omitted += [f"{r.kind} ceiling {r['name']} ({r.threads}T): non-positive value {r.value}" for _, r in bad.iterrows()]
    ceilings = ceilings[ceilings.value > 0].reset_index(drop=True)
    if ceilings[ceilings.kind == "compute"].empty or ceilings[ceilings.kind == "bandwidth"].empty:
        raise RooflabDataError(f"{run.run_dir / 'machine.json'}: needs at least one compute ceiling and one "
                               f"bandwidth level to draw a roofline (re-run `rooflab characterize`)")

    ok, unused = family_rows(model)
    omitted += unused
    flat = ~((ok.flops > 0) & (ok.intensity > 0))
    omitted += [f"{r['name']}: " + ("no flops" if not r.flops > 0 else "moves no bytes (no arithmetic intensity)")
                + ", cannot sit on a roofline" for _, r in ok[flat].iterrows()]
    ok = ok[~flat]
    points = pd.DataFrame({
        "name": ok.name, "family": ok.family, "variant": ok.variant, "threads": ok.threads,
        "intensity": ok.intensity, "attained_gflops": ok.gflops,
        # the model stores time; GFLOP/s at the predicted time is the same point's height
        "predicted_gflops": ok.flops / ok.predicted_s / 1e9,
    }).reset_index(drop=True)

    fig, ax = plt.subplots(figsize=(12.5, 7.5))
    fig.subplots_adjust(left=0.08, right=0.70, top=0.92, bottom=0.10 + 0.022 * min(len(omitted), 6))
    ax.set_xscale("log")
    ax.set_yscale("log")
    comp = ceilings[ceilings.kind == "compute"]
    bwc = ceilings[ceilings.kind == "bandwidth"]
    top = comp.value.max()
    ridges = top / bwc.value
    xs = np.concatenate([points.intensity.to_numpy(), ridges.to_numpy()])
    xlo, xhi = xs.min() / 4, xs.max() * 4
    ys = np.concatenate([points.attained_gflops.dropna(), points.predicted_gflops.dropna(), [bwc.value.min() * xlo]])
    ylo, yhi = max(ys.min() / 3, top * 1e-5), top * 2.5
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)

    max_t = int(ceilings.threads.max())
    single = lambda t: t == 1 and max_t > 1  # 1-thread ceilings are dotted beside the full-machine ones
    for _, c in comp.iterrows():
        ax.axhline(c.value, color="0.35", lw=1.0 if single(c.threads) else 1.4,
                   ls=":" if single(c.threads) else "-", zorder=1)
    for group in fc.cluster([(c.value, f"{c['name']} {c.threads}T") for _, c in comp.iterrows()]):
        vals = [v for v, _ in group]
        ax.text(xhi / 1.05, max(vals) * 1.03, ", ".join(lab for _, lab in group) +
                f": {min(vals):.3g}" + (f"-{max(vals):.3g}" if len(vals) > 1 else "") + " GFLOP/s",
                ha="right", va="bottom", fontsize=8, color="0.25",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 1})
    bw_handles = []
    for _, b in bwc.iterrows():
        x = np.array([xlo, min(top / b.value, xhi)])
        (h,) = ax.plot(x, b.value * x, color=fc.LEVEL_COLORS.get(b["name"], "k"), zorder=2,
                       lw=1.3 if single(b.threads) else 2, ls=":" if single(b.threads) else "-",
                       label=f"{b['name']} {kernel} {b.threads}T: {b.value:.3g} GB/s")
        bw_handles.append(h)

    keys = (points.family + "/" + points.variant).tolist()
    colors = fc.series_colors(keys)
    seen: dict[str, object] = {}
    for key, (_, p) in zip(keys, points.iterrows()):
        col = colors[key]
        if np.isfinite(p.predicted_gflops):
            ax.plot([p.intensity] * 2, [p.attained_gflops, p.predicted_gflops], color=col, lw=1, alpha=0.7, zorder=3)
            ax.scatter(p.intensity, p.predicted_gflops, s=46, facecolors="none", edgecolors=[col],
                       marker="D", lw=1.3, zorder=4)
        h = ax.scatter(p.intensity, p.attained_gflops, s=42, color=col, edgecolors="k", lw=0.4, zorder=5)
        seen.setdefault(key, h)

    ax.set_xlabel("arithmetic intensity (flop/byte)")
    ax.set_ylabel("performance (GFLOP/s)")
    ax.set_title(f"Roofline — {run.run_dir.name}  (bandwidth kernel: {kernel}; "
                 f"ceilings: solid {max_t} threads, dotted 1 thread)", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    leg1 = ax.legend(handles=bw_handles, title="bandwidth ceilings", loc="upper left",
                     bbox_to_anchor=(1.02, 1.0), fontsize=8, title_fontsize=9)
    ax.add_artist(leg1)
    marker_key = [plt.Line2D([], [], ls="", marker="o", color="0.4", label="attained (measured)"),
                  plt.Line2D([], [], ls="", marker="D", mfc="none", color="0.4", label="predicted (model)")]
    ax.legend(handles=marker_key + list(seen.values()), labels=[h.get_label() for h in marker_key] + list(seen),
              title="family/variant", loc="upper left", bbox_to_anchor=(1.02, 0.62),
              fontsize=8, title_fontsize=9, ncol=1 if len(seen) <= 18 else 2)
    if omitted:
        shown = omitted[:5] + ([f"... and {len(omitted) - 5} more"] if len(omitted) > 5 else [])
        fig.text(0.01, 0.01, "not plotted:\n" + "\n".join(shown), fontsize=7.5, va="bottom", color="#a00000")
    out = fc.save(fig, out_path)
    return RooflineResult(out_path=out, kernel=kernel, ceilings=ceilings, points=points, omitted=omitted)
