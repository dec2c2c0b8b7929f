#!/usr/bin/env bash
# rooflab vs the installed peers on this CPU, one short timing run, rendered into the committed
# table results/peers/<cpu-class>.md (and its index results/peers/README.md) by
# plots/peer_table.py. The cases are fixed (issue 17's work items): GEMM f32 / f64 at 1024^3
# and 4096^3 (rooflab blocked and sfc_ca at each vector ISA of the CPU, OpenBLAS, BLIS, oneDNN,
# sfc_ca_libxsmm), Floyd-Warshall regblock at N = 4096 in tiles of 64 and 128 (no installed peer;
# the recursive schedule at 1 thread too, for its scaling), the FMA and add+min peaks of each ISA timed among them
# (the `peak` family), Sinkhorn vs POT (scripts/pot_compare.py; blocked vs c2r from the same solves). The run directory keeps machine.json, cpu.json, bench.json,
# pot_compare.json and peer_run.json (what ran, each step's status); only the Markdown is committed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROG=scripts/peer_table.sh

usage() {
  cat <<'TXT'
usage: scripts/peer_table.sh [options]

  --out DIR          run directory (default results/<host>/peers-<UTC timestamp>)
  --class NAME       CPU class name of the table (default: derived from cpu.json + machine.json,
                     e.g. amd-zen5-avx512)
  --rooflab PATH     rooflab binary (default build/release/rooflab)
  --machine FILE     copy this machine.json instead of `rooflab characterize --profile quick`
  --threads T        threads of every case (default 2)
  --isas LIST        rooflab ISAs to time, comma separated (default: the CPU's vector ISAs)
  --pot-size N       Sinkhorn / POT problem size N x N (default 4096)
  --reps R           repetitions per case (default 3; the table shows the median)
  --no-interleave    time each case's repetitions back to back; by default they run in random
                     order among all cases' (Google Benchmark's random interleaving), so every
                     median spans the whole run and rooflab and each peer meet the same host
                     states; the table shows each case's repetitions' range
  --rounds N         time the whole selection N times, every other round reversed, each case
                     keeping its best round (rooflab bench --rounds; 1..9, default 1); the table
                     shows each case's range over its rounds
  --min-time S       seconds per repetition (default 0.1)
  --tables DIR       where <class>.md and README.md go (default results/peers)
  --render-only      do not time: render DIR (--out) again
  --no-lock          do not take the timing lock (when the caller holds it already)
  -h, --help         this text

Takes the timing lock (scripts/cpu_lock.sh time) for the whole run unless --no-lock or a caller
holds it (scripts/cpu_lock.sh time scripts/peer_table.sh ... works too), and runs
with OPENBLAS_CORETYPE and BLIS_ARCH_TYPE unset so each library picks its own best kernel.
TXT
}

die() { echo "$PROG: $*" >&2; exit 1; }
bad() { echo "$PROG: $* (see --help)" >&2; exit 2; }
orig_args=("$@")
out=""; cls=""; RL="$ROOT/build/release/rooflab"; machine=""; threads=2; isas=""; pot_size=4096
reps=3; rounds=1; interleave=1; min_time=0.1; tables="$ROOT/results/peers"; render_only=0; lock=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--class|--rooflab|--machine|--threads|--isas|--pot-size|--reps|--rounds|--min-time|--tables)
      [ $# -ge 2 ] || bad "$1 needs a value"
      case "$1" in
        --out) out=$2 ;; --class) cls=$2 ;; --rooflab) RL=$2 ;; --machine) machine=$2 ;;
        --threads) threads=$2 ;; --isas) isas=$2 ;; --pot-size) pot_size=$2 ;; --reps) reps=$2 ;; --rounds) rounds=$2 ;;
        --min-time) min_time=$2 ;; --tables) tables=$2 ;;
      esac
      shift 2 ;;
    --render-only) render_only=1; shift ;;
    --no-interleave) interleave=0; shift ;;
    --no-lock) lock=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown option '$1'" ;;
  esac
done
posint() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || bad "$1 must be a positive integer, got '$2'"; }
posint --threads "$threads"; posint --pot-size "$pot_size"; posint --reps "$reps"
[[ "$rounds" =~ ^[1-9]$ ]] || bad "--rounds must be 1..9, got '$rounds'"
[[ "$min_time" =~ ^[0-9]*\.?[0-9]+$ ]] || bad "--min-time must be a number of seconds, got '$min_time'"
[ -z "$cls" ] || [[ "$cls" =~ ^[a-z0-9][a-z0-9._-]*$ ]] || bad "--class must be lower-case letters, digits, '.', '_', '-', got '$cls'"
[ -z "$isas" ] || [[ "$isas" =~ ^[a-z0-9]+(,[a-z0-9]+)*$ ]] || bad "--isas must be a comma-separated list of ISA names, got '$isas'"
[ "$render_only" = 0 ] || [ -n "$out" ] || bad "--render-only needs --out DIR"
PY="$ROOT/.venv/bin/python"; [ -x "$PY" ] || PY=python3

