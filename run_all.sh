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
  --profile P          smoke (every family once at tiny sizes, a few minutes: proves the pipeline
                       on a new machine), quick (default; minutes) or paper (the papers' sizes; hours)
  --filter REGEX       only benchmarks whose name matches (e.g. 'sinkhorn/c2r/.*')
  --out DIR            run directory (default results/<host>/<timestamp>)
  --skip-deps          do not check/install Debian packages and the Python venv
  --machine FILE       reuse a machine.json instead of characterizing again
  --test               build and run the whole test suite (release + ASan/UBSan unit tests), then
                       the performance gate (scripts/perf_gate.sh), whose run goes into the history
                       ($ROOFLAB_HISTORY_DB, default results/history.sqlite) and its change-point check
  -h, --help           this text

Steps: deps, build (cmake --preset release), characterize, isa (default ISAs by
measurement: rooflab isa-calibrate), bench, model, POT comparison,
counters, GEMM summary / knobs, RTAMM, Sinkhorn on MPI, GPU (with a device), claims ledger,
report. A step that fails is recorded and the run goes on with every step that does not need
its output (bench runs without machine.json, without predictions; model needs bench.json; RTAMM
needs machine.json; everything after the build needs the build); the report is always written
and lists each failed or skipped step with its reason at the top. DIR/steps.json records every
step (ok / failed / skipped, reason, seconds) and DIR/logs/<step>.log its output.
Exit status: 0 every step ok (steps skipped for an absent optional part, e.g. no POT, MPI or
GPU, are fine); 1 some step failed (they are named on stderr and in the report); 2 usage;
3 every step ok but some variant failed verification (reported as failed, never timed).
Timing steps take /tmp/rooflab-timing.lock (as scripts/mpi_sweep.sh does): on a shared machine
run `scripts/cpu_lock.sh gate ./run_all.sh ...` (not `time`, which holds that lock itself).
Environment: ROOFLAB_BUILD_DIR=DIR builds and runs an already configured tree DIR instead of
the release preset (build/release); ROOFLAB_PYTHON the interpreter for plots/.
Benchmark names: <family>/<variant>[/<isa>]/<dtype>/<dims>[/<key>:<value>]*/threads:<T>
TXT
}

ARGS=("$@")
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
case "$profile" in smoke|quick|paper) ;; *) echo "run_all.sh: unknown profile '$profile' (smoke, quick or paper)" >&2; exit 2 ;; esac

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
  NSTEPS=7
  step "dependencies"; deps --with-test-tools
  step "build (release)"; build release
  step "tests (release: unit + integration)"
  ctest --preset release || die "release tests failed"
  step "build (asan: AddressSanitizer + UBSan)"; build asan
  step "unit tests under ASan+UBSan"
  ctest --preset asan || die "ASan/UBSan unit tests failed"
  step "performance gate (scripts/perf_gate.sh vs this CPU's results/baselines/gate*)"
  gate_out=build/perf-gate; rm -rf "$gate_out"
  scripts/perf_gate.sh --out "$gate_out"; gate_rc=$?
  [ $gate_rc = 0 ] || die "performance gate failed (exit $gate_rc; see the table above)"
  # The project keeps its own history the way docs/history.md tells users to (a CI workspace
  # that persists results/ builds a series run after run).
  db=${ROOFLAB_HISTORY_DB:-results/history.sqlite}
  step "history: the gate run into $db, then its change-point check"
  commit=$(git rev-parse HEAD 2>/dev/null) || commit=""
  build/release/rooflab history add "$gate_out" --db "$db" ${commit:+--commit "$commit"} || die "history add failed"
  if .venv/bin/python -c "import signal_processing_algorithms" 2>/dev/null; then
    build/release/rooflab history check --db "$db" --markdown build/history-check.md --junit build/history-check.xml
    hist_rc=$?
    [ $hist_rc = 0 ] || die "history check failed (exit $hist_rc; build/history-check.md)"
  else
    echo "history check skipped: its detector (plots/requirements-optional.txt, from PyPI) is not installed"
  fi
  echo "all tests passed in $(fmt $(( $(date +%s) - T0 )))"
  exit 0
fi

