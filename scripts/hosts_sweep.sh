#!/usr/bin/env bash
# Sinkhorn on MPI across emulated hosts (scripts/hosts.sh, needs root): for each host count N,
# bring N hosts up, measure their links (hosts.sh measure: ping-pong alpha/beta per link), then
# run the four designs (mpich, ring, salar, coffee) with R ranks per host, verified against the
# reference, with the inter-node link's ping-pong as the model (--model). The hosts are torn
# down at the end, also when a step fails.
#   scripts/hosts_sweep.sh --run DIR [--hosts "2 3 4"] [--rph "1 2"] [--size MxN] [--iters K]
#                          [--chunks C] [--rate RATE] [--build DIR]
# Output: DIR/hosts/N<n>/hosts_links.json (+ its ping-pongs), DIR/hosts/N<n>/R<r>/<design>/sinkhorn_mpi.json
# and DIR/hosts_sweep.json ("rooflab.hosts_sweep/1", docs/json.md), a table on stdout.
# With more ranks than CPUs every run uses --wait yield (busy-polling ranks would measure
# the scheduler's time slice, docs/families/sinkhorn_mpi.md). Run it under
# `scripts/cpu_lock.sh time`: it is a timing job.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cmdline="scripts/hosts_sweep.sh $*"
run="" hosts="2 3 4" rphs="1 2" size=1024x8192 iters=10 chunks=4 rate=1gbit build="$here/build/release"
die() { echo "hosts_sweep.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value"
  case $1 in
    --run) run=$2 ;;
    --hosts) hosts=$2 ;;
    --rph) rphs=$2 ;;
    --size) size=$2 ;;
    --iters) iters=$2 ;;
    --chunks) chunks=$2 ;;
    --rate) rate=$2 ;;
    --build) build=$2 ;;
    *) die "unknown option '$1'" ;;
  esac
  shift 2
done
[ -n "$run" ] || die "needs --run DIR"
bin=${ROOFLAB_MPI_BIN:-$build/rooflab_mpi}
[ -x "$bin" ] || die "$bin is not built (cmake --build $build --target rooflab_mpi)"
for n in $hosts; do [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || die "--hosts takes host counts >= 2, got '$n'"; done
for r in $rphs; do [[ $r =~ ^[0-9]+$ ]] && [ "$r" -ge 1 ] || die "--rph takes positive integers, got '$r'"; done
cpus=$(nproc)

trap '"$here/scripts/hosts.sh" down >/dev/null' EXIT
mkdir -p "$run/hosts"
for n in $hosts; do
  d=$run/hosts/N$n
  "$here/scripts/hosts.sh" up "$n" --rate "$rate"
  "$here/scripts/hosts.sh" measure "$d" --build "$build"
  model=$d/pingpong/h0-h1/mpi_pingpong.json
  for r in $rphs; do
    wait=(); [ $((n * r)) -le "$cpus" ] || wait=(--wait yield)
    for design in mpich ring salar coffee; do
      c=(); [ "$design" = salar ] || [ "$design" = coffee ] && c=(--chunks "$chunks")
      echo "hosts_sweep.sh: N=$n R=$r $design" >&2
      "$here/scripts/hosts.sh" mpiexec --hosts "$n" --ranks-per-host "$r" -- "$bin" --design "$design" \
        --size "$size" --iters "$iters" "${c[@]}" "${wait[@]}" --verify --model "$model" \
        --out "$d/R$r/$design" >/dev/null
    done
  done
done

python3 - "$run" "$cmdline" "$rate" <<'EOF'
import glob, json, os, re, subprocess, sys, datetime
run, cmdline, rate = sys.argv[1:4]
cpu = {}
for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
    k, _, v = line.partition(":")
    if k.strip() in ("Model name", "CPU family", "Model", "CPU(s)"):
        cpu[k.strip()] = v.strip()
runs, links = [], {}
for f in sorted(glob.glob(os.path.join(run, "hosts", "N*", "R*", "*", "sinkhorn_mpi.json"))):
    n, r = re.search(r"/N(\d+)/R(\d+)/", f).groups()
    j = json.load(open(f))
    j.update(hosts=int(n), ranks_per_host=int(r), file=os.path.relpath(f, run))
    runs.append(j)
for f in sorted(glob.glob(os.path.join(run, "hosts", "N*", "hosts_links.json"))):
    links[re.search(r"/N(\d+)/", f).group(1)] = json.load(open(f))
out = {"schema": "rooflab.hosts_sweep/1",
       "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": cmdline, "cpu": cpu, "rate": rate, "links": links, "runs": runs}
tmp = os.path.join(run, ".hosts_sweep.json.tmp")
json.dump(out, open(tmp, "w"), indent=2)
os.replace(tmp, os.path.join(run, "hosts_sweep.json"))
ms = lambda x: f"{x * 1e3:8.3f}"
print(f"{'N':>2} {'R':>2} {'design':7} {'iter ms':>8} {'compute':>8} {'comm':>8} {'intra':>8} {'inter':>8} {'pred':>8}  wait   ok")
for j in sorted(runs, key=lambda j: (j["hosts"], j["ranks_per_host"], ["mpich", "ring", "salar", "coffee"].index(j["design"]))):
    pred = j.get("predicted_comm_s")
    print(f"{j['hosts']:>2} {j['ranks_per_host']:>2} {j['design']:7} {ms(j['time_per_iter_s'])} "
          f"{ms(j['compute_time_per_iter_s'])} {ms(j['comm_time_per_iter_s'])} "
          f"{ms(j['comm_intra_node_time_per_iter_s'])} {ms(j['comm_inter_node_time_per_iter_s'])} "
          f"{ms(pred) if pred is not None else '     n/a'}  {j['wait']:5} {j['verification']['ok']}")
EOF
