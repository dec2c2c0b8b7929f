"""COFFEE's optimizations one at a time (COFFEE Fig. 16 shape): for each (P, R) with the
ablation runs, stacked bars of compute (time per iteration minus exposed communication) and
exposed communication for SALaR, COFFEE without the balanced reduce and without overlap, with
only one of the two, and with both."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rooflab.figures import common as fc
from rooflab.data import mpi as mpi_data
from rooflab.figures.common import plt

ORDER = ["salar", "coffee −balanced reduce −overlap", "coffee −overlap", "coffee −balanced reduce", "coffee"]


@dataclass
class BreakdownResult:
    out_path: Path
    bars: pd.DataFrame  # ranks, ranks_per_node, label, compute_s, comm_s, time_per_iter_s


def bars(runs: pd.DataFrame) -> pd.DataFrame:
    runs = mpi_data.default_runs(runs)
    full = runs[~runs.comm_only & runs.design.isin(["salar", "coffee"])].copy()
    full["label"] = [mpi_data.variant_label(r) for r in full.itertuples()]
    # (P, R) groups that have at least one ablation run.
    abl = full[(full.design == "coffee") & ((full.node_reduce != "balanced") | ~full.overlap)]
    keys = set(zip(abl.ranks, abl.ranks_per_node))
    full = full[[k in keys for k in zip(full.ranks, full.ranks_per_node)]]
    full["comm_s"] = full.comm_time_per_iter_s.clip(upper=full.time_per_iter_s)
    full["compute_s"] = full.time_per_iter_s - full.comm_s
    full["order"] = full.label.map({l: i for i, l in enumerate(ORDER)})
    return (full.sort_values(["ranks", "ranks_per_node", "order"])
            [["ranks", "ranks_per_node", "label", "compute_s", "comm_s", "time_per_iter_s", "oversubscribed"]]
            .reset_index(drop=True))


def plot(run_dir, out_path) -> BreakdownResult:
    sw = mpi_data.load(run_dir)
    b = bars(sw.runs)
    if b.empty:
        lines = ["no COFFEE ablation runs (--node-reduce mpi / --no-overlap) in mpi_sweep.json"]
        return BreakdownResult(fc.note_figure("COFFEE breakdown", lines, out_path), b)
    groups = list(dict.fromkeys(zip(b.ranks, b.ranks_per_node)))
    fig, axes = plt.subplots(1, len(groups), figsize=(3.6 * len(groups) + 1.5, 4.8), squeeze=False)
    for ax, (P, R) in zip(axes[0], groups):
        g = b[(b.ranks == P) & (b.ranks_per_node == R)]
        x = range(len(g))
        ax.bar(x, g.compute_s * 1e3, color="#9ecae1", label="compute")
        ax.bar(x, g.comm_s * 1e3, bottom=g.compute_s * 1e3, color="#de2d26", label="exposed communication")
        ax.set_xticks(list(x), [l.replace(" −", "\n−") for l in g.label], fontsize=7, rotation=0)
        over = bool(g.oversubscribed.any())
        ax.set_title(f"P = {P}, R = {R}" + (" (oversubscribed)" if over else ""), fontsize=10,
                     color="#a00000" if over else "black")
        ax.set_ylabel("time per iteration (ms)")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Reduce optimization vs overlap: {sw.doc.get('dtype', '?')} {sw.doc.get('size', '?')} — "
                 f"{Path(run_dir).name}")
    fig.tight_layout()
    return BreakdownResult(fc.save(fig, out_path), b)