# ----------------------------------------------------------------------------- main job
# Every step is recorded in $out/steps.json (rooflab.steps/1, docs/json.md) as it ends, with its
# output in $out/logs/<id>.log. A failing step never stops the run: the steps that need its
# output are skipped with the reason, the others run, and the report is always written.
NSTEPS=14
[ -n "$out" ] || out="results/$(hostname)/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/logs" 2>/dev/null && [ -w "$out" ] || die "output directory '$out' cannot be created or is not writable"
out=$(cd "$out" && pwd)
BUILD=${ROOFLAB_BUILD_DIR:-build/release}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
RL="$BUILD/rooflab"
PY=${ROOFLAB_PYTHON:-$ROOT/.venv/bin/python}; [ -x "$PY" ] || PY=python3
LOCK=/tmp/rooflab-timing.lock   # the machine-wide timing lock (scripts/cpu_lock.sh, mpi_sweep.sh)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
COMMAND="./run_all.sh$(printf ' %q' "${ARGS[@]}")"
S_ID=(); S_TITLE=(); S_STATUS=(); S_REASON=(); S_SECS=(); S_LOG=()
declare -A STATUS=()

json_str() {  # a JSON string literal: escapes, no control characters, valid UTF-8
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/\\t}; s=${s//$'\n'/\\n}
  s=$(printf '%s' "$s" | tr -d '\000-\010\013-\037' | iconv -c -f UTF-8 -t UTF-8 2>/dev/null || printf '%s' "$s" | tr -cd '\040-\176')
  printf '"%s"' "$s"
}
write_steps() {  # write_steps [exit code]: the whole file again (atomic), after every step
  local i sep="" f="$out/.steps.json.tmp"
  {
    printf '{\n "schema": "rooflab.steps/1",\n "command": %s,\n "profile": %s,\n "filter": %s,\n' \
      "$(json_str "$COMMAND")" "$(json_str "$profile")" "$(json_str "$filter")"
    printf ' "out": %s,\n "started": "%s",\n "updated": "%s",\n "exit_code": %s,\n "steps": [' \
      "$(json_str "$out")" "$STARTED" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${1:-null}"
    for i in "${!S_ID[@]}"; do
      printf '%s\n  {"id": "%s", "title": %s, "status": "%s", "reason": %s, "elapsed_s": %s, "log": %s}' "$sep" \
        "${S_ID[$i]}" "$(json_str "${S_TITLE[$i]}")" "${S_STATUS[$i]}" "$(json_str "${S_REASON[$i]}")" \
        "${S_SECS[$i]}" "$(json_str "${S_LOG[$i]}")"
      sep=","
    done
    printf '\n ]\n}\n'
  } >"$f" && mv -f "$f" "$out/steps.json"
}

CUR_ID=""; CUR_TITLE=""; CUR_T0=0; CUR_LOG=""; CUR_MARK=0
begin() {  # begin <id> <title> [what it writes]: the progress line; the output goes to logs/<id>.log
  step "$2${3:+ -> $3}"
  CUR_ID=$1; CUR_TITLE=$2; CUR_T0=$(date +%s); CUR_LOG="logs/$1.log"; CUR_MARK=0
  : >"$out/$CUR_LOG"
}
end() {  # end ok|failed|skipped [reason]: records the step
  local status=$1 reason=${2:-}
  S_ID+=("$CUR_ID"); S_TITLE+=("$CUR_TITLE"); S_STATUS+=("$status"); S_REASON+=("$reason")
  S_SECS+=("$(( $(date +%s) - CUR_T0 ))"); S_LOG+=("$( [ -s "$out/$CUR_LOG" ] && echo "$CUR_LOG")")
  STATUS[$CUR_ID]=$status
  case $status in
    failed) echo "    FAILED: $reason (log: $out/$CUR_LOG)" >&2 ;;
    skipped) echo "    (skipped: $reason)" ;;
    *) [ -z "$reason" ] || echo "    note: $reason" ;;
  esac
  write_steps
}
skip() { begin "$1" "$2"; end skipped "$3"; }  # skip <id> <title> <reason>
ok() { [ "${STATUS[$1]:-}" = ok ]; }
# q CMD: stdout to the step's log only, stderr to the console and the log; v CMD: both to both.
# Each marks where its output starts in the log, so why() quotes the command that failed.
mark() { CUR_MARK=$(wc -l <"$out/$CUR_LOG"); }
q() { mark; "$@" 2>&1 >>"$out/$CUR_LOG" | tee -a "$out/$CUR_LOG" >&2; return "${PIPESTATUS[0]}"; }
v() { mark; "$@" 2>&1 | tee -a "$out/$CUR_LOG"; return "${PIPESTATUS[0]}"; }
why() {  # why <exit status> <what>: "<what>: exit N: <the last line that command printed>"
  local last
  last=$(tail -n +"$((CUR_MARK + 1))" "$out/$CUR_LOG" 2>/dev/null | grep -v '^[[:space:]]*$' | tail -n 1 | tr -d '\r' | cut -c1-300)
  echo "$2: exit $1${last:+: $last}"
}
timed() {  # one timing job at a time on a shared machine (a no-op wait when nothing else times)
  flock -n "$LOCK" true 2>/dev/null || echo "    (waiting for $LOCK: another timing job is running)" >&2
  flock "$LOCK" "$@"
}
selects() {  # selects <family regex>: whether --filter leaves a benchmark of the family in the profile
  [ -z "$filter" ] || "$RL" list --profile "$profile" --filter "^(?=.*(${filter}))$1/" >/dev/null 2>&1
}
NEEDS_BUILD="needs the build, which failed"

