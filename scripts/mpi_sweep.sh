#!/usr/bin/env bash
# Sinkhorn-on-MPI sweep: calibrates the model (alpha-beta-gamma ping-pong over 2 ranks; with
# MAXNP > CPUs also the scheduler's time slice, --timeslice over 2 x CPUs ranks), then runs every
# allreduce design for P = 1..MAXNP ranks and emulated nodes of R ranks, full iterations and the
# allreduce alone (--comm-only, what the comm model predicts), plus COFFEE's ablations (balanced
# reduce on/off x overlap on/off, Fig. 16), COFFEE on one emulated node (R = P), ring with the
# typical kernel (the paper's raw MPICH-Ring, Fig. 10), and for P > CPUs mpich, ring and
# one-node coffee again with --wait yield (ranks hand their core over instead of busy-polling).
# Noisy runs (iteration spread above --noise, or measured while the
# 1-minute load was at or above the CPU count) with P <= CPUs are measured again at the end,
# after waiting up to --quiet-wait seconds for the load to drop; the faster measurement is kept
# (contention only adds time) and both are recorded. Output: RUN/mpi/*.json (one per run) and
# RUN/mpi_sweep.json (everything, read by the MPI figures and the report), with the model's
# predicted-vs-measured table and the one-node claim rows (`rooflab model --mpi-sweep RUN`,
# roofline/mpi_model.cpp).
#
#   scripts/mpi_sweep.sh --run DIR [--build DIR] [--size MxN] [--dtype f64|f32] [--iters K]
#                        [--max-np P] [--rpn "1 2 4"] [--chunks C] [--noise X] [--quiet-wait S] [--quick|--smoke]
#                        [--claim-reps N] [--claims-only] [--collect-only]
#   --claim-reps N: the one-node claim's runs again N times, interleaved (ring, ring with the typical
#   kernel, coffee with R = P, per P), so the pairs compared were measured side by side (default 3;
#   0: none); --claims-only: only those (after a sweep); --collect-only: only rebuild RUN/mpi_sweep.json.
#
# The calibrations are RUN/mpi/mpi_pingpong.json and RUN/mpi/mpi_timeslice.json.
# Ranks beyond the CPU count share cores: on a 2-core machine P > 2 measures oversubscription
# (MPICH's ranks busy-poll, so each message round waits for a scheduler slice), and the runs say
# so ("oversubscribed"). With RUN/machine.json present, the calibrations become its "mpi" and
# "mpi_timeslice" sections.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cmdline="scripts/mpi_sweep.sh $*"
run="" build="$here/build/release" size=1024x8192 dtype=f64 iters=10 maxnp=8 rpns="1 2 4" chunks=4 noise=0.15 quiet_wait=30 collect=0
claim_reps=3 claims_only=0
usage() { sed -n '\|^#   scripts/mpi_sweep.sh --run|,/--collect-only: only/p' "$0" | sed 's/^# \{0,2\}//' >&2; exit 2; }
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
    --claim-reps) claim_reps=$2; shift 2 ;;
    --claims-only) claims_only=1; shift ;;
    --quick) size=256x2048 iters=5 maxnp=4 rpns="1 2" claim_reps=1; shift ;;
    # smoke (run_all.sh --profile smoke): every design once on 1 and 2 ranks, one 2-rank node
    # (COFFEE's ablations included), no claim repetitions: seconds, proves the pipeline.
    --smoke) size=128x1024 iters=3 maxnp=2 rpns="2" claim_reps=0 quiet_wait=5; shift ;;
    -h|--help) usage ;;
    *) echo "mpi_sweep.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[[ -n $run ]] || { echo "mpi_sweep.sh: --run DIR is required" >&2; usage; }
[[ $maxnp =~ ^[1-9][0-9]*$ ]] || { echo "mpi_sweep.sh: --max-np takes a positive integer, got '$maxnp'" >&2; exit 2; }
[[ $claim_reps =~ ^[0-9]+$ ]] || { echo "mpi_sweep.sh: --claim-reps takes a count, got '$claim_reps'" >&2; exit 2; }
bin="$build/rooflab_mpi" rooflab="$build/rooflab"
if [[ ! -x $bin ]]; then
  echo "mpi_sweep.sh: $bin not found: build it (cmake --build $build --target rooflab_mpi; needs mpich libmpich-dev)" >&2
  exit 1
fi
if [[ ! -x $rooflab ]]; then
  echo "mpi_sweep.sh: $rooflab not found: build it (cmake --build $build --target rooflab)" >&2
  exit 1
fi
mpiexec=${ROOFLAB_MPIEXEC:-mpiexec}
py=${ROOFLAB_PYTHON:-$here/.venv/bin/python}
[[ -x $py ]] || py=python3
lock=/tmp/rooflab-timing.lock
cpus=$(nproc)
# Ranks 0 and 1 on one CPU: the ping-pong times the scheduler's slices (the same ~4 ms at every
# message size), a bandwidth the model cannot take.
if ((cpus < 2 && !collect)); then
  echo "mpi_sweep.sh: 1 CPU (nproc: this process's affinity mask): the 2-rank ping-pong calibration and every run of 2 or more ranks would time ranks taking turns on it; run with at least 2 CPUs" >&2
  exit 1