render() {
  local a=("$out" --tables "$tables")
  [ -n "$cls" ] && a+=(--class "$cls")
  "$PY" "$ROOT/plots/peer_table.py" "${a[@]}"
}
if [ "$render_only" = 1 ]; then
  [ -f "$out/peer_run.json" ] || die "$out/peer_run.json not found: not a run of $PROG"
  render; exit $?
fi

# The whole run holds the timing lock once, so no build or other timing lands between its cases.
# A caller that already holds it (`scripts/cpu_lock.sh time scripts/peer_table.sh`) is an
# ancestor process running flock on it: taking it again would wait for ourselves forever.
lock_held_above() {
  local p=$PPID
  while [ -n "$p" ] && [ "$p" -gt 1 ]; do
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -Eq '^flock (-x )?/tmp/rooflab-timing\.lock ' && return 0
    p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
  done
  return 1
}
if [ "$lock" = 1 ] && [ -z "${ROOFLAB_PEER_TABLE_LOCKED:-}" ] && ! lock_held_above; then
  ROOFLAB_PEER_TABLE_LOCKED=1 exec "$ROOT/scripts/cpu_lock.sh" time "$0" "${orig_args[@]}"
fi
# Each library's own choice of kernel is what the table compares against (rooflab respects a
# user's setting of these, so an inherited one would pin a library to a lesser kernel).
unset OPENBLAS_CORETYPE BLIS_ARCH_TYPE

[ -x "$RL" ] || die "$RL is not built (cmake --build --preset release --target rooflab, or --rooflab PATH)"
[ -n "$out" ] || out="$ROOT/results/$(hostname)/peers-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "output directory '$out' cannot be created or is not writable"
out=$(cd "$out" && pwd)
rm -f "$out/peer_run.json" "$out/bench.json" "$out/pot_compare.json" "$out/machine.isa_choice.json"
T0=$(date +%s)
steps_file="$out/.peer_steps.tsv"; : > "$steps_file"
step_done() {  # id status exit_code message (one line)
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(echo "$4" | tr '\t\n' '  ')" >> "$steps_file"
}
last_line() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1; }

echo "==> cpu facts -> $out/cpu.json"
"$PY" - "$out/cpu.json" <<'PYEOF' || die "cannot read /proc/cpuinfo"
import json, os, sys
facts = {}
with open("/proc/cpuinfo") as f:
    for line in f:
        if not line.strip():
            break  # the first CPU is enough: all of a guest's vCPUs report the same
        k, _, v = line.partition(":")
        facts[k.strip()] = v.strip()
doc = {"schema": "rooflab.cpuid/1", "source": "/proc/cpuinfo", "vendor": facts.get("vendor_id"),
       "family": int(facts["cpu family"]) if facts.get("cpu family", "").isdigit() else None,
       "model": int(facts["model"]) if facts.get("model", "").isdigit() else None,
       "model_name": facts.get("model name")}
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f, indent=1)
os.replace(tmp, sys.argv[1])
PYEOF

echo "==> machine -> $out/machine.json"
if [ -n "$machine" ]; then
  cp "$machine" "$out/machine.json" || die "cannot read $machine"
  step_done machine ok 0 "copied from $machine"
elif "$RL" characterize --profile quick --threads "$threads" --no-likwid --out "$out" > "$out/characterize.log" 2>&1; then
  step_done machine ok 0 "rooflab characterize --profile quick --threads $threads --no-likwid"
else
  rc=$?; die "characterize failed (exit $rc): $(last_line "$out/characterize.log")"