# --- dependencies and build
if [ "$skip_deps" = 1 ]; then
  skip deps "dependencies" "--skip-deps"
else
  begin deps "dependencies"
  if v scripts/install_deps.sh; then end ok; else end failed "$(why $? scripts/install_deps.sh)"; fi
fi

begin build "build (release)"
if [ -n "${ROOFLAB_BUILD_DIR:-}" ]; then configure=(cmake -S "$ROOT" -B "$BUILD"); compile=(cmake --build "$BUILD" -j "$(nproc)")
else configure=(cmake --preset release); compile=(cmake --build --preset release); fi
if ! "${configure[@]}" >>"$out/$CUR_LOG" 2>&1; then
  tail -40 "$out/$CUR_LOG" >&2
  end failed "$(why 1 "configure (${configure[*]})")"
else
  grep -A20 "rooflab dependencies" "$out/$CUR_LOG" | sed -n '1,16p'
  # The MPI program is a separate binary, configured (apps/mpi) only when MPI was found.
  targets=(rooflab); [ -d "$BUILD/apps/mpi" ] && targets+=(rooflab_mpi)
  "${compile[@]}" --target "${targets[@]}" >>"$out/$CUR_LOG" 2>&1; rc=$?
  grep -E 'error|warning: unused|Error' "$out/$CUR_LOG" | head -40
  if [ $rc = 0 ] && [ -x "$RL" ]; then end ok; else end failed "$(why $rc "build (${targets[*]})")"; fi
fi
# list.json: the run's cases and the registry the figures read (variant order, baselines, ISAs).
if ok build && ! "$RL" list --json --profile "$profile" ${filter:+--filter "$filter"} >"$out/.list.json.tmp"; then
  rm -f "$out/.list.json.tmp"
  echo "run_all.sh: no benchmark of profile $profile matches --filter '$filter' (see rooflab list)" >&2
  exit 2
fi
if ok build; then mv "$out/.list.json.tmp" "$out/list.json"; fi

# --- the machine and the benchmarks
if ! ok build; then
  skip characterize "characterize the machine" "$NEEDS_BUILD"
elif [ -n "$machine" ]; then
  begin characterize "machine.json from --machine $machine"
  if cp "$machine" "$out/machine.json" 2>>"$out/$CUR_LOG"; then end ok "reused $machine"
  else end failed "$(why $? "cp $machine")"; fi
else
  begin characterize "characterize the machine" "$out/machine.json"
  if q timed "$RL" characterize --profile "$profile" --out "$out"; then end ok
  else end failed "$(why $? "rooflab characterize")"; fi
fi
[ -f "$out/machine.json" ] && have_machine=1 || have_machine=0
no_machine="no machine.json (characterize ${STATUS[characterize]:-did not run})"

