#!/usr/bin/env python3
"""One model, three witnesses: each allreduce design at 2-4 emulated hosts x 1-2 ranks, timed by
real MPICH on the emulated hosts, simulated by SimGrid SMPI on a platform made from the same
hosts' measured links, and predicted by the alpha-beta-gamma model; the error of each pair.

  scripts/witness.py --run DIR [--hosts "2 3 4"] [--rph "1 2"] [--size 512x4096] [--iters 10]
                     [--reps 3] [--chunks 4] [--rate 1gbit] [--build DIR] [--reuse-real | --table-only]

1. real: scripts/hosts_sweep.sh --run DIR ... --reps K under scripts/cpu_lock.sh time (needs
   root): the links' ping-pong alpha/beta per host count (stored in DIR/hosts/N<n>/), every
   design K times, verified; the witness is the median of the K repetitions.
2. SMPI: per host count, scripts/smpi_platform.py with the same ping-pong files as link (the
   inter-node pair h0-h1, also the real runs' --model) and intra-node path (h0-h0), one core
   per rank; computation injected: the real mpich runs' compute per row of the same cell,
   split between the row phase and the column modify as rooflab_smpi --compute injected's
   calibration (under the timing lock) splits them. So the simulation times nothing of the
   host (build lock, deterministic) and differs from the real runs in communication only.
3. model: `rooflab model --mpi-sweep` (roofline/mpi_model.cpp, the core-sharing model) on the
   real runs, with the one-rank compute and --timeslice constants hosts_sweep.sh measured.
Output: DIR/witness.json (schema rooflab.witness/1, docs/json.md) and DIR/witness.md. With
more ranks than CPUs a cell is oversubscribed: the real ranks share cores (and wait with --wait
yield), SMPI gives each its own, the model charges the sharing; such cells are flagged and left
out of the accuracy summary. --reuse-real simulates and tabulates the real runs DIR holds;
--table-only rebuilds the table from what DIR holds.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(here, "scripts"))
import smpi_sweep  # noqa: E402  (calibrate, simulate_one)

DESIGNS = ["mpich", "ring", "salar", "coffee"]
SCHEMA = "rooflab.witness/1"
DISAGREE = 0.25  # |SMPI / real - 1| above this: investigated (docs/families/sinkhorn_mpi.md)
PAIRS = (("smpi_vs_real", "smpi", "real"), ("model_vs_real", "model", "real"), ("model_vs_smpi", "model", "smpi"))


def die(msg):
    print(f"witness.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def cell_key(hosts, rph, design):
    return f"{hosts}x{rph}/{design}"


def real_cells(hosts_doc):
    """Median over the repetitions of each (hosts, ranks per host, design) of hosts_sweep.json:
    {key: {time_s, compute_s, comm_s, reps, range_s, verified, run (the median repetition)}}."""
    groups = {}
    for r in hosts_doc["runs"]:
        groups.setdefault(cell_key(r["hosts"], r["ranks_per_host"], r["design"]), []).append(r)
    out = {}
    for key, rs in groups.items():
        rs = sorted(rs, key=lambda r: r["time_per_iter_s"])
        t = [r["time_per_iter_s"] for r in rs]
        out[key] = {"time_s": statistics.median(t),
                    "compute_s": statistics.median(r["compute_time_per_iter_s"] for r in rs),
                    "comm_s": statistics.median(r["comm_time_per_iter_s"] for r in rs),
                    "reps": len(rs), "range_s": [t[0], t[-1]],
                    "verified": all(r["verification"]["ok"] for r in rs), "run": rs[(len(rs) - 1) // 2]}
    return out


def model_input(hosts_doc, real):
    """The real runs as a rooflab.mpi_sweep/1 document for `rooflab model --mpi-sweep`: the
    one-rank run (compute constant), --timeslice, the 2-host inter-node ping-pong, and the median
    repetition of each cell (id <hosts>x<rph>/<design>)."""
    one = dict(hosts_doc["one_rank"], id="one_rank")
    runs = [one] + [dict(c["run"], id=key) for key, c in sorted(real.items())]
    return {"schema": "rooflab.mpi_sweep/1", "cpus": hosts_doc["cpus"], "timeslice": hosts_doc["timeslice"],
            "pingpong": hosts_doc.get("model_pingpong") or {}, "runs": runs,
            "note": "written by scripts/witness.py from hosts_sweep.json for the model"}


def model_cells(model_table):
    """The model's rows by id: iteration, compute and comm (alpha-beta-gamma + core sharing)."""
    def add(a, b):
        return None if a is None or b is None else a + b
    return {r["id"]: {"time_s": r["predicted_iter_s"], "compute_s": r["predicted_compute_s"],
                      "comm_s": add(r["alpha_beta_comm_s"], r["sharing_comm_s"]), "regime": r["regime"],
                      "ranks_per_core": r["ranks_per_core"]}
            for r in model_table}


