#!/usr/bin/env python3
"""SimGrid SMPI tests: the platform generator, the rooflab_smpi build, small simulated runs.

  test_smpi.py platform|build|runs|pingpong|injected SOURCE_DIR BUILD_DIR WORK_DIR

platform needs nothing but Python; the others exit 77 (CTest: skipped) with the reason when
the build has SimGrid off (BUILD_DIR/rooflab-deps.txt).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77
mode, src, build, work = sys.argv[1:5]
gen = os.path.join(src, "scripts", "smpi_platform.py")
rooflab = os.path.join(build, "rooflab")
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def run(cmd, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def need_simgrid():
    deps = os.path.join(build, "rooflab-deps.txt")
    line = next((l.strip() for l in open(deps) if l.strip().startswith("SIMGRID:")), "SIMGRID: not listed")
    if not line.startswith("SIMGRID: found"):
        print(f"skipped: this build has no SimGrid SMPI ({line}); Debian: libsimgrid-dev")
        sys.exit(SKIP)


def platform(name, *args):
    out = os.path.join(work, name)
    rc, so, se = run([sys.executable, gen, "--out", out, *args])
    return rc, out, se


def simulate(plat, np, *args, timeout=300):
    """rooflab mpi --simulate PLAT --np NP -- ARGS; (rc, rank 0's JSON or None, stderr)."""
    rc, so, se = run([rooflab, "mpi", "--simulate", plat, "--np", str(np), "--", *args], timeout)
    try:
        j = json.loads(so[so.index("{"):]) if "{" in so else None
    except json.JSONDecodeError:
        j = None
    return rc, j, se


def link_file(name, **kv):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(kv, f)
    return path


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

if mode == "platform":
    # From a measured link: counts, bandwidths and latencies land where SimGrid reads them.
    link = link_file("link.json", alpha_s=40e-6, beta_bytes_per_s=117e6, flops_per_s=2e9)
    intra = link_file("intra.json", alpha_s=1e-6, beta_Bps=5e9)
    rc, out, se = platform("m", "--link", link, "--intra", intra, "--nodes", "3", "--ranks-per-node", "2",
                           "--host-flops", "4e9")
    check(rc == 0, f"generator from a link file (rc {rc}: {se.strip()})")
    c = ET.parse(os.path.join(out, "platform.xml")).getroot().find("cluster")
    check(c is not None and c.get("radical") == "0-2", "3 hosts (radical 0-2)")
    check(c.get("core") == "2", "cores = ranks per node by default")
    check(c.get("bw") == "117000000Bps" and c.get("lat") == "2e-05s", "link bw = beta, lat = alpha / 2 per link")
    check(c.get("bb_bw") == "351000000Bps" and c.get("bb_lat") == "0s", "backbone: 3 x beta, no latency")
    check(c.get("loopback_bw") == "5e+09Bps" and c.get("loopback_lat") == "1e-06s", "loopback from --intra")
    check(c.get("speed") == "2e+09f", "rank speed from the link file's flops_per_s")
    hosts = open(os.path.join(out, "hostfile")).read().split()
    check(hosts == ["node-0", "node-0", "node-1", "node-1", "node-2", "node-2"], "hostfile: 2 ranks per host, in order")
    meta = json.load(open(os.path.join(out, "platform.json")))
    check(meta["schema"] == "rooflab.smpi_platform/1" and meta["ranks"] == 6, "platform.json: schema, 6 ranks")
    check("--cfg=smpi/host-speed:4e+09f" in meta["smpirun_cfg"], "smpi/host-speed = --host-flops")
    check(all("source" in p for p in meta["parameters"].values()), "every parameter has a source")
    # The Tianhe-1A preset: the paper's shape and bandwidth limit, every assumption labelled.
    rc, out, se = platform("t", "--preset", "tianhe1a-distributed", "--host-flops", "4e9")
    check(rc == 0, f"tianhe1a-distributed preset (rc {rc}: {se.strip()})")
    c = ET.parse(os.path.join(out, "platform.xml")).getroot().find("cluster")
    meta = json.load(open(os.path.join(out, "platform.json")))
    check(c.get("radical") == "0-63" and c.get("core") == "12" and meta["ranks"] == 576, "64 nodes x 9 ranks, 12 cores")
    check(c.get("bw") == "125000000Bps", "distributed: 1 Gb/s between nodes")
    check("ASSUMED" in meta["parameters"]["alpha_s"]["source"], "the assumed latency says so")
    rc, out, se = platform("t8", "--preset", "tianhe1a-centralized", "--host-flops", "4e9", "--ranks-per-node", "8")
    c = ET.parse(os.path.join(out, "platform.xml")).getroot().find("cluster")
    check(rc == 0 and c.get("bw") == "6.34e+09Bps" and len(open(os.path.join(out, "hostfile")).read().split()) == 512,
          "centralized, 8 ranks per node: 6.34 GB/s, 512 slots")
    rc, out, se = platform("ta", "--preset", "tianhe1a-distributed", "--host-flops", "4e9", "--alpha-s", "5e-5")
    c = ET.parse(os.path.join(out, "platform.xml")).getroot().find("cluster")
    meta = json.load(open(os.path.join(out, "platform.json")))
    check(rc == 0 and c.get("lat") == "2.5e-05s" and meta["parameters"]["alpha_s"]["source"].startswith("--alpha-s"),
          "--alpha-s replaces the preset's latency and says so")
    # Bad input: one clear message, exit 2.
    for args, msg in [(["--link", link_file("nobeta.json", alpha_s=1e-6), "--nodes", "2", "--ranks-per-node", "1"],
                       "no beta_bytes_per_s"),
                      (["--link", link_file("neg.json", alpha_s=-1, beta_Bps=1e9), "--nodes", "2", "--ranks-per-node", "1"],
                       "alpha_s must be >= 0"),
                      (["--link", link, "--nodes", "2", "--ranks-per-node", "4", "--cores", "2"], "4 ranks per node on 2 cores"),
                      (["--link", link, "--nodes", "0", "--ranks-per-node", "1"], "nodes must be a positive integer"),
                      (["--preset", "tianhe1a-distributed"], "--preset needs --host-flops"),
                      (["--link", os.path.join(work, "missing.json"), "--nodes", "2", "--ranks-per-node", "1"], "No such file"),
                      (["--preset", "tianhe1a-distributed", "--link", link, "--host-flops", "1e9"], "exactly one of")]:
        rc, _, se = platform("bad", *args)
        check(rc == 2 and msg in se, f"refused: {msg} (rc {rc}: {se.strip()[-120:]})")

elif mode == "build":
    need_simgrid()
    smpi = os.path.join(build, "rooflab_smpi")
    check(os.path.isfile(smpi), "rooflab_smpi built beside rooflab")
    rc, so, se = run(["readelf", "-d", smpi])
    check(rc == 0 and re.search(r"NEEDED.*libsimgrid", so) is not None, "rooflab_smpi needs libsimgrid")
    rc, so, se = run(["nm", "-D", "--undefined-only", smpi])
    check(re.search(r"\b[Uw] MPI_Init\b", so) is not None, "its MPI_Init comes from SimGrid (undefined in the module)")
    link = link_file("link.json", alpha_s=10e-6, beta_bytes_per_s=1e9)
    rc, out, se = platform("p", "--link", link, "--nodes", "2", "--ranks-per-node", "1")
    # (--help would go to SimGrid, which lists its own options.)
    rc, so, se = run([rooflab, "mpi", "--simulate", out, "--np", "2", "--", "--design", "foo", "--size", "30x8"])
    check(rc != 0 and "rooflab_mpi: --design must be mpich, ring, salar or coffee, got 'foo'" in se,
          f"rooflab mpi --simulate runs it: its own message for bad input (rc {rc}: {se.strip()[-200:]})")
    rc, so, se = run([rooflab, "mpi", "--simulate", out, "--np", "2", "--dry-run", "--", "--design", "ring"])
    check(rc == 0 and "-platform " + os.path.join(out, "platform.xml") in so and "--cfg=smpi/bw-factor:0:1" in so
          and so.strip().endswith("rooflab_smpi --design ring"), f"--dry-run prints the smpirun line ({so.strip()})")
    rc, so, se = run([rooflab, "mpi", "--simulate", out, "--np", "3", "--", "--design", "ring"])
    check(rc == 1 and "has 2 rank slots" in se, f"more ranks than the platform's slots refused ({se.strip()})")
    rc, so, se = run([rooflab, "mpi", "--simulate", work, "--np", "1", "--", "--design", "ring"])
    check(rc == 1 and "platform.json" in se, f"a directory without platform.json refused ({se.strip()})")

elif mode == "runs":
    need_simgrid()
    # 4 hosts x 2 ranks, a slow network: every design verified against the reference at 4 and
    # 8 simulated ranks (nodes from the platform's hosts, as MPI_COMM_TYPE_SHARED sees them).
    link = link_file("link.json", alpha_s=20e-6, beta_bytes_per_s=125e6)
    rc, out, se = platform("p", "--link", link, "--nodes", "4", "--ranks-per-node", "2")
    for np in (4, 8):
        for design in ("mpich", "ring", "salar", "coffee"):
            extra = ["--chunks", "3"] if design in ("salar", "coffee") else []
            rc, j, se = simulate(out, np, "--design", design, "--size", "37x53", "--iters", "2", "--verify", *extra)
            ok = rc == 0 and j and j["verification"]["ok"] and j["nodes"] == np // 2 and j["simulated"]["compute"] == "real"
            check(ok, f"{design} at {np} simulated ranks verified (rc {rc}: {se.strip()[-300:]})")
    for design in ("salar", "coffee"):
        rc, j, se = simulate(out, 8, "--design", design, "--size", "37x53", "--chunks", "3", "--iters", "1", "--verify",
                             "--leaders", "allreduce")
        check(rc == 0 and j and j["verification"]["ok"] and j["leaders_allreduce"] == "MPI_Allreduce",
              f"{design} with blocking leaders verified")
    rc, j, se = simulate(out, 8, "--design", "coffee", "--size", "37x29", "--dtype", "f32", "--chunks", "4",
                         "--node-reduce", "mpi", "--no-overlap", "--iters", "1", "--verify")
    check(rc == 0 and j and j["verification"]["ok"], "coffee ablation (f32, MPI_Reduce, no overlap) verified")
    rc, j, se = simulate(out, 4, "--design", "coffee", "--size", "37x53", "--chunks", "3", "--iters", "1",
                         "--verify", "--fault")
    check(rc == 3 and "verification failed" in se, f"a corrupted sum fails verification (rc {rc})")
    rc, j, se = simulate(out, 4, "--design", "ring", "--size", "37x53", "--compute", "injected", "--verify")
    check(rc != 0 and "not with --compute injected" in se, f"--verify with --compute injected refused (rc {rc})")
    rc, j, se = simulate(out, 4, "--design", "ring", "--size", "37x53", "--inject-s", "1e-6,1e-6")
    check(rc != 0 and "--inject-s applies to --compute injected" in se, "--inject-s without --compute injected refused")
    rc, j, se = simulate(out, 4, "--design", "ring", "--size", "37x53", "--compute", "injected", "--inject-s", "0,1e-6")
    check(rc != 0 and "--inject-s must be two positive seconds" in se, "--inject-s 0,... refused")
    # Given per-row seconds: compute = rows x their sum (ranks as fast as this machine).
    rc, j, se = simulate(out, 4, "--design", "ring", "--size", "400x53", "--compute", "injected",
                         "--inject-s", "2e-6,1e-6", "--cfg=smpi/simulate-computation:no")
    check(rc == 0 and j and abs(j["compute_time_per_iter_s"] / (100 * 3e-6) - 1) < 0.01
          and j["simulated"]["injected_s_per_row"]["source"] == "--inject-s",
          f"--inject-s: 100 rows x 3 us = 0.3 ms of compute ({j and j['compute_time_per_iter_s']})")

elif mode == "pingpong":
    need_simgrid()
    # rooflab_mpi's own calibration on the generated platform recovers the alpha and beta it
    # was generated from (SMPI's bandwidth/latency factors are set to 1). The host's time between
    # the MPI calls is not simulated: SMPI would add it as measured, and on a loaded machine (a
    # parallel ctest) that put alpha 9% high.
    link = link_file("link.json", alpha_s=25e-6, beta_bytes_per_s=125e6)
    rc, out, se = platform("p", "--link", link, "--nodes", "2", "--ranks-per-node", "1")
    rc, j, se = simulate(out, 2, "--pingpong", "--cfg=smpi/simulate-computation:no")
    check(rc == 0 and j is not None, f"--pingpong under SMPI (rc {rc})")
    if j:
        check(abs(j["alpha_s"] / 25e-6 - 1) < 0.05, f"alpha {j['alpha_s']:.3g} s within 5% of 25 us")
        check(abs(j["beta_bytes_per_s"] / 125e6 - 1) < 0.05, f"beta {j['beta_bytes_per_s']:.3g} B/s within 5% of 125 MB/s")
        check(j["same_host"] is False, "ranks on two simulated hosts")

elif mode == "injected":
    need_simgrid()
    # --compute injected: no matrix, rank 0's calibrated per-row seconds on every rank; a
    # simulated rank half as fast as this machine computes twice as long.
    link = link_file("link.json", alpha_s=5e-6, beta_bytes_per_s=1e9)
    times = {}
    for name, rank in (("same", "1e9"), ("half", "0.5e9")):
        rc, out, se = platform(name, "--link", link, "--nodes", "2", "--ranks-per-node", "2", "--rank-flops", rank,
                               "--host-flops", "1e9")
        rc, j, se = simulate(out, 4, "--design", "coffee", "--size", "400x3000", "--chunks", "4", "--iters", "3",
                             "--compute", "injected")
        ok = rc == 0 and j and j["simulated"]["compute"] == "injected"
        check(ok, f"injected run, rank speed {rank} (rc {rc}: {se.strip()[-200:]})")
        if not ok:
            continue
        per_row = j["simulated"]["injected_s_per_row"]
        check(per_row["row_phase"] > 0 and per_row["column_modify"] > 0, "calibrated per-row seconds > 0")
        # Each rank: 100 rows x both phases, at host speed / rank speed.
        expect = 100 * (per_row["row_phase"] + per_row["column_modify"]) * 1e9 / float(rank)
        got = j["compute_time_per_iter_s"]
        check(abs(got / expect - 1) < 0.25, f"compute {got:.3g} s ~ 100 rows x calibrated x speed ratio {expect:.3g} s")
        times[name] = (got, expect)
else:
    sys.exit(f"unknown mode {mode}")

print(f"{len(fails)} failed" if fails else "all passed")
sys.exit(1 if fails else 0)