# Each per-ISA variant's default ISA: the fastest on this machine, measured (not the widest).
# The benchmarks follow machine.isa_choice.json through --machine; list.json is made again.
isa_rc=0
ititle="default ISAs by measurement (rooflab isa-calibrate)"
if ! ok build; then
  skip isa "$ititle" "$NEEDS_BUILD"
elif [ $have_machine = 0 ]; then
  skip isa "$ititle" "$no_machine"
else
  ifams=""
  for f in $("$RL" isa-calibrate --list 2>/dev/null | cut -d/ -f1 | sort -u); do
    selects "$f" && ifams+="${ifams:+|}$f"
  done
  if [ -z "$ifams" ]; then
    skip isa "$ititle" "no per-ISA variant selected by --filter"
  else
    begin isa "$ititle" "$out/machine.isa_choice.json"
    iargs=(--machine "$out/machine.json" --filter "^($ifams)/")
    [ "$profile" = smoke ] && iargs+=(--reps 1 --min-time 0)  # smoke proves the path, not the choice
    v timed "$RL" isa-calibrate "${iargs[@]}"; isa_rc=$?
    if [ $isa_rc = 0 ] || [ $isa_rc = 3 ]; then
      "$RL" list --json --profile "$profile" ${filter:+--filter "$filter"} --machine "$out/machine.json" \
        >"$out/.list.json.tmp" 2>>"$out/$CUR_LOG" && mv "$out/.list.json.tmp" "$out/list.json"
      if [ $isa_rc = 0 ]; then end ok; else end ok "some ISA failed verification (left out of the choice)"; fi
    else end failed "$(why $isa_rc "rooflab isa-calibrate")"; isa_rc=0; fi
  fi
fi

bench_rc=0
if ! ok build; then
  skip bench "benchmarks ($profile profile)" "$NEEDS_BUILD"
else
  begin bench "benchmarks ($profile profile)" "$out/bench.json"
  # Without machine.json the benchmarks still run and verify; only the predictions are missing.
  bmachine=(); [ $have_machine = 1 ] && bmachine=(--machine "$out/machine.json")
  timed "$RL" bench --profile "$profile" ${filter:+--filter "$filter"} --out "$out" "${bmachine[@]}" 2>&1 \
    | tee -a "$out/$CUR_LOG"; bench_rc=${PIPESTATUS[0]}
  nopred=""; [ $have_machine = 1 ] || nopred="$no_machine: no predictions"
  if [ $bench_rc = 0 ]; then end ok "$nopred"
  elif [ $bench_rc = 3 ] && [ -f "$out/bench.json" ]; then
    end ok "some variants failed verification (listed in the report)${nopred:+; $nopred}"
  else end failed "$(why $bench_rc "rooflab bench")"; bench_rc=0; fi
fi

if [ ! -f "$out/bench.json" ]; then
  skip model "roofline model" "needs bench.json (bench ${STATUS[bench]:-did not run})"
else
  begin model "roofline model" "$out/model.json"
  if [ $have_machine = 1 ]; then margs=(--run "$out")
  else margs=(--bench "$out/bench.json" --out "$out/model.json"); fi
  if q "$RL" model "${margs[@]}"; then end ok "$([ $have_machine = 1 ] || echo "$no_machine: no predictions")"
  else end failed "$(why $? "rooflab model")"; fi
fi

# --- the families' own steps
if ! ok build; then
  skip pot "POT comparison" "$NEEDS_BUILD"
elif ! selects sinkhorn; then
  skip pot "POT comparison" "no Sinkhorn benchmark selected by --filter"
elif ! "$PY" -c 'import ot' 2>/dev/null; then
  skip pot "POT comparison" "POT is not installed (apt-get install python3-pot)"
else
  begin pot "POT comparison" "$out/pot_compare.json"
  # POT and rooflab solve the same Sinkhorn problems in one run (MAP-UOT Fig. 9).
  # POT's per-iteration time is the difference of two solves (N and 2N iterations), so N must make
  # that difference stand well above the noise of its fixed cost (exp(-C/reg), allocations).
  case $profile in smoke) pargs=(--sizes 512 --iters 50 --reps 3) ;; quick) pargs=(--sizes 1024,4096 --iters 20 --reps 3) ;;
                   *) pargs=(--sizes 1024,2048,4096,8192 --iters 10 --reps 2) ;; esac
  # rooflab solves at the ISA and prefetch target the calibration chose here (isa above).
  psolve=("$RL" sinkhorn); [ $have_machine = 1 ] && psolve+=(--machine "$out/machine.json")
  if q timed "$PY" scripts/pot_compare.py --rooflab "$(printf '%q ' "${psolve[@]}")" "${pargs[@]}" --out "$out/pot_compare.json"; then end ok
  else end failed "$(why $? scripts/pot_compare.py)"; fi