def rel(a, b):
    """a / b - 1, None where either is missing."""
    if a is None or b is None or not b > 0:
        return None
    return a / b - 1


def build_table(real, smpi, model, cpus):
    """Rows per cell (real, SMPI, model times and the pair errors; oversubscribed when the
    cell has more ranks than CPUs) and the summary over the cells that are not."""
    rows = []
    for key in sorted(real, key=lambda k: (int(k.split("x")[0]), int(k.split("x")[1].split("/")[0]),
                                           DESIGNS.index(k.split("/")[1]))):
        hosts, rest = key.split("x")
        rph, design = rest.split("/")
        hosts, rph = int(hosts), int(rph)
        w = {"real": real[key], "smpi": smpi.get(key), "model": model.get(key)}
        t = {k: (v["time_s"] if v else None) for k, v in w.items()}
        err = {name: rel(t[a], t[b]) for name, a, b in PAIRS}
        rows.append({"cell": key, "hosts": hosts, "ranks_per_host": rph, "ranks": hosts * rph, "design": design,
                     "oversubscribed": hosts * rph > cpus,
                     "real": {k: v for k, v in real[key].items() if k != "run"},
                     "smpi": w["smpi"], "model": w["model"], "errors": err,
                     "smpi_real_disagree": err["smpi_vs_real"] is not None and abs(err["smpi_vs_real"]) > DISAGREE})
    judged = [r for r in rows if not r["oversubscribed"]]
    summary = {"cpus": cpus, "judged_cells": len(judged), "oversubscribed_cells": len(rows) - len(judged),
               "disagree_threshold": DISAGREE,
               "smpi_real_disagree": [r["cell"] for r in judged if r["smpi_real_disagree"]],
               "smpi_real_disagree_oversubscribed": [r["cell"] for r in rows
                                                     if r["oversubscribed"] and r["smpi_real_disagree"]]}
    for name, _, _ in PAIRS:
        e = [abs(r["errors"][name]) for r in judged if r["errors"][name] is not None]
        summary[name] = {"cells": len(e), "median_abs": statistics.median(e) if e else None,
                         "max_abs": max(e) if e else None}
    return rows, summary


