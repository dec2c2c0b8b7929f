#!/usr/bin/env bash
# rooflab end to end: dependencies, build, machine characterization, every registered
# benchmark of a profile, the roofline model, cache-miss counters, plots and the HTML report.
set -uo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)

usage() {
  cat <<'TXT'
usage: ./run_all.sh [options]

  (no option)          the quick profile end to end; prints the report path at the end
  --profile P          quick (default; minutes) or paper (the papers' sizes; hours)
  --filter REGEX       only benchmarks whose name matches (e.g. 'sinkhorn/c2r/.*')
  --out DIR            run directory (default results/<host>/<timestamp>)
  --skip-deps          do not check/install Debian packages and the Python venv
  --machine FILE       reuse a machine.json instead of characterizing again
  --test               build and run the whole test suite (release + ASan/UBSan unit tests), then
                       the performance gate (scripts/perf_gate.sh)
  -h, --help           this text

Steps: deps, build (cmake --preset release), characterize, bench, model, POT comparison,
counters, GEMM summary / knobs, RTAMM, Sinkhorn on MPI, GPU (with a device), claims ledger,
report.
Benchmark names: <family>/<variant>[/<isa>]/<dtype>/<dims>[/<key>:<value>]*/threads:<T>
TXT
}

profile=quick; filter=""; out=""; skip_deps=0; machine=""; mode=run
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs a value}; shift 2 ;;
    --profile=*) profile=${1#*=}; shift ;;
    --filter) filter=${2?--filter needs a value}; shift 2 ;;
    --filter=*) filter=${1#*=}; shift ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --machine) machine=${2:?--machine needs a value}; shift 2 ;;
    --skip-deps) skip_deps=1; shift ;;
    --test) mode=test; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_all.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$profile" in quick|paper) ;; *) echo "run_all.sh: unknown profile '$profile' (quick or paper)" >&2; exit 2 ;; esac

T0=$(date +%s)
fmt() { local s=$1; printf '%dm%02ds' $((s / 60)) $((s % 60)); }
step_i=0
step() {  # step "<what>"  — progress with elapsed time
  step_i=$((step_i + 1))
  echo "==> [step $step_i/$NSTEPS] $1  (elapsed $(fmt $(( $(date +%s) - T0 ))))"
}
die() { echo "run_all.sh: $*" >&2; exit 1; }

deps() {
  [ "$skip_deps" = 1 ] && { echo "(skipping dependency checks)"; return 0; }
  scripts/install_deps.sh "$@" || die "dependencies missing (see above)"
}
build() {  # build <preset> [target...]
  mkdir -p build; cmake --preset "$1" >"build/$1-configure.log" 2>&1 || { tail -40 "build/$1-configure.log"; die "configure ($1) failed; full log: build/$1-configure.log"; }
  grep -A20 "rooflab dependencies" "build/$1-configure.log" | sed -n '1,16p'
  local preset=$1; shift
  cmake --build --preset "$preset" ${1:+--target "$@"} 2>&1 | grep -E 'error|warning: unused|Error' | head -40
  [ "${PIPESTATUS[0]}" = 0 ] || die "build ($preset) failed"
}

if [ "$mode" = test ]; then
  NSTEPS=6
  step "dependencies"; deps --with-test-tools
  step "build (release)"; build release
  step "tests (release: unit + integration)"
  ctest --preset release || die "release tests failed"
  step "build (asan: AddressSanitizer + UBSan)"; build asan
  step "unit tests under ASan+UBSan"
  ctest --preset asan || die "ASan/UBSan unit tests failed"
  step "performance gate (scripts/perf_gate.sh vs results/baselines/gate)"
  scripts/perf_gate.sh; gate_rc=$?
  [ $gate_rc = 0 ] || die "performance gate failed (exit $gate_rc; see the table above)"
  echo "all tests passed in $(fmt $(( $(date +%s) - T0 )))"
  exit 0
