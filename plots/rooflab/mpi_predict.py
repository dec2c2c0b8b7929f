"""The MPI sweep's machine model: what an iteration of each design should cost on THIS machine,
from measured constants only (never fitted to the sweep). Standard library only, so
scripts/mpi_sweep.sh can write the table into mpi_sweep.json with any Python 3.

Constants (all measured by rooflab_mpi, see docs/families/sinkhorn_mpi.md):
  alpha, beta, gamma  --pingpong over 2 ranks (one core each): per message, per byte, per added byte
  spin_gap_s          --timeslice over 2 x CPUs ranks: how long a busy-polling rank waits for its
                      core while the other rank on it runs (the scheduler's slice, one tick here)
  yield_round_s       --timeslice: one MPI_Test + sched_yield turn of two ranks sharing a core
  compute_1rank_s     the P = 1 run of the sweep (same kernel, dtype and size): one rank's
                      row rescale + column sums + column scale, no communication

Model, with c CPUs and k = ceil(P / c) ranks on the busiest core:
  comm     = alpha-beta-gamma time of the design's algorithm (rooflab_mpi's predicted_comm_s)
             + rounds x (k - 1) x spin_gap_s      when P > c and MPI busy-polls (--wait spin):
               each message round waits for the partner's turn on a shared core
             + rounds x (k - 1) x yield_round_s  when P > c and ranks yield (--wait yield)
  compute  = compute_1rank_s x ceil(M / P) / M x k   (k ranks take turns on a core)
  iteration = compute + comm - hidden, hidden (coffee with overlap only) = the part of the
             allreduce of chunks 2..C that fits under the column scale of the previous chunk,
             min(comm, compute / 3) x (C - 1) / C (the column scale is one of the three passes
             over the matrix).
"""
from __future__ import annotations

import math

REGIME_UNSHARED, REGIME_SPIN, REGIME_YIELD = "unshared", "shared-spin", "shared-yield"


def constants(doc: dict) -> dict:
    """The model's constants from an mpi_sweep.json document (runs included)."""
    pp = doc.get("pingpong") or {}
    ts = doc.get("timeslice") or {}
    comp = {}
    for r in doc.get("runs", []):
        if r.get("ranks") == 1 and not r.get("comm_only") and r.get("compute_time_per_iter_s") is not None:
            key = (r.get("kernel", "microkernel"), r.get("dtype"), tuple(r.get("dims", ())))
            # The P = 1 runs of every design do the same work; keep the fastest (least disturbed).
            comp[key] = min(comp.get(key, math.inf), r["compute_time_per_iter_s"])
    return {"cpus": int(doc.get("cpus", 0)), "alpha_s": pp.get("alpha_s"), "beta_bytes_per_s": pp.get("beta_bytes_per_s"),
            "gamma_s_per_byte": pp.get("gamma_s_per_byte"), "spin_gap_s": ts.get("spin_gap_s"),
            "yield_round_s": ts.get("yield_round_s"), "compute_1rank_s": comp}


def regime(run: dict, cpus: int) -> str:
    if run["ranks"] <= cpus:
        return REGIME_UNSHARED
    return REGIME_YIELD if run.get("wait") == "yield" else REGIME_SPIN


def predict(run: dict, k: dict) -> dict:
    """Predicted comm and iteration seconds of one run (None where a constant is missing)."""
    P, cpus = run["ranks"], k["cpus"]
    share = math.ceil(P / cpus) if cpus else 1
    reg = regime(run, cpus)
    ab = run.get("predicted_comm_s")
    rounds = run.get("allreduce_rounds")
    per_round = {REGIME_UNSHARED: 0.0, REGIME_SPIN: k.get("spin_gap_s"), REGIME_YIELD: k.get("yield_round_s")}[reg]
    sharing = None if per_round is None or rounds is None else rounds * (share - 1) * per_round
    comm = None if ab is None or sharing is None else ab + sharing
    M = run["dims"][0]
    c1 = k["compute_1rank_s"].get((run.get("kernel", "microkernel"), run.get("dtype"), tuple(run["dims"])))
    compute = 0.0 if run.get("comm_only") else (None if c1 is None else c1 * math.ceil(M / P) / M * share)
    hidden = 0.0
    if comm is not None and compute is not None and run.get("design") == "coffee" and run.get("overlap") \
            and run.get("chunks", 1) > 1 and not run.get("comm_only"):
        C = run["chunks"]
        hidden = min(comm, compute / 3) * (C - 1) / C
    it = None if comm is None or compute is None else compute + comm - hidden
    return {"regime": reg, "ranks_per_core": share, "rounds": rounds, "alpha_beta_comm_s": ab, "sharing_comm_s": sharing,
            "predicted_comm_s": comm, "predicted_compute_s": compute, "hidden_by_overlap_s": hidden,
            "predicted_iter_s": it}


def _key(r: dict) -> tuple:
    return (r["design"], r["ranks"], r["ranks_per_node"], r.get("chunks", 1), r.get("node_reduce"), r.get("overlap"),
            r.get("wait", "spin"), r.get("kernel", "microkernel"), r.get("dtype"), tuple(r.get("dims", ())))


