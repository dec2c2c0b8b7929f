"""RUN/mpi_sweep.json (written by scripts/mpi_sweep.sh) as a table: one row per rooflab_mpi
run, with the fields the MPI figures use. Missing or malformed files are RooflabDataError."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rooflab.data.jsonfile import Checker, RooflabDataError
from rooflab.data.run import read_family_json

SCHEMA = "rooflab.mpi_sweep/1"
DESIGNS = ["mpich", "ring", "salar", "coffee"]
COLUMNS = ["id", "name", "design", "ranks", "ranks_per_node", "chunks", "overlap", "node_reduce", "comm_only",
           "time_per_iter_s", "comm_time_per_iter_s", "compute_time_per_iter_s", "predicted_comm_s", "oversubscribed",
           "noise_rel_iqr", "remeasured", "wait", "kernel"]


@dataclass
class Sweep:
    doc: dict
    runs: pd.DataFrame  # COLUMNS
    path: Path

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
        """The sweep's predicted-vs-measured table as scripts/mpi_sweep.sh stored it (empty when
        the model could not be computed: model_error says why); plots/ never predicts itself."""
        rows = self.doc.get("model_table")
        if rows is None:
            raise RooflabDataError(f"{self.path}: no model_table (a file from before the sweep stored it): rebuild it "
                                   f"with `scripts/mpi_sweep.sh --run {self.path.parent} --collect-only`")
        t = pd.DataFrame(rows)
        for col in ("predicted_comm_s", "measured_comm_s", "comm_ratio", "predicted_iter_s", "measured_iter_s", "iter_ratio"):
            if col in t.columns:
                t[col] = pd.to_numeric(t[col], errors="coerce")
        return t


# key -> types of a run's keys the figures and the report read (required, optional)
_RUN_KEYS = {"design": (str,), "ranks": (int,), "ranks_per_node": (int,), "time_per_iter_s": (float,),
             "comm_time_per_iter_s": (float,), "comm_only": (bool,)}
_RUN_OPTIONAL = {"id": (str,), "name": (str,), "chunks": (int,), "overlap": (bool,), "node_reduce": (str,),
                 "predicted_comm_s": (float,), "oversubscribed": (bool,), "noise_rel_iqr": (float,),
                 "remeasured": (int,), "compute_time_per_iter_s": (float,), "wait": (str,), "kernel": (str,),
                 "dtype": (str,), "dims": (list,), "allreduce_rounds": (int,)}


def _check(ck: Checker, doc: dict) -> None:
    """The shape of what is read from the sweep, so a wrong value is named here, not met deep in
    a figure."""
    ck.opt(doc, "cpus", "$", (int,))
    for k in ("command", "note", "model_error", "size", "dtype"):
        ck.opt(doc, k, "$", (str,))
    for k in ("pingpong", "timeslice", "claims", "model"):
        ck.opt(doc, k, "$", (dict,))
    for group in ("runs", "claim_runs"):
        for i, r in enumerate(ck.items(doc, group, "$", required=False)):
            w = f"$.{group}[{i}]"
            lacks = [k for k in _RUN_KEYS if k not in r] if isinstance(r, dict) and group == "runs" else []
            if lacks:
                raise ck.fail(w, f"runs need the keys {sorted(_RUN_KEYS)}; this one lacks {', '.join(lacks)}")
            for k, t in _RUN_KEYS.items():
                if k in r:
                    ck.get(r, k, w, t, nullable=(k == "comm_time_per_iter_s"))
            for k, t in _RUN_OPTIONAL.items():
                ck.opt(r, k, w, t)
    for i, r in enumerate(ck.items(doc, "failed_runs", "$", required=False)):
        ck.opt(r, "id", f"$.failed_runs[{i}]", (str,))
        ck.opt(r, "message", f"$.failed_runs[{i}]", (str,))
    for i, r in enumerate(ck.items(doc, "model_table", "$", required=False)):
        w = f"$.model_table[{i}]"
        for k, t in (("id", (str,)), ("design", (str,)), ("regime", (str,)), ("ranks", (int,)),
                     ("ranks_per_node", (int,))):
            ck.get(r, k, w, t)
        for k in ("chunks", "rounds"):
            ck.opt(r, k, w, (int,))
        for k in ("predicted_comm_s", "measured_comm_s", "comm_ratio", "predicted_iter_s", "measured_iter_s",
                  "iter_ratio"):
            ck.opt(r, k, w, (float,))
    claims = ck.opt(doc, "claims", "$", (dict,), {})
    for group in ("coffee_cpu_vs_ring_one_node", "coffee_mpi_vs_ring_one_node"):
        for i, r in enumerate(ck.items(claims, group, "$.claims", required=False)):
            w = f"$.claims.{group}[{i}]"
            ck.get(r, "ranks", w, (int,))
            ck.get(r, "speedup", w, (float,))
            ck.get(r, "oversubscribed", w, (bool,))
            ck.items(r, "dims", w, of=(int,))
            ck.opt(r, "repetitions", w, (int,))
            ck.items(r, "ids", w, required=False, of=(list,))


def load(run_dir) -> Sweep:
    path = Path(run_dir) / "mpi_sweep.json"
    doc = read_family_json(run_dir, path.name, SCHEMA, f"scripts/mpi_sweep.sh --run {run_dir} "
                           "(needs rooflab_mpi, built when MPI is found)")
    _check(Checker(path), doc)
    runs = pd.DataFrame(doc.get("runs") or [])
    need = set(_RUN_KEYS)
    if runs.empty and doc.get("failed_runs"):
        raise RooflabDataError(f"{path}: every run failed: " + "; ".join(failed_lines(doc)[:5]))
    if runs.empty:
        raise RooflabDataError(f"{path}: no runs in it (runs need the keys {sorted(need)})")
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
    return Sweep(doc, runs[COLUMNS].copy(), path)


def failed_lines(doc: dict) -> list[str]:
    """"<id>: <message>" of each run the sweep recorded as failed (mpi_sweep.sh goes on past them)."""
    return [f"{r.get('id') or '?'}: {r.get('message') or ''}" for r in doc.get("failed_runs") or [] if isinstance(r, dict)]


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


# ----------------------------------------------------------------------------- beyond one machine

WITNESS_SCHEMA = "rooflab.witness/1"
WITNESS_CMD = "scripts/witness.py --run DIR (as root: real MPICH on emulated hosts, SMPI, the model)"
SMPI_SWEEP_SCHEMA = "rooflab.smpi_sweep/1"
SMPI_SWEEP_FILE = "smpi/tianhe1a-distributed/smpi_sweep-leaders-allreduce.json"
SMPI_SWEEP_CMD = "scripts/smpi_sweep.py --run DIR --np 576,288,144 --jobs 2 (needs SimGrid)"


def load_witness(run_dir) -> dict:
    """RUN/witness.json (scripts/witness.py): the rows the claims read, checked."""
    path = Path(run_dir) / "witness.json"
    doc = read_family_json(run_dir, path.name, WITNESS_SCHEMA, WITNESS_CMD)
    ck = Checker(path)
    for i, r in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        for k, t in (("cell", (str,)), ("design", (str,)), ("hosts", (int,)), ("ranks_per_host", (int,)),
                     ("ranks", (int,)), ("oversubscribed", (bool,)), ("real", (dict,))):
            ck.get(r, k, w, t)
        ck.get(r["real"], "time_s", w + ".real", (float,))
        ck.get(r["real"], "verified", w + ".real", (bool,))
        for k in ("smpi", "model"):
            v = ck.get(r, k, w, (dict,), nullable=True)
            if v is not None:
                ck.get(v, "time_s", f"{w}.{k}", (float,), nullable=True)
    return doc


def load_smpi_sweep(run_dir) -> dict:
    """RUN/smpi/tianhe1a-distributed/smpi_sweep-leaders-allreduce.json (scripts/smpi_sweep.py's
    defaults): the runs (nodes, ranks) and COFFEE's speed-ups, checked."""
    path = Path(run_dir) / SMPI_SWEEP_FILE
    doc = read_family_json(run_dir, SMPI_SWEEP_FILE, SMPI_SWEEP_SCHEMA, SMPI_SWEEP_CMD)
    ck = Checker(path)
    ck.get(doc, "preset", "$", (str,))
    for i, r in enumerate(ck.items(doc, "runs", "$")):
        for k, t in (("design", (str,)), ("ranks", (int,)), ("nodes", (int,)), ("time_per_iter_s", (float,))):
            ck.get(r, k, f"$.runs[{i}]", t)
    for i, r in enumerate(ck.items(doc, "coffee_speedups", "$")):
        ck.get(r, "ranks", f"$.coffee_speedups[{i}]", (int,))
        for k in ("coffee_over_ring", "coffee_over_salar"):
            ck.get(r, k, f"$.coffee_speedups[{i}]", (float,), nullable=True)
    return doc