fi
if [ -z "$isas" ]; then
  isas=$("$PY" -c 'import json, sys
print(",".join(i for i in json.load(open(sys.argv[1]))["host"]["isa"] if i != "scalar"))' "$out/machine.json") \
    || die "$out/machine.json has no host.isa"
fi

onednn_dtypes=$("$RL" list --json --profile smoke --filter '^gemm/onednn/' 2>/dev/null | "$PY" -c 'import json, sys
fam = {f["name"]: f for f in json.load(sys.stdin)["families"]}
print(",".join(next((v["dtypes"] for v in fam["gemm"]["variants"] if v["name"] == "onednn"), [])))') \
  || die "$RL list --json gave no gemm family"
cases=()
for dt in f32 f64; do
  for n in 1024 4096; do
    s="${n}x${n}x${n}"
    for isa in ${isas//,/ }; do
      cases+=("gemm/blocked/$isa/$dt/$s/threads:$threads" "gemm/sfc_ca/$isa/$dt/$s/k_layers:1/kbf:2/threads:$threads")
    done
    cases+=("gemm/openblas/$dt/$s/threads:$threads" "gemm/blis/$dt/$s/threads:$threads"
            "gemm/sfc_ca_libxsmm/$dt/$s/k_layers:1/kbf:2/threads:$threads")
    # oneDNN's f64 row is timed when the registry has it (its matmul registers f32 only today).
    [[ ",$onednn_dtypes," == *",$dt,"* ]] && cases+=("gemm/onednn/$dt/$s/threads:$threads")
  done
done
# Two tile sizes: the paper's 64 and 128 (the best of them is the table's "rooflab best").
for isa in ${isas//,/ }; do
  for bs in 64 128; do
    cases+=("floyd_warshall/regblock/$isa/f32/4096x4096/sched:rec/layout:bdl/bs:$bs/task:256/threads:$threads"
            "floyd_warshall/regblock/$isa/f32/4096x4096/sched:blocked/layout:bdl/bs:$bs/threads:$threads")
    # the recursive schedule on one thread too: the table gives its speed-up to $threads
    [ "$threads" -gt 1 ] && cases+=("floyd_warshall/regblock/$isa/f32/4096x4096/sched:rec/layout:bdl/bs:$bs/task:256/threads:1")
  done
done
# characterize's loops of the ceilings above, timed among them (docs/families/peak.md): each
# kernel's share of the peak of the same run, whatever the host's speed at characterize's time
peak_iters=1048576
for isa in ${isas//,/ }; do
  cases+=("peak/fma/$isa/f32/$peak_iters/threads:$threads" "peak/fma/$isa/f64/$peak_iters/threads:$threads"
          "peak/addmin/$isa/f32/$peak_iters/threads:$threads")
  [ "$threads" -gt 1 ] && cases+=("peak/addmin/$isa/f32/$peak_iters/threads:1")
done
case_args=(); for c in "${cases[@]}"; do case_args+=(--case "$c"); done

echo "==> bench: ${#cases[@]} cases -> $out/bench.json"
# an impossible filter leaves exactly the --case list selected
"$RL" bench --profile smoke --filter '^$' "${case_args[@]}" --out "$out" --machine "$out/machine.json" \
  --rounds "$rounds" "--benchmark_repetitions=$reps" "--benchmark_min_time=$min_time" \
  "--benchmark_enable_random_interleaving=$([ "$interleave" = 1 ] && echo true || echo false)" > "$out/bench.log" 2>&1
rc=$?
case $rc in
  0) step_done bench ok 0 "" ;;
  3) step_done bench failed 3 "some case failed verification (bench.json names it)" ;;
  *) step_done bench failed "$rc" "rooflab bench exit $rc: $(last_line "$out/bench.log")" ;;
esac

# The fused Sinkhorn solvers run what the ISA calibration chose here (ISA and prefetch target),
# as `rooflab sinkhorn --machine` does for a user: measured, not the widest.
echo "==> Sinkhorn default ISA and prefetch target -> $out/machine.isa_choice.json"
if "$RL" isa-calibrate --machine "$out/machine.json" --filter '^sinkhorn/(mapuot|fused_uv)/f64/' \
     > "$out/isa_calibrate.log" 2>&1; then step_done isa ok 0 ""
else rc=$?; step_done isa failed "$rc" "rooflab isa-calibrate exit $rc: $(last_line "$out/isa_calibrate.log")"; fi
echo "==> Sinkhorn vs POT ($pot_size x $pot_size, $threads threads) -> $out/pot_compare.json"
pot_cmd=("$PY" "$ROOT/scripts/pot_compare.py" --rooflab "$(printf '%q ' "$RL" sinkhorn --machine "$out/machine.json")"
         --sizes "$pot_size" --threads "$threads" --out "$out/pot_compare.json")
if "${pot_cmd[@]}" > "$out/pot_compare.log" 2>&1; then step_done pot ok 0 ""
else rc=$?; step_done pot failed "$rc" "pot_compare.py exit $rc: $(last_line "$out/pot_compare.log")"; fi

commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD -- kernels harness apps roofline microbench 2>/dev/null || commit="$commit+dirty"
"$PY" - "$out" "$steps_file" "$commit" "$PROG ${orig_args[*]}" "$lock" "$RL" "$(( $(date +%s) - T0 ))" "$interleave" \
  "${cases[@]}" <<'PYEOF' || die "cannot write $out/peer_run.json"
import json, os, sys, time
out, steps_file, commit, command, lock, rl, wall, interleave = sys.argv[1:9]
steps = []
for line in open(steps_file):
    sid, status, rc, msg = line.rstrip("\n").split("\t", 3)
    steps.append({"id": sid, "status": status, "exit_code": int(rc), "message": msg})
doc = {"schema": "rooflab.peer_run/1", "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": commit, "command": command,
       "locked": lock == "1", "env_unset": ["OPENBLAS_CORETYPE", "BLIS_ARCH_TYPE"], "rooflab": rl,
       "wall_seconds": int(wall), "interleaved": interleave == "1", "cases": sys.argv[9:], "steps": steps}
tmp = os.path.join(out, "peer_run.json.tmp")
with open(tmp, "w") as f:
    json.dump(doc, f, indent=1)
os.replace(tmp, os.path.join(out, "peer_run.json"))
PYEOF
rm -f "$steps_file"
echo "==> table -> $tables"
render || die "rendering the table failed"
echo "run directory $out ($(( $(date +%s) - T0 )) s)"
