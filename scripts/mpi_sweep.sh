#!/usr/bin/env bash
# Sinkhorn-on-MPI sweep: calibrates the alpha-beta-gamma model, then runs every allreduce design
# for P = 1..MAXNP ranks and emulated nodes of R ranks, full iterations and the allreduce alone
# (--comm-only, what the model predicts), plus COFFEE's ablations (balanced reduce on/off x
# overlap on/off, Fig. 16). Noisy runs (iteration spread above --noise, or measured while the
# 1-minute load was at or above the CPU count) with P <= CPUs are measured again at the end,
# after waiting up to --quiet-wait seconds for the load to drop; the faster measurement is kept
# (contention only adds time) and both are recorded. Output: RUN/mpi/*.json (one per run) and
# RUN/mpi_sweep.json (everything, read by plots/mpi_*.py and the report).
#
#   scripts/mpi_sweep.sh --run DIR [--build DIR] [--size MxN] [--dtype f64|f32] [--iters K]
#                        [--max-np P] [--rpn "1 2 4"] [--chunks C] [--noise X] [--quiet-wait S] [--quick]
#                        [--collect-only]   (only rebuild RUN/mpi_sweep.json from RUN/mpi/*.json)
#
# Ranks beyond the CPU count share cores: on a 2-core machine P > 2 measures oversubscription
# (MPICH's ranks busy-poll, so the scheduler decides), and the runs say so ("oversubscribed").
# With RUN/machine.json present, the calibration becomes its "mpi" section.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cmdline="scripts/mpi_sweep.sh $*"
run="" build="$here/build/release" size=1024x8192 dtype=f64 iters=10 maxnp=8 rpns="1 2 4" chunks=4 noise=0.15 quiet_wait=30 collect=0
usage() { sed -n '11,13p' "$0" | sed 's/^# \{0,2\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --run) run=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --max-np) maxnp=$2; shift 2 ;;
    --rpn) rpns=$2; shift 2 ;;
    --chunks) chunks=$2; shift 2 ;;
    --noise) noise=$2; shift 2 ;;
    --quiet-wait) quiet_wait=$2; shift 2 ;;
    --collect-only) collect=1; shift ;;
    --quick) size=256x2048 iters=5 maxnp=4 rpns="1 2"; shift ;;
    -h|--help) usage ;;
    *) echo "mpi_sweep.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[[ -n $run ]] || { echo "mpi_sweep.sh: --run DIR is required" >&2; usage; }
[[ $maxnp =~ ^[1-9][0-9]*$ ]] || { echo "mpi_sweep.sh: --max-np takes a positive integer, got '$maxnp'" >&2; exit 2; }
bin="$build/kernels/sinkhorn/mpi/rooflab_mpi"
if [[ ! -x $bin ]]; then
  echo "mpi_sweep.sh: $bin not found: build it (cmake --build $build --target rooflab_mpi; needs mpich libmpich-dev)" >&2
  exit 1
fi
mpiexec=${ROOFLAB_MPIEXEC:-mpiexec}
py=${ROOFLAB_PYTHON:-$here/.venv/bin/python}
[[ -x $py ]] || py=python3
lock=/tmp/rooflab-timing.lock
cpus=$(nproc)
mkdir -p "$run/mpi"
out="$run/mpi"

# One timed run: ID NP ARGS... -> $out/ID.json (under the machine-wide timing lock), its
# arguments in ID.args and the 1-minute load when it started in ID.load.
runone() {
  local id=$1 np=$2; shift 2
  flock "$lock" sh -c 'cut -d" " -f1 /proc/loadavg >"$0"; exec "$@"' "$out/$id.load.new" \
    "$mpiexec" -n "$np" "$bin" "$@" --out "$out/$id.json.new" >/dev/null
  mv "$out/$id.json.new" "$out/$id.json"
  mv "$out/$id.load.new" "$out/$id.load"
  printf '%s\n' "$np $*" >"$out/$id.args"
}

if ((!collect)); then
echo "mpi_sweep: $cpus CPUs; P > $cpus is oversubscribed (measures the scheduler, not the design)" >&2
echo "mpi_sweep: calibrating (ping-pong ranks 0-1, gamma, MPI_Allreduce over 2 ranks)" >&2
cal=(--pingpong --out "$out/pingpong.json")
[[ -f $run/machine.json ]] && cal+=(--machine "$run/machine.json")
flock "$lock" "$mpiexec" -n 2 "$bin" "${cal[@]}" >/dev/null
[[ -f $run/machine.json ]] || echo "mpi_sweep: no $run/machine.json: the model stays in $out/pingpong.json only" >&2
model=(--model "$out/pingpong.json")

