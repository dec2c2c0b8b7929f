#!/usr/bin/env python3
"""Writes a SimGrid platform for `rooflab mpi --simulate DIR` (smpirun + rooflab_smpi).

  scripts/smpi_platform.py --out DIR --link LINK.json [--intra INTRA.json] --nodes N --ranks-per-node R
                           [--cores C] [--rank-flops F] [--host-flops F]
  scripts/smpi_platform.py --out DIR --preset tianhe1a-distributed|tianhe1a-centralized --host-flops F
                           [--nodes N] [--ranks-per-node R] [--alpha-s S]

DIR gets platform.xml (one SimGrid <cluster>: N hosts of C cores, a private link per host, a
non-blocking backbone, a loopback for ranks on one host), hostfile (R lines per host, rank k on
host k // R) and platform.json (schema rooflab.smpi_platform/1: every parameter with its value
and source, and the smpirun --cfg options the launcher passes).

LINK.json: what a link delivers between two hosts, e.g. rooflab_mpi --pingpong's
mpi_pingpong.json or the emulated hosts' measurement: alpha_s and beta_bytes_per_s (or
beta_Bps); optionally the rank's compute rate (flops_per_s). INTRA.json: the same between two
ranks on one host (default: LINK's figures, said so in platform.json).

Compute: a simulated rank computes at --rank-flops; rooflab_smpi's kernels run (or are
injected) in this machine's seconds, which SMPI turns into flops at smpi/host-speed =
--host-flops. Only the ratio matters: rank-flops = host-flops (the default) simulates ranks as
fast as this machine's cores.
"""
import argparse
import datetime
import json
import math
import os
import sys

# The Tianhe-1A-like presets (COFFEE, IEEE TPDS 2023, Sec. VI; docs/families/sinkhorn_mpi.md).
# Each value: (value, source).
TIANHE = {
    "nodes": (64, "COFFEE Figs. 13-14 captions: 64 nodes"),
    "ranks_per_node": (9, "COFFEE Figs. 13-14 captions: 9 processors per node (Fig. 2 uses 8)"),
    "cores": (12, "COFFEE Table I, Intel Xeon Westmere EP: 12 cores (2 x 6), 2.93 GHz"),
    "rank_flops": (2 * 16000.0 * 16000 / (5.181 / 9.8),
                   "COFFEE Sec. VI-B4: column rescaling of 16000^2 on one Westmere core, 5181 ms typical, "
                   "9.8x faster with COFFEE-CPU -> 0.529 s for 2 flops/element; assumed for the whole iteration"),
    "alpha_s": (1.57e-6, "ASSUMED: MPI latency of the Tianhe-1A fabric (1.57 us as recalled from Xie et al., "
                         "IEEE Micro 32(1) 2012; not checked against that text); the paper gives none"),
    "beta_centralized": (6.34e9, "Xie et al., IEEE Micro 32(1) 2012 (abstract): MPI unidirectional bandwidth "
                                 "6,340 MB/s on Tianhe-1A"),
    "beta_distributed": (1e9 / 8, "COFFEE Sec. VI-C: 'bandwidth between nodes is limited to 1 Gb/s'"),
    "intra_alpha_s": (0.5e-6, "ASSUMED: MPICH shared-memory latency on a Westmere node (typical; the paper gives none)"),
    "intra_beta": (4e9, "ASSUMED: MPICH shared-memory bandwidth on a Westmere node (typical; the paper gives none)"),
}


def die(msg):
    print(f"smpi_platform.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def positive(name, v):
    if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
        die(f"{name} must be a positive number, got {v!r}")
    return float(v)


def read_link(path, what):
    """alpha_s, beta (bytes/s) and the optional flops rate of a link measurement file."""
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        die(f"{what} {path}: {e}")
    if not isinstance(j, dict):
        die(f"{what} {path}: expected a JSON object")
    if "alpha_s" not in j:
        die(f"{what} {path}: no alpha_s (seconds per message)")
    beta = j.get("beta_bytes_per_s", j.get("beta_Bps"))
    if beta is None:
        die(f"{what} {path}: no beta_bytes_per_s (or beta_Bps)")
    alpha = j["alpha_s"]
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0):
        die(f"{what} {path}: alpha_s must be >= 0, got {alpha!r}")
    flops = j.get("flops_per_s")
    return float(alpha), positive(f"{what} {path}: beta", beta), (positive(f"{what} {path}: flops_per_s", flops)
                                                                   if flops is not None else None)


