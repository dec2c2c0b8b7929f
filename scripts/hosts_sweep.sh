#!/usr/bin/env bash
# Sinkhorn on MPI across emulated hosts (scripts/hosts.sh, needs root): for each host count N,
# bring N hosts up, measure their links (hosts.sh measure: ping-pong alpha/beta per link), then
# run the four designs (mpich, ring, salar, coffee) with R ranks per host, verified against the
# reference, with the inter-node link's ping-pong as the model (--model), --reps times each
# (interleaved: every design once, then again). The hosts are torn down at the end, also when
# a step fails. Before the hosts: the core-sharing model's constants of this machine (one rank
# of the same size, no hosts: its compute; `--timeslice` over 2 x CPUs ranks).
#   scripts/hosts_sweep.sh --run DIR [--hosts "2 3 4"] [--rph "1 2"] [--size MxN] [--iters K]
#                          [--chunks C] [--rate RATE] [--reps K] [--build DIR]
# Output: DIR/hosts/N<n>/hosts_links.json (+ its ping-pongs),
# DIR/hosts/N<n>/R<r>/<design>/rep<k>/sinkhorn_mpi.json, DIR/hosts/one_rank/, DIR/hosts/timeslice/
# and DIR/hosts_sweep.json ("rooflab.hosts_sweep/1", docs/json.md), a table on stdout.
# With more ranks than CPUs every run uses --wait yield (busy-polling ranks would measure
# the scheduler's time slice, docs/families/sinkhorn_mpi.md). Run it under
# `scripts/cpu_lock.sh time`: it is a timing job.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cmdline="scripts/hosts_sweep.sh $*"
run="" hosts="2 3 4" rphs="1 2" size=1024x8192 iters=10 chunks=4 rate=1gbit reps=1 build="$here/build/release"
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
    --reps) reps=$2 ;;
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
[[ $reps =~ ^[0-9]+$ ]] && [ "$reps" -ge 1 ] || die "--reps takes a positive integer, got '$reps'"
cpus=$(nproc)

trap '"$here/scripts/hosts.sh" down >/dev/null' EXIT
mkdir -p "$run/hosts"
# The model's constants (roofline/mpi_model.hpp): one rank's compute at this size, and how
# ranks sharing a core wait (2 x CPUs ranks), on this machine without the hosts.
echo "hosts_sweep.sh: one rank, --timeslice" >&2
mpiexec -n 1 "$bin" --design ring --size "$size" --iters "$iters" --out "$run/hosts/one_rank" >/dev/null
mpiexec -n $((2 * cpus)) "$bin" --timeslice --out "$run/hosts/timeslice" >/dev/null
for n in $hosts; do
  d=$run/hosts/N$n
  "$here/scripts/hosts.sh" up "$n" --rate "$rate"
  "$here/scripts/hosts.sh" measure "$d" --build "$build"
  model=$d/pingpong/h0-h1/mpi_pingpong.json
  for r in $rphs; do
    wait=(); [ $((n * r)) -le "$cpus" ] || wait=(--wait yield)
    for ((k = 1; k <= reps; k++)); do
      for design in mpich ring salar coffee; do
        c=(); [ "$design" = salar ] || [ "$design" = coffee ] && c=(--chunks "$chunks")
        echo "hosts_sweep.sh: N=$n R=$r $design rep $k" >&2
        "$here/scripts/hosts.sh" mpiexec --hosts "$n" --ranks-per-host "$r" -- "$bin" --design "$design" \
          --size "$size" --iters "$iters" "${c[@]}" "${wait[@]}" --verify --model "$model" \
          --out "$d/R$r/$design/rep$k" >/dev/null
      done
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
for f in sorted(glob.glob(os.path.join(run, "hosts", "N*", "R*", "*", "rep*", "sinkhorn_mpi.json"))):
    n, r, k = re.search(r"/N(\d+)/R(\d+)/[a-z]+/rep(\d+)/", f).groups()
    j = json.load(open(f))
    j.update(hosts=int(n), ranks_per_host=int(r), rep=int(k), file=os.path.relpath(f, run))
    runs.append(j)
for f in sorted(glob.glob(os.path.join(run, "hosts", "N*", "hosts_links.json"))):
    links[re.search(r"/N(\d+)/", f).group(1)] = json.load(open(f))
out = {"schema": "rooflab.hosts_sweep/1",
       "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": cmdline, "cpu": cpu, "cpus": os.cpu_count(), "rate": rate, "links": links,
       "one_rank": json.load(open(os.path.join(run, "hosts", "one_rank", "sinkhorn_mpi.json"))),
       "timeslice": json.load(open(os.path.join(run, "hosts", "timeslice", "mpi_timeslice.json"))),
       "runs": runs}
tmp = os.path.join(run, ".hosts_sweep.json.tmp")
json.dump(out, open(tmp, "w"), indent=2)
os.replace(tmp, os.path.join(run, "hosts_sweep.json"))
ms = lambda x: f"{x * 1e3:8.3f}"
print(f"{'N':>2} {'R':>2} rep {'design':7} {'iter ms':>8} {'compute':>8} {'comm':>8} {'intra':>8} {'inter':>8} {'pred':>8}  wait   ok")
for j in sorted(runs, key=lambda j: (j["hosts"], j["ranks_per_host"], ["mpich", "ring", "salar", "coffee"].index(j["design"]), j["rep"])):
    pred = j.get("predicted_comm_s")
    print(f"{j['hosts']:>2} {j['ranks_per_host']:>2} {j['rep']:>3} {j['design']:7} {ms(j['time_per_iter_s'])} "
          f"{ms(j['compute_time_per_iter_s'])} {ms(j['comm_time_per_iter_s'])} "
          f"{ms(j['comm_intra_node_time_per_iter_s'])} {ms(j['comm_inter_node_time_per_iter_s'])} "
          f"{ms(pred) if pred is not None else '     n/a'}  {j['wait']:5} {j['verification']['ok']}")
EOF