fi

NSTEPS=13
[ -n "$out" ] || out="results/$(hostname)/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "output directory '$out' cannot be created or is not writable"
out=$(cd "$out" && pwd)
RL="$ROOT/build/release/harness/cli/rooflab"

step "dependencies"; deps
step "build (release)"; build release rooflab
# The MPI launcher is a separate binary, configured (kernels/sinkhorn/mpi) only when MPI was found.
if [ -d build/release/kernels/sinkhorn/mpi ]; then build release rooflab_mpi; fi
"$RL" list --profile "$profile" ${filter:+--filter "$filter"} >/dev/null || die "no benchmark matches filter '$filter'"

step "characterize the machine -> $out/machine.json"
if [ -n "$machine" ]; then
  cp "$machine" "$out/machine.json" || die "cannot read $machine"
else
  "$RL" characterize --profile "$profile" --out "$out" >/dev/null || die "characterize failed"
fi

step "benchmarks ($profile profile) -> $out/bench.json"
"$RL" bench --profile "$profile" ${filter:+--filter "$filter"} --out "$out" --machine "$out/machine.json"
bench_rc=$?
[ $bench_rc = 0 ] || [ $bench_rc = 3 ] || die "bench failed (exit $bench_rc)"

step "roofline model -> $out/model.json"
"$RL" model --run "$out" || die "model failed"

step "POT comparison -> $out/pot_compare.json"
# POT and rooflab solve the same Sinkhorn problems in one run (MAP-UOT Fig. 9).
PY="$ROOT/.venv/bin/python"; [ -x "$PY" ] || PY=python3
if [ -n "$filter" ] && ! "$RL" list --profile "$profile" --filter "^(?=.*(${filter}))sinkhorn/" >/dev/null 2>&1; then
  echo "(no Sinkhorn benchmark selected; skipping)"
elif ! "$PY" -c 'import ot' 2>/dev/null; then
  echo "(skipped: POT is not installed; apt-get install python3-pot)"
else
  if [ "$profile" = quick ]; then psizes=1024,4096; else psizes=1024,2048,4096,8192; fi
  "$PY" scripts/pot_compare.py --rooflab "$RL sinkhorn" --sizes "$psizes" --iters 10 --reps 2 \
    --out "$out/pot_compare.json" || echo "warning: POT comparison failed; the report says so"
fi

step "cache-miss counters -> $out/counters.json"
# Simulated counters are ~50x slower than native runs (~30 s per 4096^2 case): both profiles
# count the Sinkhorn column passes at 4096^2 (COFFEE Fig. 11, MAP-UOT's 4096^2 L1 claim),
# quick once per case, paper twice.
cfilter='sinkhorn/.*/f64/4096x4096/.*part:col/threads:1'; runs=1
[ "$profile" = paper ] && runs=2
[ -n "$filter" ] && cfilter="^(?=.*(${filter}))${cfilter}"   # both must match
if ! "$RL" list --profile "$profile" --filter "$cfilter" >/dev/null 2>&1; then
  echo "(no selected benchmark is in the counters set '$cfilter'; skipping)"
else "$RL" counters --profile "$profile" --filter "$cfilter" --runs $runs --backend all --machine "$out/machine.json" --out "$out" \
  || echo "warning: counters step failed; the report shows what is available"
fi

step "GEMM: WHM summary (-> gemm_summary.json) and knob selection (-> gemm_knobs.json)"
# Quick: the summary of the GEMM rows just timed. Paper: also the simulated L2 misses of SFC-CA
# k_layers 1/2/4 vs the best baseline (~8 min) and the knob evaluation over 100 random shapes
# against the committed nearest-neighbour set (results/gemm/knobs_nn.json, [256,2048]^3, ~10 min).
if ! "$RL" list --profile "$profile" --filter "^(?=.*(${filter:-.}))gemm/" >/dev/null 2>&1; then
  echo "(no GEMM benchmark selected; skipping)"