def markdown(rows, summary):
    ms = lambda v: "n/a" if v is None else f"{v * 1e3:.3f}"
    pc = lambda v: "n/a" if v is None else f"{v * 100:+.0f}%"
    out = ["| hosts x ranks | design | real ms (median, range) | SMPI ms | model ms | SMPI vs real | "
           "model vs real | model vs SMPI | |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        re_ = r["real"]
        note = f"oversubscribed ({r['ranks']} ranks, {summary['cpus']} CPUs): not judged" if r["oversubscribed"] else ""
        if not re_["verified"]:
            note += " NOT VERIFIED"
        out.append(f"| {r['hosts']} x {r['ranks_per_host']} | {r['design']} | {ms(re_['time_s'])} "
                   f"({ms(re_['range_s'][0])}-{ms(re_['range_s'][1])}) | {ms((r['smpi'] or {}).get('time_s'))} | "
                   f"{ms((r['model'] or {}).get('time_s'))} | {pc(r['errors']['smpi_vs_real'])} | "
                   f"{pc(r['errors']['model_vs_real'])} | {pc(r['errors']['model_vs_smpi'])} | {note.strip()} |")
    out.append("")
    for name, _, _ in PAIRS:
        s = summary[name]
        if s["cells"]:
            out.append(f"- {name.replace('_', ' ')}: median |error| {s['median_abs'] * 100:.0f}%, max "
                       f"{s['max_abs'] * 100:.0f}% over the {s['cells']} cells with a core per rank")
    return "\n".join(out) + "\n"


def run_real(a):
    cmd = [os.path.join(here, "scripts", "cpu_lock.sh"), "time", os.path.join(here, "scripts", "hosts_sweep.sh"),
           "--run", a.run, "--hosts", a.hosts, "--rph", a.rph, "--size", a.size, "--iters", str(a.iters),
           "--chunks", str(a.chunks), "--rate", a.rate, "--reps", str(a.reps), "--build", a.build]
    print("witness.py: " + " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        die("the real runs failed (scripts/hosts_sweep.sh above); the hosts are down again")


def run_smpi(a, hosts_doc, real):
    """Each cell simulated (same design options as the real run, SMPI waits by its own rules);
    salar and coffee also with --leaders allreduce (the diagnostic: SMPI's MPI_Iallreduce)."""
    rooflab = os.path.join(a.build, "rooflab")
    out = os.path.join(a.run, "witness", "smpi")
    os.makedirs(out, exist_ok=True)
    cal_dir = smpi_sweep.calibration_platform(out)
    per_row = {}
    cells = {}
    for key, c in sorted(real.items()):
        run = c["run"]
        N, R, P = run["hosts"], run["ranks_per_host"], run["ranks"]
        M, Ncol = run["dims"]
        rows = -(-M // P)
        if rows not in per_row:  # one calibration per slab size, like the real ranks' slabs
            per_row[rows] = smpi_sweep.calibrate(rooflab, cal_dir, rows, Ncol)
        # The kernels' time per row as the real ranks measured it: the mpich cell of the same
        # hosts x ranks (no chunks, no overlap), split between the row phase and the column
        # modify as the calibration splits them. The calibration alone (caches swept, timed
        # once) gave 0.8-3x the real ranks' time: their slabs stay in the L3 across iterations,
        # and one timing on a shared VM is noisy (docs/families/sinkhorn_mpi.md).
        cal_row, cal_col = per_row[rows]
        ref = real.get(cell_key(N, R, "mpich"), c)
        per = ref["compute_s"] / rows
        row_s, col_s = per * cal_row / (cal_row + cal_col), per * cal_col / (cal_row + cal_col)
        pp = os.path.join(a.run, "hosts", f"N{N}", "pingpong")
        plat = os.path.join(out, f"platform-N{N}-R{R}")
        subprocess.run([sys.executable, os.path.join(here, "scripts", "smpi_platform.py"), "--out", plat,
                        "--link", os.path.join(pp, "h0-h1", "mpi_pingpong.json"),
                        "--intra", os.path.join(pp, "h0-h0", "mpi_pingpong.json"),
                        "--nodes", str(N), "--ranks-per-node", str(R)], check=True, stdout=subprocess.DEVNULL)
        base = ["--design", run["design"], "--size", f"{M}x{Ncol}", "--iters", str(a.sim_iters), "--compute",
                "injected", "--inject-s", f"{row_s!r},{col_s!r}", "--cfg=smpi/simulate-computation:no"]
        if run["design"] in ("salar", "coffee"):
            base += ["--chunks", str(run["chunks"])]
        variants = [("", [])] + ([("blocking_leaders_", ["--leaders", "allreduce"])]
                                 if run["design"] in ("salar", "coffee") else [])
        cell = {"platform": os.path.relpath(plat, a.run), "injected_s_per_row": [row_s, col_s],
                "calibrated_s_per_row": [cal_row, cal_col], "compute_from": cell_key(N, R, "mpich") + " (real)"}
        for prefix, extra in variants:
            name = key.replace("/", "-") + ("-" + prefix.rstrip("_") if prefix else "")
            j, wall, errtxt = smpi_sweep.simulate_one(rooflab, plat, P, base + extra, os.path.join(out, name + ".wall"))
            if j is None:
                print(f"witness.py: SMPI {name} failed: {errtxt}", flush=True)
                continue
            with open(os.path.join(out, name + ".json"), "w") as f:
                json.dump(j, f, indent=1)
            cell.update({prefix + "time_s": j["time_per_iter_s"], prefix + "compute_s": j["compute_time_per_iter_s"],
                         prefix + "comm_s": j["comm_time_per_iter_s"], prefix + "wall_s": wall})
        if "time_s" in cell:
            cells[key] = cell
            print(f"witness.py: SMPI {key}: {cell['time_s'] * 1e3:.3f} ms (real {c['time_s'] * 1e3:.3f})", flush=True)
    return cells


def run_model(a, hosts_doc, real):
    d = os.path.join(a.run, "witness", "model")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "mpi_sweep.json"), "w") as f:
        json.dump(model_input(hosts_doc, real), f, indent=1)
    subprocess.run([os.path.join(a.build, "rooflab"), "model", "--mpi-sweep", d], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(d, "mpi_sweep.json")) as f:
        doc = json.load(f)
    return model_cells(doc["model_table"]), doc["model"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="run directory (hosts/, witness/, witness.json, witness.md)")
    ap.add_argument("--hosts", default="2 3 4", help='host counts (default "2 3 4")')
    ap.add_argument("--rph", default="1 2", help='ranks per host (default "1 2")')
    ap.add_argument("--size", default="512x4096", help="matrix MxN (default 512x4096)")
    ap.add_argument("--iters", type=int, default=10, help="iterations per real run (default 10)")
    ap.add_argument("--sim-iters", type=int, default=3, help="iterations per simulation (default 3; deterministic)")
    ap.add_argument("--reps", type=int, default=3, help="real repetitions per cell, median taken (default 3)")
    ap.add_argument("--chunks", type=int, default=4, help="salar / coffee chunks (default 4)")
    ap.add_argument("--rate", default="1gbit", help="emulated link rate (default 1gbit)")
    ap.add_argument("--build", default=os.path.join(here, "build", "release"))
    ap.add_argument("--reuse-real", action="store_true", help="no real runs: simulate and tabulate DIR's")
    ap.add_argument("--table-only", action="store_true", help="no runs: the table from what DIR holds")
    a = ap.parse_args()
    if a.reps < 1 or a.iters < 1 or a.sim_iters < 1:
        die("--reps, --iters and --sim-iters must be positive")
    hs = os.path.join(a.run, "hosts_sweep.json")
    if not a.table_only:
        if not os.path.isfile(os.path.join(a.build, "rooflab_smpi")):
            die(f"no rooflab_smpi in {a.build}: build with SimGrid (libsimgrid-dev) first")
        if not a.reuse_real:
            if os.geteuid() != 0:
                die("the emulated hosts need root (network namespaces); --reuse-real or --table-only use DIR's runs")
            run_real(a)
    if not os.path.isfile(hs):
        die(f"{hs} not found: run without --table-only (needs root for the emulated hosts)")
    with open(hs) as f:
        hosts_doc = json.load(f)
    for k in ("one_rank", "timeslice", "cpus", "runs"):
        if k not in hosts_doc:
            die(f"{hs} has no {k!r}: rerun scripts/hosts_sweep.sh (this file predates --reps)")
    real = real_cells(hosts_doc)
    # The model's alpha-beta: the 2-host inter-node ping-pong (the real runs' --model per host count).
    with open(os.path.join(a.run, "hosts", f"N{min(r['hosts'] for r in hosts_doc['runs'])}", "pingpong", "h0-h1",
                           "mpi_pingpong.json")) as f:
        hosts_doc["model_pingpong"] = json.load(f)
    smpi_path = os.path.join(a.run, "witness", "smpi_cells.json")
    if not a.table_only:
        smpi = run_smpi(a, hosts_doc, real)
        with open(smpi_path, "w") as f:
            json.dump(smpi, f, indent=1)
    with open(smpi_path) as f:
        smpi = json.load(f)
    model, model_doc = run_model(a, hosts_doc, real)
    rows, summary = build_table(real, smpi, model, hosts_doc["cpus"])
    doc = {"schema": SCHEMA, "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": " ".join(["scripts/witness.py"] + sys.argv[1:]), "cpu": hosts_doc.get("cpu"),
           "hosts_sweep": hosts_doc.get("command"), "rate": hosts_doc.get("rate"),
           "links": hosts_doc.get("links"),
           "method": {
               "real": "MPICH (hydra) on the emulated hosts (scripts/hosts.sh), median of the repetitions of "
                       "time_per_iter_s (max over ranks of each rank's median iteration); more ranks than CPUs: "
                       "--wait yield",
               "smpi": "rooflab_smpi on scripts/smpi_platform.py's cluster from the same hosts' ping-pong files "
                       "(inter-node h0-h1, intra-node h0-h0), one core per rank; compute injected: the real mpich "
                       "run's compute per row of the same cell, split row phase / column modify as rooflab_smpi's "
                       "calibration splits them (deterministic, times nothing of the host); "
                       "collectives as MPICH selects them (smpi/coll-selector:mpich), non-blocking ones SMPI's own",
               "model": "rooflab model --mpi-sweep (roofline/mpi_model.cpp): alpha-beta-gamma of the 2-host "
                        "inter-node link + the core-sharing terms; compute from the one-rank run",
               "errors": "a / b - 1 per pair (smpi_vs_real = SMPI / real - 1)",
               "oversubscribed": "ranks > CPUs: left out of the summary"},
           "model_formula": model_doc.get("formula"), "summary": summary, "rows": rows}
    tmp = os.path.join(a.run, ".witness.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(a.run, "witness.json"))
    md = markdown(rows, summary)
    with open(os.path.join(a.run, "witness.md"), "w") as f:
        f.write(md)
    print(md, end="")
    print(f"witness.py: {os.path.join(a.run, 'witness.json')}")


if __name__ == "__main__":
    main()