def si(v, unit):
    """SimGrid quantity with an explicit unit, full precision."""
    return f"{v:.9g}{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory to write platform.xml, hostfile, platform.json")
    ap.add_argument("--preset", choices=["tianhe1a-distributed", "tianhe1a-centralized"])
    ap.add_argument("--link", help="inter-host link measurement (alpha_s, beta_bytes_per_s[, flops_per_s])")
    ap.add_argument("--intra", help="same-host measurement (default: the link's)")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--ranks-per-node", type=int)
    ap.add_argument("--cores", type=int, help="cores per host (default: ranks per node)")
    ap.add_argument("--rank-flops", type=float, help="a simulated rank's compute rate (flop/s)")
    ap.add_argument("--host-flops", type=float, help="this machine's rate for the same work (smpi/host-speed)")
    ap.add_argument("--alpha-s", type=float, help="inter-host latency in place of the preset's or the link's "
                    "(a sensitivity check)")
    ap.add_argument("--name", help="platform name (default: the preset or 'measured')")
    a = ap.parse_args()

    if bool(a.preset) == bool(a.link):
        die("give exactly one of --preset and --link")
    if a.intra and not a.link:
        die("--intra goes with --link (the presets state their own intra-node figures)")
    params = {}  # name -> {"value", "source"}

    def put(name, value, source):
        params[name] = {"value": value, "source": source}

    if a.preset:
        if a.host_flops is None:
            die("--preset needs --host-flops: this machine's rate for the simulated rank's work "
                "(scripts/smpi_sweep.sh measures it with rooflab_smpi --compute injected)")
        if a.rank_flops is not None:
            die("--rank-flops: the preset's rank speed comes from the paper (see platform.json)")
        put("nodes", *TIANHE["nodes"]) if a.nodes is None else put("nodes", a.nodes, "--nodes")
        if a.ranks_per_node is None:
            put("ranks_per_node", *TIANHE["ranks_per_node"])
        else:
            put("ranks_per_node", a.ranks_per_node, "--ranks-per-node")
        put("cores", *TIANHE["cores"]) if a.cores is None else put("cores", a.cores, "--cores")
        put("rank_flops", *TIANHE["rank_flops"])
        put("alpha_s", *TIANHE["alpha_s"])
        put("beta_bytes_per_s", *TIANHE["beta_distributed" if a.preset.endswith("distributed") else "beta_centralized"])
        put("intra_alpha_s", *TIANHE["intra_alpha_s"])
        put("intra_beta_bytes_per_s", *TIANHE["intra_beta"])
    else:
        if a.nodes is None or a.ranks_per_node is None:
            die("--link needs --nodes and --ranks-per-node")
        alpha, beta, flops = read_link(a.link, "--link")
        put("nodes", a.nodes, "--nodes")
        put("ranks_per_node", a.ranks_per_node, "--ranks-per-node")
        put("cores", a.cores if a.cores is not None else a.ranks_per_node,
            "--cores" if a.cores is not None else "= ranks per node (one core per rank)")
        put("alpha_s", alpha, f"{a.link} alpha_s")
        put("beta_bytes_per_s", beta, f"{a.link} beta")
        if a.intra:
            ia, ib, _ = read_link(a.intra, "--intra")
            put("intra_alpha_s", ia, f"{a.intra} alpha_s")
            put("intra_beta_bytes_per_s", ib, f"{a.intra} beta")
        else:
            put("intra_alpha_s", alpha, "no --intra: the link's alpha")
            put("intra_beta_bytes_per_s", beta, "no --intra: the link's beta")
        if a.rank_flops is not None:
            put("rank_flops", positive("--rank-flops", a.rank_flops), "--rank-flops")
        elif flops is not None:
            put("rank_flops", flops, f"{a.link} flops_per_s")
    if a.alpha_s is not None:
        put("alpha_s", a.alpha_s, "--alpha-s (in place of: " + params["alpha_s"]["source"] + ")")
    if a.host_flops is not None:
        put("host_flops", positive("--host-flops", a.host_flops), "--host-flops (this machine)")
    # Without rates on either side the simulated ranks compute as fast as this machine's cores.
    if "rank_flops" not in params and "host_flops" not in params:
        put("rank_flops", 1e9, "none given: ranks as fast as this machine (only the ratio matters)")
    if "rank_flops" not in params:
        put("rank_flops", params["host_flops"]["value"], "none given: = host flops (ranks as fast as this machine)")
    if "host_flops" not in params:
        put("host_flops", params["rank_flops"]["value"], "none given: = rank flops (ranks as fast as this machine)")

    v = {k: p["value"] for k, p in params.items()}
    for k in ("nodes", "ranks_per_node", "cores"):
        if not (isinstance(v[k], int) and v[k] >= 1):
            die(f"{k} must be a positive integer, got {v[k]!r}")
    if v["ranks_per_node"] > v["cores"]:
        die(f"{v['ranks_per_node']} ranks per node on {v['cores']} cores: the model gives each rank a core")
    for k in ("rank_flops", "host_flops", "beta_bytes_per_s", "intra_beta_bytes_per_s"):
        positive(k, v[k])
    for k in ("alpha_s", "intra_alpha_s"):
        if not (v[k] >= 0 and math.isfinite(v[k])):
            die(f"{k} must be >= 0, got {v[k]!r}")

    nodes, rpn = v["nodes"], v["ranks_per_node"]
    # A route between two hosts crosses both hosts' private links and the backbone: each private
    # link carries half the latency, the backbone none. The backbone stands for a non-blocking
    # switch: shared, with room for every host's link at once (nodes x beta). (A FATPIPE or no
    # backbone gives the same simulated times here but made SimGrid's solver 10x slower on a
    # 288-rank SALaR run.)
    link_lat = v["alpha_s"] / 2
    bb_bw = v["beta_bytes_per_s"] * nodes
    name = a.name or a.preset or "measured"
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {name}: written by scripts/smpi_platform.py; parameters and sources in platform.json -->
<platform version="4.1">
  <cluster id="{name}" prefix="node-" suffix="" radical="0-{nodes - 1}" speed="{si(v['rank_flops'], 'f')}" core="{v['cores']}"
           bw="{si(v['beta_bytes_per_s'], 'Bps')}" lat="{si(link_lat, 's')}" sharing_policy="SPLITDUPLEX"
           bb_bw="{si(bb_bw, 'Bps')}" bb_lat="0s" bb_sharing_policy="SHARED"
           loopback_bw="{si(v['intra_beta_bytes_per_s'], 'Bps')}" loopback_lat="{si(v['intra_alpha_s'], 's')}"/>