def _ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def table(doc: dict) -> list[dict]:
    """One row per full-iteration run: predicted vs measured iteration time, and the comm time of
    its --comm-only twin (the allreduce alone, what the comm model predicts) where there is one."""
    k = constants(doc)
    runs = doc.get("runs", [])
    comm_only = {_key(r): r for r in runs if r.get("comm_only")}
    rows = []
    for r in runs:
        if r.get("comm_only") or r["ranks"] < 2:
            continue
        p = predict(r, k)
        twin = comm_only.get(_key(r))
        pc = predict(twin, k) if twin else None
        measured_comm = twin["comm_time_per_iter_s"] if twin else None
        pred_comm = pc["predicted_comm_s"] if pc else None
        rows.append({"id": r.get("id", ""), "design": r["design"], "ranks": r["ranks"], "ranks_per_node": r["ranks_per_node"],
                     "chunks": r.get("chunks", 1), "node_reduce": r.get("node_reduce"), "overlap": r.get("overlap"),
                     "wait": r.get("wait", "spin"), "kernel": r.get("kernel", "microkernel"), "regime": p["regime"],
                     "ranks_per_core": p["ranks_per_core"], "rounds": p["rounds"],
                     "comm_only_id": twin.get("id") if twin else None,
                     "predicted_comm_s": pred_comm, "measured_comm_s": measured_comm,
                     "comm_ratio": _ratio(measured_comm, pred_comm),
                     "alpha_beta_comm_s": p["alpha_beta_comm_s"], "sharing_comm_s": p["sharing_comm_s"],
                     "predicted_compute_s": p["predicted_compute_s"], "hidden_by_overlap_s": p["hidden_by_overlap_s"],
                     "predicted_iter_s": p["predicted_iter_s"], "measured_iter_s": r["time_per_iter_s"],
                     "iter_ratio": _ratio(r["time_per_iter_s"], p["predicted_iter_s"])})
    rows.sort(key=lambda x: (x["regime"] != REGIME_UNSHARED, x["wait"], x["design"], x["ranks"], x["ranks_per_node"], x["id"]))
    return rows


def summary(rows: list[dict]) -> dict:
    """Per regime: how many rows and the range / median of measured / predicted."""
    out = {}
    for reg in (REGIME_UNSHARED, REGIME_SPIN, REGIME_YIELD):
        g = [x for x in rows if x["regime"] == reg]
        s = {"rows": len(g)}
        for q in ("comm_ratio", "iter_ratio"):
            v = sorted(x[q] for x in g if x[q] is not None)
            if v:
                s[q] = {"min": v[0], "median": v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2,
                        "max": v[-1]}
        out[reg] = s
    return out


def _median(v: list[float]) -> float:
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def claims(doc: dict) -> dict:
    """What the COFFEE one-node claim needs (paper Sec. VI-B2, Fig. 10: COFFEE-CPU with MPICH-Ring
    vs raw MPICH-Ring, 1.14-7.5x on one node): per P, the ring design with the optimized kernel
    (microkernel) vs the typical kernel, same size and dtype, one host, no emulated nodes; and
    COFFEE-MPI on one emulated node (ranks_per_node = P) vs ring, same P.

    From the interleaved claim runs (claim_runs, ids claim_<what>_p<P>_rep<k>: the three runs of
    a P measured back to back, repeated) where the sweep has them: per P the median over the
    repetitions of each time and of each repetition's ratio; else from the sweep's own runs
    (measured minutes apart, so the machine's drift is in the ratio)."""
    reps = {}
    for r in doc.get("claim_runs") or []:
        what, p, rep = r["id"].split("_")[1:4]
        reps.setdefault((int(p[1:]), rep), {})[what] = r
    source = "claim_runs" if reps else "runs"
    if not reps:  # one "repetition" from the sweep's runs
        runs = [r for r in doc.get("runs", []) if not r.get("comm_only") and r.get("wait", "spin") == "spin"]

        def find(**kw):
            return next((r for r in runs if all(r.get(a) == b for a, b in kw.items())), None)

        for P in sorted({r["ranks"] for r in runs}):
            got = {"ring": find(design="ring", ranks=P, kernel="microkernel"),
                   "ringtypical": find(design="ring", ranks=P, kernel="typical"),
                   "coffee": find(design="coffee", ranks=P, ranks_per_node=P, node_reduce="balanced", overlap=True,
                                  kernel="microkernel")}
            reps[(P, "rep1")] = {a: b for a, b in got.items() if b}
    def row(P, group, slow, fast, names):
        """Median times of `slow` and `fast` over the repetitions that have both, and of their ratio."""
        pairs = [g for g in group if slow in g and fast in g]
        if not pairs:
            return None
        t = lambda g, w: g[w]["time_per_iter_s"]  # noqa: E731
        ratios = [t(g, slow) / t(g, fast) for g in pairs]
        ref = pairs[0][fast]
        return {"ranks": P, "dims": ref["dims"], "dtype": ref["dtype"], "oversubscribed": ref["oversubscribed"],
                "repetitions": len(pairs), names[0]: _median([t(g, slow) for g in pairs]),
                names[1]: _median([t(g, fast) for g in pairs]), "speedup": _median(ratios),
                "speedup_range": [min(ratios), max(ratios)], "ids": [[g[slow].get("id"), g[fast].get("id")] for g in pairs]}

    cpu, mpi = [], []
    for P in sorted({P for P, _ in reps}):
        group = [g for (q, _), g in sorted(reps.items()) if q == P]
        r = row(P, group, "ringtypical", "ring", ("ring_typical_s", "ring_microkernel_s"))
        if r:
            cpu.append(r)
        r = row(P, group, "ring", "coffee", ("ring_s", "coffee_s"))
        if r and P > 1:
            mpi.append(r | {"chunks": next(g for g in group if "coffee" in g)["coffee"]["chunks"]})
    return {"source": source, "coffee_cpu_vs_ring_one_node": cpu, "coffee_mpi_vs_ring_one_node": mpi,
            "paper": "COFFEE Sec. VI-B2 / Fig. 10: COFFEE-CPU over raw MPICH-Ring on one node 1.14-7.5x (avg 2.0x)"}