fi

# Simulated counters are ~50x slower than native runs (~30 s per 4096^2 case): quick and paper
# count the Sinkhorn column passes at 4096^2 (COFFEE Fig. 11, MAP-UOT's 4096^2 L1 claim): quick
# once per case, the microkernel at this CPU's best ISA only (the one the claim and a quick look
# read; an avx512 case is simulated as its avx2 sibling), paper every ISA twice; smoke the two
# cases of the L1 claim at 1024^2.
if ! ok build; then
  skip counters "cache-miss counters" "$NEEDS_BUILD"
else
  best=$("$RL" info 2>/dev/null | sed -n 's/^best ISA on this CPU: //p'); best=${best:-avx2}
  case $profile in
    smoke) cargs=(--case sinkhorn/typical/f64/1024x1024/part:col/threads:1
                  --case "sinkhorn/microkernel/$best/f64/1024x1024/part:col/threads:1" --runs 1) ;;
    quick) cargs=(--profile quick --runs 1 --filter "sinkhorn/(typical|c2r|blocked|microkernel/$best)/f64/4096x4096/.*part:col/threads:1") ;;
    *) cargs=(--profile paper --runs 2 --filter 'sinkhorn/.*/f64/4096x4096/.*part:col/threads:1') ;;
  esac
  ccheck=(); [ -n "$filter" ] && ccheck=(--filter "$filter")   # the user's filter narrows the set too
  if [ "$profile" != smoke ] && [ -n "$filter" ]; then
    cargs[-1]="^(?=.*(${filter}))${cargs[-1]}"; ccheck=()
  fi
  if [ "$profile" != smoke ] && ! "$RL" list --profile "$profile" --filter "${cargs[-1]}" >/dev/null 2>&1; then
    skip counters "cache-miss counters" "no selected benchmark is in the counters set"
  elif [ "$profile" = smoke ] && [ -n "$filter" ] && ! printf '%s\n' "${cargs[@]}" | grep -qP "$filter"; then
    skip counters "cache-miss counters" "no selected benchmark is in the counters set"
  else
    begin counters "cache-miss counters" "$out/counters.json"
    cmachine=(); [ $have_machine = 1 ] && cmachine=(--machine "$out/machine.json")
    # Not a timing, but a long CPU load: it waits for a timing job and lets builds run beside it.
    flock -s "$LOCK" "$RL" counters "${cargs[@]}" "${ccheck[@]}" --backend all "${cmachine[@]}" --out "$out" 2>&1 \
      | tee -a "$out/$CUR_LOG"; rc=${PIPESTATUS[0]}
    cnote=""; [ $have_machine = 1 ] || cnote="$no_machine: valgrind's default cache sizes"
    if [ $rc = 0 ]; then end ok "$cnote"
    elif [ $rc = 2 ]; then end skipped "no counter back end is available (counters.json lists the reasons)"
    elif [ $rc = 3 ]; then
      first="" n=""  # the first failed case and why: its progress line, then "FAILED: ..."
      while IFS= read -r line; do
        case $line in
          "[counters "*) n=${line#*] }; n=${n%% *} ;;
          *"FAILED: "*) first="$n: ${line#*FAILED: }"; first=${first% (*)}; break ;;
        esac
      done <"$out/$CUR_LOG"
      end failed "rooflab counters: exit 3: $(grep -c '^ *FAILED: ' "$out/$CUR_LOG") case(s) failed (counters.json says why), e.g. ${first:0:250}"
    else end failed "$(why $rc "rooflab counters")"; fi
  fi
fi

# GEMM. Smoke and quick: the summary of the GEMM rows just timed. Paper: also the simulated L2
# misses of SFC-CA k_layers 1/2/4 vs the best baseline (~8 min) and the knob evaluation over 100
# random shapes against the committed nearest-neighbour set (results/gemm/knobs_nn.json,
# [256,2048]^3, ~10 min).
if ! ok build; then
  skip gemm "GEMM summary and knobs" "$NEEDS_BUILD"