</platform>
"""
    # SMPI's default network model scales bandwidth and latency by factors fitted to one
    # Ethernet cluster; 1 keeps the measured (or stated) alpha and beta as they are. The
    # collectives (MPI_Allreduce, MPI_Reduce, MPI_Bcast) pick their algorithms as MPICH does,
    # like the real runs and the paper's MPICH 3.4 (with SMPI's default the mpich design's allreduce took
    # 20x as long at 72 ranks).
    # An MPI_Test costs 100 us of simulated time by default (and grows while it fails), a
    # guard against busy-wait loops; COFFEE polls between row blocks of its overlapped modify,
    # so that would charge its leaders for polls a real MPI_Test does in ~0.1 us.
    cfg = [f"--cfg=smpi/host-speed:{si(v['host_flops'], 'f')}", "--cfg=smpi/bw-factor:0:1",
           "--cfg=smpi/lat-factor:0:1", "--cfg=smpi/coll-selector:mpich", "--cfg=smpi/test:1e-7",
           "--cfg=smpi/grow-injected-times:no"]
    meta = {
        "schema": "rooflab.smpi_platform/1",
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "name": name,
        "preset": a.preset,
        "nodes": nodes,
        "ranks_per_node": rpn,
        "ranks": nodes * rpn,
        "cores_per_node": v["cores"],
        "parameters": params,
        "platform": "platform.xml",
        "hostfile": "hostfile",
        "smpirun_cfg": cfg,
        "model": "one SimGrid <cluster>: private SPLITDUPLEX link per host (bw = beta, lat = alpha / 2), "
                 "shared backbone of nodes x beta (a non-blocking switch) and no latency, loopback for same-host messages; "
                 "SMPI bw/lat factors 1; a rank computes at rank_flops, this machine at host_flops",
    }
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "platform.xml"), "w") as f:
        f.write(xml)
    with open(os.path.join(a.out, "hostfile"), "w") as f:
        for n in range(nodes):
            f.write(f"node-{n}\n" * rpn)
    with open(os.path.join(a.out, "platform.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    print(f"smpi_platform.py: {a.out}: {nodes} hosts x {rpn} ranks ({name})")


if __name__ == "__main__":
    main()
