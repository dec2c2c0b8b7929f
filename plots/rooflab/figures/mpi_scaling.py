"""Distributed Sinkhorn: time per iteration vs number of ranks P for each allreduce design
(COFFEE Figs. 13/14 shape), one panel per emulated node size R; mpich and ring ignore nodes and
appear in every panel. Ranks beyond the machine's CPUs are shaded: there the ranks share cores
and the time measures the scheduler, not the design."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rooflab.figures import common as fc
from rooflab.data import mpi as mpi_data
from rooflab.figures.common import plt

STYLE = {"mpich": ("#7f7f7f", "o"), "ring": ("#1f77b4", "s"), "salar": ("#ff7f0e", "^"), "coffee": ("#d62728", "D")}


@dataclass
class ScalingResult:
    out_path: Path
    series: dict  # (R, design) -> DataFrame(ranks, time_per_iter_s, comm_time_per_iter_s)


def series(runs: pd.DataFrame) -> dict:
    main = mpi_data.main_runs(runs)
    out = {}
    node_sizes = sorted(main[main.design.isin(["salar", "coffee"])].ranks_per_node.unique()) or [1]
    for R in node_sizes:
        for d in mpi_data.DESIGNS:
            g = main[main.design == d]
            if d in ("salar", "coffee"):
                g = g[g.ranks_per_node == R]
            if not g.empty:
                out[(int(R), d)] = (g.sort_values("ranks")[["ranks", "time_per_iter_s", "comm_time_per_iter_s"]]
                                    .reset_index(drop=True))
    return out


def plot(run_dir, out_path) -> ScalingResult:
    sw = mpi_data.load(run_dir)
    ser = series(sw.runs)
    if not ser:
        return ScalingResult(fc.note_figure("MPI scaling", ["no full-iteration runs in mpi_sweep.json"], out_path), ser)
    Rs = sorted({R for R, _ in ser})
    fig, axes = plt.subplots(1, len(Rs), figsize=(5 * len(Rs) + 1, 4.6), squeeze=False, sharey=True)
    pmax = int(sw.runs.ranks.max())
    for ax, R in zip(axes[0], Rs):
        for d in mpi_data.DESIGNS:
            g = ser.get((R, d))
            if g is None:
                continue
            color, marker = STYLE[d]
            ax.plot(g.ranks, g.time_per_iter_s * 1e3, marker=marker, color=color, label=d)
            ax.plot(g.ranks, g.comm_time_per_iter_s * 1e3, marker=marker, color=color, ls=":", alpha=0.6,
                    markersize=4)
        if sw.cpus and pmax > sw.cpus:
            ax.axvspan(sw.cpus + 0.5, pmax + 0.5, color="#bbbbbb", alpha=0.3, lw=0)
            ax.text(sw.cpus + 0.6, 0.98, f"P > {sw.cpus} CPUs:\noversubscribed", transform=ax.get_xaxis_transform(),
                    va="top", fontsize=8, color="#555555")
        ax.set_yscale("log")
        ax.set_xticks(range(1, pmax + 1))
        ax.set_xlabel("ranks P")
        ax.set_title(f"emulated nodes of R = {R} rank{'s' if R > 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("time per iteration (ms, solid)\nallreduce incl. waiting (dotted)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Sinkhorn on MPI: {sw.doc.get('dtype', '?')} {sw.doc.get('size', '?')}, "
                 f"{sw.doc.get('chunks', '?')} chunks — {Path(run_dir).name}")
    fig.tight_layout()
    return ScalingResult(fc.save(fig, out_path), ser)