elif ! selects gemm; then
  skip gemm "GEMM summary and knobs" "no GEMM benchmark selected by --filter"
elif [ ! -f "$out/model.json" ]; then
  skip gemm "GEMM summary and knobs" "needs model.json (model ${STATUS[model]:-did not run})"
else
  begin gemm "GEMM summary and knobs" "gemm_summary.json$([ "$profile" = paper ] && echo ", gemm_l2/, gemm_knobs.json")"
  failed=(); gnote=""
  # the tight (per-BRGEMM model) roofline is in model.json (`rooflab model` with machine.json)
  [ $have_machine = 1 ] || gnote="no tight roofline: $no_machine"
  q "$PY" plots/gemm_summary.py "$out" || failed+=("$(why $? plots/gemm_summary.py)")
  if [ "$profile" = paper ]; then
    v scripts/gemm_paper.sh --out "$out" --rooflab "$RL" --skip-bench || failed+=("$(why $? scripts/gemm_paper.sh)")
    if [ $have_machine = 1 ]; then
      v timed "$RL" gemm-knobs evaluate --shapes 100 --min 256 --max 2048 --seed 1 --threads "$(nproc)" \
        --machine "$out/machine.json" --out "$out" || failed+=("$(why $? "rooflab gemm-knobs evaluate")")
    else gnote+="${gnote:+; }no knob evaluation: $no_machine"; fi
  fi
  if [ ${#failed[@]} = 0 ]; then end ok "$gnote"; else end failed "$(IFS=';'; echo "${failed[*]}")"; fi
fi

# RTAMM: units (machine.rtamm.json), calibration (machine.rtamm_calibration.json), adaptive vs
# static vs oracle. Each takes the profile (shapes, pool size and the bounded wait for a quiet
# machine).
rtitle="RTAMM: unit costs, calibration, adaptive vs static vs oracle"
if ! ok build; then
  skip rtamm "$rtitle" "$NEEDS_BUILD"
elif ! selects rtamm; then
  skip rtamm "$rtitle" "no RTAMM benchmark selected by --filter"
elif [ $have_machine = 0 ]; then
  skip rtamm "$rtitle" "needs machine.json (characterize ${STATUS[characterize]:-did not run})"
else
  begin rtamm "$rtitle" "machine.rtamm.json, machine.rtamm_calibration.json, rtamm.json"
  rm=(--machine "$out/machine.json" --profile "$profile" --threads "$(nproc)")
  # calibrate: per-term scales fitted on training shapes disjoint from the evaluation set
  q timed "$RL" rtamm units "${rm[@]}"; rc=$?; what="rooflab rtamm units"
  if [ $rc = 0 ]; then q timed "$RL" rtamm calibrate "${rm[@]}" --out "$out"; rc=$?; what="rooflab rtamm calibrate"; fi
  if [ $rc = 0 ]; then v timed "$RL" rtamm evaluate "${rm[@]}" --out "$out"; rc=$?; what="rooflab rtamm evaluate"; fi
  if [ $rc = 0 ]; then end ok; else end failed "$(why $rc "$what")"; fi
fi

mtitle="Sinkhorn on MPI: alpha/beta calibration and the design sweep"
if ! ok build; then
  skip mpi "$mtitle" "$NEEDS_BUILD"
elif [ ! -x "$BUILD/rooflab_mpi" ]; then
  skip mpi "$mtitle" "rooflab_mpi not built (MPI not found; install mpich libmpich-dev)"
elif [ -n "$filter" ] && ! echo "sinkhorn_mpi" | grep -qE "$filter" 2>/dev/null; then
  skip mpi "$mtitle" "--filter does not select sinkhorn_mpi"
elif [ "$(nproc)" -lt 2 ]; then
  skip mpi "$mtitle" "1 CPU for this run (nproc; its affinity mask): the 2-rank ping-pong and every run of 2 or more ranks would time ranks taking turns on it"
else
  begin mpi "$mtitle" "mpi_sweep.json"
  case $profile in smoke) sweep_opt=(--smoke) ;; quick) sweep_opt=(--quick) ;; *) sweep_opt=() ;; esac
  # mpi_sweep.sh takes the timing lock per run itself.
  if q scripts/mpi_sweep.sh --run "$out" --build "$BUILD" "${sweep_opt[@]}"; then end ok
  else end failed "$(why $? scripts/mpi_sweep.sh)"; fi
