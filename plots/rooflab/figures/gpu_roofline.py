"""GPU roofline of the sinkhorn_cuda family: the device ceilings measured by `rooflab
gpu-characterize` (machine.json's "gpu" section: FMA / add peaks, DRAM and L2 bandwidth of
read / copy / update / triad) with each case's attained point linked to its predicted point
(model.json), and beside it the fraction of the measured DRAM copy bandwidth each case
attains (MAP-UOT's target: >= 85% at 10240 x 10240 f32)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import RooflabDataError, load_run

FAMILY = "sinkhorn_cuda"
KERNELS = ("read", "copy", "update", "triad")
GPU_LEVELS = ("L2", "DRAM")
KERNEL_STYLES = {"read": "-", "copy": "--", "update": "-.", "triad": ":"}


@dataclass
class GpuRooflineResult:
    out_path: Path
    device: str
    ceilings: pd.DataFrame   # kind ("compute"|"bandwidth"), name ("fma_f32" | "DRAM read" ...), value
    points: pd.DataFrame     # name, variant, dtype, dims, intensity, attained/predicted GFLOP/s, gbps, copy_fraction
    omitted: list[str] = field(default_factory=list)


def gpu_ceilings(machine: dict, path: Path) -> tuple[str, pd.DataFrame]:
    """(device name, ceilings) from machine.json's "gpu" section; a clear error when it is
    absent or malformed."""
    gpu = machine.get("gpu")
    if not isinstance(gpu, dict) and "gpu" in machine.get("stale_sections", {}):
        raise RooflabDataError(f"{path}: the gpu section is not used: {machine['stale_sections']['gpu']}")
    if not isinstance(gpu, dict):
        raise RooflabDataError(f'{path}: no "gpu" section: run `rooflab gpu-characterize --out DIR` on the machine '
                               f"with the device")
    schema = str(gpu.get("schema", ""))
    if schema.split("/")[0] != "rooflab.gpu" or schema.split("/")[-1] != "1":
        raise RooflabDataError(f'{path}: gpu.schema is "{schema}", expected "rooflab.gpu/1"')
    rows = []
    for key, v in (gpu.get("compute") or {}).items():
        if isinstance(v, (int, float)) and v > 0:
            rows.append({"kind": "compute", "name": key, "value": float(v)})
    for lv in GPU_LEVELS:
        for k in KERNELS:
            v = (gpu.get("bandwidth") or {}).get(lv, {}).get(k)
            if isinstance(v, (int, float)) and v > 0:
                rows.append({"kind": "bandwidth", "name": f"{lv} {k}", "value": float(v)})
    df = pd.DataFrame(rows, columns=["kind", "name", "value"])
    if df[df.kind == "compute"].empty or df[df.name.str.startswith("DRAM")].empty:
        raise RooflabDataError(f'{path}: gpu section needs compute ceilings and DRAM bandwidth '
                               f"(re-run `rooflab gpu-characterize`)")
    return str((gpu.get("device") or {}).get("name", "GPU")), df


def plot(run_dir, out_path) -> GpuRooflineResult:
    run = load_run(run_dir, required=("machine", "model"))
    device, ceilings = gpu_ceilings(run.machine, run.run_dir / "machine.json")
    ok, omitted = fc.family_rows(run.model_df, FAMILY)
    ok = ok[(ok.flops > 0) & (ok.intensity > 0)]
    copy_bw = float(ceilings.loc[ceilings.name == "DRAM copy", "value"].iloc[0]) \
        if (ceilings.name == "DRAM copy").any() else np.nan
    points = pd.DataFrame({
        "name": ok.name, "variant": ok.variant, "dtype": ok.dtype,
        "dims": [fc.dims_label(d) for d in ok.dims], "elements": [float(np.prod(d)) for d in ok.dims],
        "part": [p.get("part", "iter") for p in ok.params],
        "intensity": ok.intensity, "attained_gflops": ok.gflops,
        "predicted_gflops": ok.flops / ok.predicted_s / 1e9,
        "gbps": ok.gbps, "copy_fraction": ok.gbps / copy_bw,
    }).reset_index(drop=True)

    fig, (ax, axb) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [1.45, 1]})
    fig.subplots_adjust(left=0.06, right=0.98, top=0.90, bottom=0.12 + 0.02 * min(len(omitted), 6), wspace=0.35)
    ax.set_xscale("log")
    ax.set_yscale("log")
    comp, bwc = ceilings[ceilings.kind == "compute"], ceilings[ceilings.kind == "bandwidth"]
    top = comp.value.max()
    xs = np.concatenate([points.intensity.to_numpy(), (top / bwc.value).to_numpy(), [0.05]])
    xlo, xhi = xs.min() / 4, xs.max() * 4
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(max(bwc.value.min() * xlo / 3, top * 1e-6), top * 2.5)
    for _, c in comp.iterrows():
        ax.axhline(c.value, color="0.35", lw=1.2, zorder=1)
    for group in fc.cluster([(c.value, c["name"]) for _, c in comp.iterrows()], ratio=1.3):  # fma_f64 ~ add_f32
        ax.text(xhi / 1.05, max(v for v, _ in group) * 1.03,
                ", ".join(f"{n} {v:.3g}" for v, n in group) + " GFLOP/s",
                ha="right", va="bottom", fontsize=8, color="0.25")
    handles = []
    for _, b in bwc.iterrows():
        level, kernel = b["name"].split()
        x = np.array([xlo, min(top / b.value, xhi)])
        (h,) = ax.plot(x, b.value * x, color=fc.LEVEL_COLORS.get(level, "k"), ls=KERNEL_STYLES[kernel],
                       lw=1.8 if level == "DRAM" else 1.2, zorder=2, label=f"{b['name']}: {b.value:.4g} GB/s")
        handles.append(h)
    # The tile sweep's single-kernel rows (part p2 / p4) are drawn by gpu_sweep.py.
    drawn = points[points.part == "iter"]
    keys = (drawn.variant + " " + drawn.dtype).tolist()
    colors = fc.series_colors(sorted(set(points.variant)))
    markers = {"f32": "o", "f64": "s"}
    seen = {}
    for key, (_, p) in zip(keys, drawn.iterrows()):
        col = colors[p.variant]
        if np.isfinite(p.predicted_gflops):
            ax.plot([p.intensity] * 2, [p.attained_gflops, p.predicted_gflops], color=col, lw=1, alpha=0.7, zorder=3)
            ax.scatter(p.intensity, p.predicted_gflops, s=40, facecolors="none", edgecolors=[col], marker="D", zorder=4)
        h = ax.scatter(p.intensity, p.attained_gflops, s=38, color=col, marker=markers.get(p["dtype"], "o"),
                       edgecolors="k", lw=0.4, zorder=5, label=key)
        seen.setdefault(key, h)
    ax.set_xlabel("arithmetic intensity (flop/byte)")
    ax.set_ylabel("performance (GFLOP/s)")
    ax.set_title(f"GPU roofline — {device}", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    leg = ax.legend(handles=handles, title="bandwidth ceilings", loc="upper left", fontsize=7, title_fontsize=8)
    ax.add_artist(leg)
    marker_key = [plt.Line2D([], [], ls="", marker="o", color="0.4", label="attained"),
                  plt.Line2D([], [], ls="", marker="D", mfc="none", color="0.4", label="predicted")]
    ax.legend(handles=marker_key + list(seen.values()), loc="lower right", fontsize=7)

    # Fraction of the measured DRAM copy bandwidth, iteration cases (the sweep has its own figure).
    it = points[points.part == "iter"].sort_values(["dtype", "elements", "variant"], ascending=[False, False, True])
    labels = [f"{r['variant']}\n{r['dtype']} {r['dims']}" for _, r in it.iterrows()]
    ypos = np.arange(len(it))
    axb.barh(ypos, it.copy_fraction, color=[colors[v] for v in it.variant])
    axb.axvline(0.85, color="k", ls="--", lw=1)
    axb.text(0.85, len(it) - 0.4 if len(it) else 0.5, " 85% target", fontsize=8, va="bottom")
    axb.set_yticks(ypos, labels, fontsize=7)
    axb.set_xlim(0, max(1.1, float(np.nanmax(it.copy_fraction)) * 1.1 if len(it) else 1.1))
    axb.set_xlabel(f"attained GB/s / measured DRAM copy ({copy_bw:.4g} GB/s)")
    axb.set_title("bandwidth attained per iteration", fontsize=11)
    axb.grid(True, axis="x", alpha=0.3)
    if it.empty:
        axb.text(0.5, 0.5, f"no {FAMILY} iteration rows in model.json", ha="center", transform=axb.transAxes)
    if omitted:
        shown = omitted[:5] + ([f"... and {len(omitted) - 5} more"] if len(omitted) > 5 else [])
        fig.text(0.01, 0.01, "not plotted:\n" + "\n".join(shown), fontsize=7.5, va="bottom", color="#a00000")
    out = fc.save(fig, out_path)
    return GpuRooflineResult(out_path=out, device=device, ceilings=ceilings, points=points, omitted=omitted)
