"""RUN/mpi_sweep.json (written by scripts/mpi_sweep.sh) as a table: one row per rooflab_mpi
run, with the fields the MPI figures use. Missing or malformed files are RooflabDataError."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import mpi_predict
from rooflab_data import RooflabDataError, read_family_json

SCHEMA = "rooflab.mpi_sweep/1"
DESIGNS = ["mpich", "ring", "salar", "coffee"]
COLUMNS = ["id", "name", "design", "ranks", "ranks_per_node", "chunks", "overlap", "node_reduce", "comm_only",
           "time_per_iter_s", "comm_time_per_iter_s", "compute_time_per_iter_s", "predicted_comm_s", "oversubscribed",
           "noise_rel_iqr", "remeasured", "wait", "kernel"]


@dataclass
class Sweep:
    doc: dict
    runs: pd.DataFrame  # COLUMNS

    @property
    def cpus(self) -> int:
        return int(self.doc.get("cpus", 0))

    @property
    def pingpong(self) -> dict:
        return self.doc.get("pingpong", {})

    @property
    def timeslice(self) -> dict:
        return self.doc.get("timeslice") or {}

    def model_table(self) -> pd.DataFrame:
        """The sweep's predicted-vs-measured table (mpi_predict.table), recomputed for files
        written before it was stored."""
        rows = self.doc.get("model_table")
        if rows is None:
            rows = mpi_predict.table(self.doc)
        t = pd.DataFrame(rows)
        for col in ("predicted_comm_s", "measured_comm_s", "comm_ratio", "predicted_iter_s", "measured_iter_s", "iter_ratio"):
            if col in t.columns:
                t[col] = pd.to_numeric(t[col], errors="coerce")
        return t


def load(run_dir) -> Sweep:
    path = Path(run_dir) / "mpi_sweep.json"
    doc = read_family_json(run_dir, path.name, SCHEMA, f"scripts/mpi_sweep.sh --run {run_dir} "
                           "(needs rooflab_mpi, built when MPI is found)")
    runs = pd.DataFrame(doc.get("runs", []))
    need = {"design", "ranks", "ranks_per_node", "time_per_iter_s", "comm_time_per_iter_s", "comm_only"}
    if runs.empty and doc.get("failed_runs"):
        raise RooflabDataError(f"{path}: every run failed: " + "; ".join(failed_lines(doc)[:5]))
    if runs.empty or not need <= set(runs.columns):
        raise RooflabDataError(f"{path}: runs need the keys {sorted(need)}")
    for col, default in (("id", ""), ("chunks", 1), ("overlap", False), ("node_reduce", "none"),
                         ("predicted_comm_s", float("nan")), ("oversubscribed", False), ("noise_rel_iqr", 0.0),
                         ("remeasured", 0), ("name", ""), ("compute_time_per_iter_s", float("nan")),
                         ("wait", "spin"), ("kernel", "microkernel")):
        if col not in runs.columns:
            runs[col] = default
    runs["predicted_comm_s"] = pd.to_numeric(runs.predicted_comm_s, errors="coerce")
    runs["remeasured"] = runs.remeasured.fillna(0).astype(int)
    runs["wait"] = runs.wait.fillna("spin")
    runs["kernel"] = runs.kernel.fillna("microkernel")
    return Sweep(doc, runs[COLUMNS].copy())


def failed_lines(doc: dict) -> list[str]:
    """"<id>: <message>" of each run the sweep recorded as failed (mpi_sweep.sh goes on past them)."""
    return [f"{r.get('id', '?')}: {r.get('message', '')}" for r in doc.get("failed_runs") or [] if isinstance(r, dict)]


def default_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with the optimized kernel and MPI's own waiting (not the typical-kernel or
    --wait yield comparisons)."""
    return runs[(runs.kernel == "microkernel") & (runs.wait == "spin")]


def main_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Full iterations of the default form of each design (no ablation switches)."""
    runs = default_runs(runs)
    coffee_default = (runs.design != "coffee") | ((runs.node_reduce == "balanced") & runs.overlap)
    return runs[~runs.comm_only & coffee_default]


def variant_label(r) -> str:
    """salar | coffee, with its ablation switches spelled out."""
    if r.design != "coffee":
        return r.design
    return ("coffee" + ("" if r.node_reduce == "balanced" else " −balanced reduce")
            + ("" if r.overlap else " −overlap"))