fi

gtitle="GPU ceilings and the MAP-UOT tile sweep (with a CUDA device)"
if ! ok build; then
  skip gpu "$gtitle" "$NEEDS_BUILD"
else
  begin gpu "$gtitle"
  v timed "$RL" gpu-characterize --out "$out" --optional; rc=$?
  if [ $rc != 0 ]; then end failed "$(why $rc "rooflab gpu-characterize")"
  elif ! grep -q '"gpu"' "$out/machine.json" 2>/dev/null; then  # no device: it said why
    end skipped "$(grep -v '^[[:space:]]*$' "$out/$CUR_LOG" | tail -n 1 | sed 's/^gpu-characterize: \(skipped: \)\{0,1\}//' | cut -c1-200)"
  else
    gq=(); [ "$profile" != paper ] && gq=(--quick)
    v scripts/gpu_sweep.sh --rooflab "$RL" --out "$out/gpu-sweep" "${gq[@]}"; rc=$?
    if [ $rc = 0 ] || [ $rc = 77 ]; then end ok; else end failed "$(why $rc scripts/gpu_sweep.sh)"; fi
  fi
fi

# --- what the run shows: plots/ only reads the files above, so these need no build.
begin claims "claims ledger" "$out/claims.md"
if q "$PY" plots/claims.py "$out"; then
  tail -n 1 "$out/claims.md"; end ok
else end failed "$(why $? "rooflab claims")"; fi

begin report "plots and report" "$out/report/index.html"
# --keep-going: a malformed file or a failing part becomes a warning at the top, the rest is written.
v "$PY" plots/report.py "$out" --keep-going; rc=$?
if [ $rc = 0 ]; then end ok
elif [ -s "$out/report/index.html" ]; then end failed "$(why $rc "rooflab report") (written, with that part missing)"
else
  end failed "$(why $rc "rooflab report")"
  # Last resort (no Python, say): the steps themselves, so the run still ends with a report.
  mkdir -p "$out/report"
  {
    echo "# rooflab report — $(hostname) (steps only: the report could not be built)"; echo
    echo "Run directory: \`$out\`"; echo
    for i in "${!S_ID[@]}"; do echo "- **${S_STATUS[$i]}** ${S_TITLE[$i]}${S_REASON[$i]:+: ${S_REASON[$i]}}"; done
  } >"$out/report/report.md"
  { echo "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>rooflab report (steps only)</title></head><body><pre>"
    sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' "$out/report/report.md"; echo "</pre></body></html>"; } >"$out/report/index.html"
fi
# results/latest: the newest run kept under results/ (the knobs' default machine.json); a run
# written elsewhere (--out /tmp/..., a test) leaves it alone.
case "$out/" in "$ROOT/results/"*) ln -sfn "$out" "$ROOT/results/latest" 2>/dev/null || true ;; esac

# --- exit status (--help): 1 a step failed, else 3 a variant failed verification, else 0
failed=()
for i in "${!S_ID[@]}"; do [ "${S_STATUS[$i]}" = failed ] && failed+=("${S_ID[$i]}"); done
rc=0
if [ ${#failed[@]} -gt 0 ]; then rc=1; elif [ "$bench_rc" = 3 ] || [ "$isa_rc" = 3 ]; then rc=3; fi
write_steps $rc
echo "total $(fmt $(( $(date +%s) - T0 )))"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_all.sh: ${#failed[@]} step(s) failed: ${failed[*]} (reasons at the top of the report and in $out/steps.json); exit 1" >&2
  for i in "${!S_ID[@]}"; do [ "${S_STATUS[$i]}" = failed ] && echo "  ${S_ID[$i]}: ${S_REASON[$i]}" >&2; done
elif [ $rc = 3 ]; then
  echo "NOTE: some variants failed verification (see the report); exit 3" >&2
fi
echo "report: $out/report/index.html"
exit $rc