fi
mkdir -p "$run/mpi"
out="$run/mpi"

# One timed run: ID NP ARGS... -> $out/ID.json (rooflab_mpi --out $out/.ID.d writes
# sinkhorn_mpi.json there; under the machine-wide timing lock), its
# arguments in ID.args and the 1-minute load when it started in ID.load. A run that fails
# leaves ID.failed (its exit status and last error lines) instead, and the sweep goes on:
# mpi_sweep.json lists it under "failed_runs" and the script exits 1 at the end.
runone() {
  local id=$1 np=$2 rc=0; shift 2
  printf '%s\n' "$np $*" >"$out/$id.args"
  rm -rf "$out/$id.failed" "$out/.$id.d"
  flock "$lock" sh -c 'cut -d" " -f1 /proc/loadavg >"$0"; exec "$@"' "$out/$id.load.new" \
    "$mpiexec" -n "$np" "$bin" "$@" --out "$out/.$id.d" >/dev/null 2>"$out/$id.err" || rc=$?
  cat "$out/$id.err" >&2
  if ((rc == 0)) && [[ -s $out/.$id.d/sinkhorn_mpi.json ]]; then
    mv "$out/.$id.d/sinkhorn_mpi.json" "$out/$id.json"
    mv "$out/$id.load.new" "$out/$id.load"
    rm -rf "$out/$id.err" "$out/.$id.d"
    return 0
  fi
  { echo "exit $rc: $*"; grep -v '^[[:space:]]*$' "$out/$id.err" | tail -n 3; } >"$out/$id.failed"
  rm -rf "$out/.$id.d" "$out/$id.load.new" "$out/$id.err" "$out/$id.json" "$out/$id.load"
  echo "mpi_sweep: run $id failed (exit $rc); the sweep goes on (see $out/$id.failed)" >&2
  return 1
}