else
  # the tight (per-BRGEMM model) roofline per timed shape: no timing, read by gemm_data.py
  "$RL" gemm-knobs roofline --run "$out" >/dev/null || echo "warning: GEMM tight roofline failed"
  "$PY" plots/gemm_data.py --run "$out" >/dev/null || echo "warning: GEMM summary failed"
  if [ "$profile" = paper ]; then
    scripts/gemm_paper.sh --out "$out" --rooflab "$RL" --skip-bench || echo "warning: GEMM L2 counters failed"
    "$RL" gemm-knobs evaluate --shapes 100 --min 256 --max 2048 --seed 1 --threads "$(nproc)" \
      --machine "$out/machine.json" --out "$out" || echo "warning: GEMM knob evaluation failed"
  fi
fi

step "RTAMM: unit costs (machine.json) and adaptive vs static vs oracle -> $out/rtamm.json"
if [ -n "$filter" ] && ! "$RL" list --profile "$profile" --filter "^(?=.*(${filter}))rtamm/" >/dev/null 2>&1; then
  echo "(no RTAMM benchmark selected; skipping)"
else
  if [ "$profile" = quick ]; then rp=quick; else rp=full; fi
  # calibrate: per-term scales fitted on training shapes disjoint from the evaluation set
  "$RL" rtamm units --machine "$out/machine.json" --threads "$(nproc)" >/dev/null \
    && "$RL" rtamm calibrate --machine "$out/machine.json" --threads "$(nproc)" \
         --shapes "$([ "$rp" = quick ] && echo 24 || echo 150)" --out "$out/rtamm_training.json" >/dev/null \
    && "$RL" rtamm evaluate --machine "$out/machine.json" --profile "$rp" --out "$out" \
    || echo "warning: RTAMM evaluation failed; the report says so"
fi

step "Sinkhorn on MPI: alpha/beta calibration (machine.json) and the design sweep -> $out/mpi_sweep.json"
if [ ! -x "$ROOT/build/release/kernels/sinkhorn/mpi/rooflab_mpi" ]; then
  echo "(skipped: rooflab_mpi not built; install mpich libmpich-dev)"
elif [ -n "$filter" ] && ! echo "sinkhorn_mpi" | grep -qE "$filter" 2>/dev/null; then
  echo "(filter does not select sinkhorn_mpi; skipping)"
else
  sweep_opt=--quick; [ "$profile" = paper ] && sweep_opt=""
  scripts/mpi_sweep.sh --run "$out" --build "$ROOT/build/release" $sweep_opt >/dev/null \
    || echo "warning: MPI sweep failed; the report says so"
fi

step "GPU ceilings and the MAP-UOT tile sweep (only with a CUDA device)"
"$RL" gpu-characterize --out "$out" --optional
if grep -q '"gpu"' "$out/machine.json" 2>/dev/null; then  # a device was found and measured
  gq=""; [ "$profile" = quick ] && gq=--quick
  scripts/gpu_sweep.sh --rooflab "$RL" --out "$out/gpu-sweep" $gq
  gpu_rc=$?
  [ $gpu_rc = 0 ] || [ $gpu_rc = 77 ] || echo "warning: GPU sweep failed (exit $gpu_rc)"
fi

step "claims ledger -> $out/claims.md"
"$RL" claims --run "$out" >/dev/null && echo "$(tail -n 1 "$out/claims.md")" \
  || echo "warning: claims ledger failed; the report says what is missing"

step "plots and report"
"$RL" report --run "$out" || die "report failed"
ln -sfn "$out" "$ROOT/results/latest" 2>/dev/null || true
echo "total $(fmt $(( $(date +%s) - T0 )))"
[ $bench_rc = 0 ] || echo "NOTE: some variants failed verification (see the report); exit 3" >&2
echo "report: $out/report/index.html"
exit $bench_rc
