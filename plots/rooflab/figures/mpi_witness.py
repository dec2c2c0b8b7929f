"""Distributed Sinkhorn beyond one machine, real and simulated side by side: time per iteration
(top) and parallel efficiency (bottom) vs processes, per design. Left: the emulated hosts
(RUN/witness.json, scripts/witness.py), real MPICH (solid) next to SMPI on the same measured
links (dashed), one panel per ranks per host; oversubscribed cells (more ranks than CPUs)
shaded. Right: the Tianhe-1A-like simulation (scripts/smpi_sweep.py). Efficiency is relative to
each series' smallest process count p0: p0 T(p0) / (p T(p)) (no series has a one-process run)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rooflab.data import mpi as mpi_data
from rooflab.data.jsonfile import RooflabDataError
from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.figures.mpi_scaling import STYLE


@dataclass
class WitnessResult:
    out_path: Path
    series: dict  # (panel, design, witness) -> [(processes, seconds)]


def efficiency(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """p0 T(p0) / (p T(p)) for each point, p0 the smallest p."""
    if not points:
        return []
    p0, t0 = min(points)
    return [(p, p0 * t0 / (p * t)) for p, t in sorted(points)]


def series(witness: dict | None, sim: dict | None) -> dict:
    out: dict = {}
    for r in (witness or {}).get("rows", []):
        panel = f"emulated hosts, {r['ranks_per_host']} rank(s) per host"
        out.setdefault((panel, r["design"], "real"), []).append((r["ranks"], r["real"]["time_s"]))
        if r.get("smpi") and r["smpi"].get("time_s"):
            out.setdefault((panel, r["design"], "SMPI"), []).append((r["ranks"], r["smpi"]["time_s"]))
    if sim:
        big = {(r.get("M"), r.get("N")) for r in sim["runs"]}
        size = max(big, key=lambda s: (s[0] or 0) * (s[1] or 0))  # the largest size simulated
        for r in sim["runs"]:
            if (r.get("M"), r.get("N")) == size:
                panel = f"simulated {sim['preset']}, {size[0]}x{size[1]}"
                out.setdefault((panel, r["design"], "SMPI"), []).append((r["ranks"], r["time_per_iter_s"]))
    return {k: sorted(v) for k, v in out.items()}


def plot(run_dir, out_path) -> WitnessResult:
    run = Path(run_dir)
    witness = mpi_data.load_witness(run) if (run / "witness.json").exists() else None
    sim = mpi_data.load_smpi_sweep(run) if (run / mpi_data.SMPI_SWEEP_FILE).exists() else None
    if witness is None and sim is None:
        raise RooflabDataError(f"no witness.json and no {mpi_data.SMPI_SWEEP_FILE}: run {mpi_data.WITNESS_CMD} "
                               f"and {mpi_data.SMPI_SWEEP_CMD}")
    ser = series(witness, sim)
    panels = sorted({k[0] for k in ser}, key=lambda p: (p.startswith("simulated"), p))
    fig, axes = plt.subplots(2, len(panels), figsize=(4.6 * len(panels) + 1, 7.5), squeeze=False)
    cpus = (witness or {}).get("summary", {}).get("cpus")
    for col, panel in enumerate(panels):
        top, bot = axes[0][col], axes[1][col]
        for d in mpi_data.DESIGNS:
            color, marker = STYLE[d]
            for w, ls in (("real", "-"), ("SMPI", "--")):
                pts = ser.get((panel, d, w))
                if not pts:
                    continue
                top.plot([p for p, _ in pts], [t * 1e3 for _, t in pts], ls=ls, marker=marker, color=color,
                         label=f"{d} ({w})")
                eff = efficiency(pts)
                bot.plot([p for p, _ in eff], [e for _, e in eff], ls=ls, marker=marker, color=color)
        if cpus and panel.startswith("emulated"):
            pmax = max(p for k, v in ser.items() if k[0] == panel for p, _ in v)
            for ax in (top, bot):
                if pmax > cpus:
                    ax.axvspan(cpus + 0.5, pmax + 0.5, color="#bbbbbb", alpha=0.3, lw=0)
            bot.text(cpus + 0.6, 0.98, f"> {cpus} CPUs: oversubscribed\n(real ranks share cores)",
                     transform=bot.get_xaxis_transform(), va="top", fontsize=7, color="#555555")
        ps = sorted({p for k, v in ser.items() if k[0] == panel for p, _ in v})
        for ax in (top, bot):
            if panel.startswith("simulated"):
                ax.set_xscale("log", base=2)
            ax.set_xticks(ps)
            ax.set_xticklabels([str(p) for p in ps])
            ax.minorticks_off()
        top.set_title(panel, fontsize=9)
        top.set_ylabel("ms per iteration")
        bot.set_ylabel("parallel efficiency vs smallest p")
        bot.set_xlabel("processes")
        top.legend(fontsize=6, ncol=2)
        top.grid(alpha=0.3)
        bot.grid(alpha=0.3)
    fig.suptitle("Real MPICH on emulated hosts vs SimGrid SMPI (solid: real, dashed: simulated)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)
    return WitnessResult(Path(out_path), ser)