common=(--size "$size" --dtype "$dtype" --iters "$iters")
n=0
for ((P = 1; P <= maxnp; P++)); do
  echo "mpi_sweep: P = $P" >&2
  for d in mpich ring; do
    runone "${d}_p${P}" "$P" --design "$d" "${common[@]}" "${model[@]}"
    runone "${d}_p${P}_comm" "$P" --design "$d" "${common[@]}" "${model[@]}" --comm-only
    n=$((n + 2))
  done
  for R in $rpns; do
    ((R <= P && P % R == 0)) || continue
    for d in salar coffee; do
      runone "${d}_p${P}_r${R}" "$P" --design "$d" --ranks-per-node "$R" --chunks "$chunks" "${common[@]}" "${model[@]}"
      runone "${d}_p${P}_r${R}_comm" "$P" --design "$d" --ranks-per-node "$R" --chunks "$chunks" "${common[@]}" \
        "${model[@]}" --comm-only
      n=$((n + 2))
    done
    # COFFEE ablations (Fig. 16) on multi-rank nodes; balanced + overlap is the run above.
    if ((R > 1)); then
      for v in "--node-reduce mpi --no-overlap" "--no-overlap" "--node-reduce mpi"; do
        tag=$(tr -d ' -' <<<"$v")
        # shellcheck disable=SC2086
        runone "coffee_p${P}_r${R}_${tag}" "$P" --design coffee --ranks-per-node "$R" --chunks "$chunks" \
          "${common[@]}" "${model[@]}" $v
        n=$((n + 1))
      done
    fi
  done
done
echo "mpi_sweep: $n runs done" >&2

# Quiet re-measure (see the top).
noisy=$("$py" - "$out" "$noise" "$cpus" <<'EOF'
import json, sys, pathlib
out, noise, cpus = pathlib.Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
for f in sorted(out.glob("*.json")):
    d = json.loads(f.read_text())
    if d.get("schema") != "rooflab.sinkhorn_mpi/1" or d["ranks"] > cpus:
        continue
    if d.get("noise_rel_iqr", 0) > noise or float((out / (f.stem + ".load")).read_text()) >= cpus:
        print(f.stem)
EOF
)
for id in $noisy; do
  for _ in $(seq "$quiet_wait"); do
    awk -v c="$cpus" '{exit !($1 < c)}' /proc/loadavg && break
    sleep 1
  done
  read -r -a args <"$out/$id.args"
  cp "$out/$id.json" "$out/$id.prev.json"
  cp "$out/$id.load" "$out/$id.prev.load"
  echo "mpi_sweep: re-measuring $id (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  runone "$id" "${args[@]}"
  "$py" - "$out" "$id" <<'EOF'
import json, sys, pathlib
out, id = pathlib.Path(sys.argv[1]), sys.argv[2]
a, b = (json.loads((out / f"{id}{s}.json").read_text()) for s in (".prev", ""))
la, lb = (float((out / f"{id}{s}.load").read_text()) for s in (".prev", ""))
hist = [{k: d[k] for k in ("time_per_iter_s", "comm_time_per_iter_s", "noise_rel_iqr")} | {"load1": l}
        for d, l in ((a, la), (b, lb))]
keep, load = (b, lb) if b["time_per_iter_s"] < a["time_per_iter_s"] else (a, la)
keep["remeasured"] = 1
keep["remeasure_history"] = hist
(out / f"{id}.json").write_text(json.dumps(keep, indent=2))
(out / f"{id}.load").write_text(f"{load}\n")
(out / f"{id}.prev.json").unlink()
(out / f"{id}.prev.load").unlink()
EOF
done

fi

# Everything in one file for the figures.
"$py" - "$run" "$out" "$cpus" "$size" "$dtype" "$iters" "$chunks" "$noise" "$cmdline" <<'EOF'
import datetime, json, os, pathlib, sys
run, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
cpus, size, dtype, iters, chunks, noise = int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
runs = []
for f in sorted(out.glob("*.json")):
    d = json.loads(f.read_text())
    if d.get("schema") == "rooflab.sinkhorn_mpi/1":
        d["id"] = f.stem
        load = out / (f.stem + ".load")
        d["load1"] = float(load.read_text()) if load.exists() else None
        d.pop("timing", None)  # the same text in every run; docs/json.md has it
        runs.append(d)
doc = {"schema": "rooflab.mpi_sweep/1",
       "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": sys.argv[9],
       "cpus": cpus, "size": size, "dtype": dtype, "iterations": iters, "chunks": chunks, "noise_threshold": noise,
       "note": f"{cpus} CPUs: runs with more ranks are oversubscribed and measure the scheduler; "
               "load1 is the 1-minute load when a run started (other work on the machine)",
       "pingpong": json.loads((out / "pingpong.json").read_text()), "runs": runs}
tmp = run / "mpi_sweep.json.tmp"
tmp.write_text(json.dumps(doc, indent=1))
os.replace(tmp, run / "mpi_sweep.json")
print(run / "mpi_sweep.json")
EOF