common=(--size "$size" --dtype "$dtype" --iters "$iters")
if ((!collect && !claims_only)); then
rm -f "$out"/*.failed
echo "mpi_sweep: $cpus CPUs; P > $cpus is oversubscribed (measures the scheduler, not the design)" >&2
echo "mpi_sweep: calibrating (ping-pong ranks 0-1, gamma, MPI_Allreduce over 2 ranks)" >&2
cal=(--pingpong --out "$out")
[[ -f $run/machine.json ]] && cal+=(--machine "$run/machine.json")
flock "$lock" "$mpiexec" -n 2 "$bin" "${cal[@]}" >/dev/null
rm -f "$out/mpi_timeslice.json"
if ((maxnp > cpus)); then
  echo "mpi_sweep: calibrating core sharing (--timeslice, $((2 * cpus)) ranks)" >&2
  cal=(--timeslice --out "$out")
  [[ -f $run/machine.json ]] && cal+=(--machine "$run/machine.json")
  flock "$lock" "$mpiexec" -n $((2 * cpus)) "$bin" "${cal[@]}" >/dev/null
fi
[[ -f $run/machine.json ]] || echo "mpi_sweep: no $run/machine.json: the model stays in $out/mpi_pingpong.json only" >&2
model=(--model "$out/mpi_pingpong.json")

n=0
for ((P = 1; P <= maxnp; P++)); do
  echo "mpi_sweep: P = $P" >&2
  for d in mpich ring; do
    runone "${d}_p${P}" "$P" --design "$d" "${common[@]}" "${model[@]}" || true
    runone "${d}_p${P}_comm" "$P" --design "$d" "${common[@]}" "${model[@]}" --comm-only || true
    n=$((n + 2))
  done
  # The paper's raw MPICH-Ring: ring with the typical (unoptimized) kernel.
  runone "ring_p${P}_typical" "$P" --design ring --variant typical "${common[@]}" "${model[@]}" || true
  n=$((n + 1))
  # COFFEE on one emulated node (R = P), unless the R loop below has it.
  if ((P > 1)) && [[ " $rpns " != *" $P "* ]]; then
    runone "coffee_p${P}_r${P}" "$P" --design coffee --ranks-per-node "$P" --chunks "$chunks" "${common[@]}" "${model[@]}" || true
    runone "coffee_p${P}_r${P}_comm" "$P" --design coffee --ranks-per-node "$P" --chunks "$chunks" "${common[@]}" \
      "${model[@]}" --comm-only || true
    n=$((n + 2))
  fi
  # Oversubscribed: the same designs with ranks that yield their core while they wait.
  if ((P > cpus)); then
    for d in mpich ring "coffee --ranks-per-node $P --chunks $chunks"; do
      tag=${d%% *}
      # shellcheck disable=SC2086
      runone "${tag}_p${P}_yield" "$P" --design $d --wait yield "${common[@]}" "${model[@]}" || true
      # shellcheck disable=SC2086
      runone "${tag}_p${P}_yield_comm" "$P" --design $d --wait yield "${common[@]}" "${model[@]}" --comm-only || true
      n=$((n + 2))
    done
  fi
  for R in $rpns; do
    ((R <= P && P % R == 0)) || continue
    for d in salar coffee; do
      runone "${d}_p${P}_r${R}" "$P" --design "$d" --ranks-per-node "$R" --chunks "$chunks" "${common[@]}" "${model[@]}" || true
      runone "${d}_p${P}_r${R}_comm" "$P" --design "$d" --ranks-per-node "$R" --chunks "$chunks" "${common[@]}" \
        "${model[@]}" --comm-only || true
      n=$((n + 2))
    done
    # COFFEE ablations (Fig. 16) on multi-rank nodes; balanced + overlap is the run above.
    if ((R > 1)); then
      for v in "--node-reduce mpi --no-overlap" "--no-overlap" "--node-reduce mpi"; do
        tag=$(tr -d ' -' <<<"$v")
        # shellcheck disable=SC2086
        runone "coffee_p${P}_r${R}_${tag}" "$P" --design coffee --ranks-per-node "$R" --chunks "$chunks" \
          "${common[@]}" "${model[@]}" $v || true
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
  if ! runone "$id" "${args[@]}"; then  # keep the first measurement
    mv "$out/$id.prev.json" "$out/$id.json"; mv "$out/$id.prev.load" "$out/$id.load"; rm -f "$out/$id.failed"
    continue
  fi
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

# The one-node claim's runs side by side (see --claim-reps): the machine's speed drifts between
# minutes (the same P = 2 run can differ by 30%), so pairs measured apart compare the drift.
if ((!collect && claim_reps > 0)); then
  [[ -f $out/mpi_pingpong.json ]] || { echo "mpi_sweep.sh: --claims-only needs a sweep in $run first" >&2; exit 1; }
  echo "mpi_sweep: one-node claim runs, $claim_reps repetitions" >&2
  rm -f "$out"/claim_*
  for ((k = 1; k <= claim_reps; k++)); do
    for ((P = 1; P <= maxnp; P++)); do
      runone "claim_ring_p${P}_rep${k}" "$P" --design ring "${common[@]}" || true
      runone "claim_ringtypical_p${P}_rep${k}" "$P" --design ring --variant typical "${common[@]}" || true
      if ((P > 1)); then
        runone "claim_coffee_p${P}_rep${k}" "$P" --design coffee --ranks-per-node "$P" --chunks "$chunks" "${common[@]}" || true
      fi
    done
  done
fi

# Everything in one file for the figures (exit 5: written, but runs failed), then the model's
# table and the claim rows added to it by `rooflab model --mpi-sweep`.
collect_rc=0
"$py" - "$run" "$out" "$cpus" "$size" "$dtype" "$iters" "$chunks" "$noise" "$cmdline" <<'EOF' || collect_rc=$?
import datetime, json, os, pathlib, sys
run, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
cpus, size, dtype, iters, chunks, noise = int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
runs, claim_runs = [], []
for f in sorted(out.glob("*.json")):
    d = json.loads(f.read_text())
    if d.get("schema") == "rooflab.sinkhorn_mpi/1":
        d["id"] = f.stem
        load = out / (f.stem + ".load")
        d["load1"] = float(load.read_text()) if load.exists() else None
        d.pop("timing", None)  # the same text in every run; docs/json.md has it
        (claim_runs if f.stem.startswith("claim_") else runs).append(d)
failed_runs = []
for f in sorted(out.glob("*.failed")):
    lines = f.read_text().splitlines() or ["exit ?"]
    failed_runs.append({"id": f.stem, "args": lines[0].split(": ", 1)[-1], "message": " | ".join(lines[:1] + lines[1:])})
doc = {"schema": "rooflab.mpi_sweep/1",
       "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "command": sys.argv[9],
       "cpus": cpus, "size": size, "dtype": dtype, "iterations": iters, "chunks": chunks, "noise_threshold": noise,
       "note": f"{cpus} CPUs: runs with more ranks are oversubscribed and measure the scheduler; "
               "load1 is the 1-minute load when a run started (other work on the machine)",
       "pingpong": json.loads((out / "mpi_pingpong.json").read_text()),
       "timeslice": json.loads((out / "mpi_timeslice.json").read_text()) if (out / "mpi_timeslice.json").exists() else None,
       "runs": runs, "claim_runs": claim_runs, "failed_runs": failed_runs}
tmp = run / "mpi_sweep.json.tmp"
tmp.write_text(json.dumps(doc, indent=1))
os.replace(tmp, run / "mpi_sweep.json")
if failed_runs:
    print(f"mpi_sweep: {len(failed_runs)} run(s) failed: {', '.join(r['id'] for r in failed_runs)} "
          f"(mpi_sweep.json lists them under failed_runs)", file=sys.stderr)
    sys.exit(5)
EOF
((collect_rc == 0 || collect_rc == 5)) || exit "$collect_rc"
# The model needs runs a failure may have taken (the P = 1 ones): then it keeps the runs and
# says why in model_error. Its stdout (a per-regime summary, then the file) is the sweep's.
"$rooflab" model --mpi-sweep "$run"
((collect_rc == 0)) || exit 1
