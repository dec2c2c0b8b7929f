#!/usr/bin/env bash
# The performance regression gate (run by `./run_all.sh --test`, hence by CI):
#   1. characterize this machine (quick profile, 1 thread: every gated kernel runs on one,
#      no likwid) so predictions use its own ceilings (the Sinkhorn kernels stream 4 rows at
#      once: their floors use the 4-stream DRAM ceilings of machine.json's bandwidth.streams);
#   2. time a handful of kernels (compute-bound and DRAM-bound; ~1 s each) with 9
#      repetitions, verified first as always; `rooflab model` predicts them into model.json;
#   3. `rooflab compare BASELINE NEW --metric ecm` (or `time` where this CPU's baseline has a
#      `metric` file saying so, below): ECM efficiency (attained / the ECM prediction
#      from the ceilings measured in the same run) is compared, so a machine that is uniformly
#      faster or slower than the one the baseline came from does not trip the gate; both sides are
#      priced by this build's model (`rooflab model --remodel`: each with its own machine's caches);
#      a benchmark is slower when the Mann-Whitney U test says p < 0.01 AND its
#      efficiency dropped by more than the threshold;
#   4. a slower one (against another CPU's baseline: every one) is judged A/B: the baseline's own
#      code (its commit) and this build time it alternately on this machine, and it fails the gate
#      only when it is slower there. Stored numbers move with the host's state (a guest's kernels
#      ran 1.3-1.8x slower for hours, code unchanged) and differ across CPUs; two builds timed in
#      the same minutes do not. Without the
#      baseline's code at hand it is re-timed against the stored numbers instead, and against a
#      baseline from another CPU only the kernels in `cross_cpu` below gate (their cross-CPU ratios
#      are within 0.85-1.15), only between two AMD CPUs; the others are compared and printed.
# usage: scripts/perf_gate.sh [--rooflab BIN] [--out DIR] [--baseline DIR | --baselines DIR] [--threshold T]
#                             [--confirm N] [--confirm-pause S] [--ref-rooflab BIN] [--update-baseline [--runs N]]
#   --baseline DIR     default: the results/baselines/gate*/ made on this CPU (plots/cpu_identity.py;
#                      of several, the one whose DRAM read is nearest this run's: the host's memory
#                      state), else one of this CPU's vendor, else results/baselines/gate/; against
#                      another CPU's only `cross_cpu` gates (AMD with AMD); against this CPU's from
#                      a DRAM state more than 1.3x away only the compute-bound kernels gate
#   --baselines DIR    where the gate*/ baselines are looked for (default results/baselines)
#   --update-baseline  writes the run into the baseline directory instead of comparing (without
#                      --baseline: the one made on this CPU, which must exist), and git's HEAD into
#                      its `commit` file (the code the A/B confirmation builds)
#   --runs N           with --update-baseline: N whole runs (characterize + bench), and the
#                      baseline is the most typical one (below); default 1
#   --confirm N        a kernel found slower is judged again (default 2, 0..5; 0: the table decides).
#                      A/B, where the baseline's code is at hand (its `commit` file and git, or
#                      --ref-rooflab): that code, built once into build/perf-gate-ref/COMMIT/, and
#                      this build time it in 2N+1 alternating rounds in the same minutes, and it fails
#                      the gate only when this build is slower there (time, --threshold or 0.25: the
#                      host's state weighs on both sides, on any CPU; DIR/ab/). Otherwise it is
#   --confirm-pause S  re-timed N times S seconds apart (default 30) against the stored numbers and
#                      fails only when every one is slower too (DIR/confirm-K/).
#   --ref-rooflab BIN  a rooflab built from the baseline's code, for the A/B (instead of building it)
# Exit: 0 pass, 4 a significant regression confirmed (by the A/B; without it by every re-timing, and
# against another CPU's baseline only of a `cross_cpu` kernel), 3 a kernel failed verification, 1 error (a gated kernel that could not be compared too;
# an A/B against another CPU's baseline disturbed in every round;
# one the baseline lacks, added to the gate after it was made, is reported and not gated).
# The threshold (default 0.25, or the baseline directory's `threshold` file) and the false-alarm
# rate measured on the 2-core VM are in results/baselines/gate/README.md (and each gate-*/).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

rl="$ROOT/build/release/rooflab"; out=""; base=""; store="$ROOT/results/baselines"; threshold=""; update=0; runs=1; confirm=2; pause=30
ref_rl=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rooflab) [ $# -ge 2 ] || { echo "perf_gate.sh: --rooflab needs a value" >&2; exit 2; }; rl=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "perf_gate.sh: --out needs a value" >&2; exit 2; }; out=$2; shift 2 ;;
    --baseline) [ $# -ge 2 ] || { echo "perf_gate.sh: --baseline needs a value" >&2; exit 2; }; base=$2; shift 2 ;;
    --baselines) [ $# -ge 2 ] || { echo "perf_gate.sh: --baselines needs a value" >&2; exit 2; }; store=$2; shift 2 ;;
    --threshold) [ $# -ge 2 ] || { echo "perf_gate.sh: --threshold needs a value" >&2; exit 2; }; threshold=$2; shift 2 ;;
    --update-baseline) update=1; shift ;;
    --runs) [ $# -ge 2 ] || { echo "perf_gate.sh: --runs needs a value" >&2; exit 2; }
            [[ $2 =~ ^[1-9][0-9]?$ ]] || { echo "perf_gate.sh: --runs must be 1..99, got '$2'" >&2; exit 2; }
            runs=$2; shift 2 ;;
    --confirm) [ $# -ge 2 ] || { echo "perf_gate.sh: --confirm needs a value" >&2; exit 2; }
               [[ $2 =~ ^[0-5]$ ]] || { echo "perf_gate.sh: --confirm must be 0..5, got '$2'" >&2; exit 2; }
               confirm=$2; shift 2 ;;
    --confirm-pause) [ $# -ge 2 ] || { echo "perf_gate.sh: --confirm-pause needs a value" >&2; exit 2; }
               [[ $2 =~ ^[0-9]{1,3}$ ]] || { echo "perf_gate.sh: --confirm-pause must be 0..999 seconds, got '$2'" >&2; exit 2; }
               pause=$2; shift 2 ;;
    --ref-rooflab) [ $# -ge 2 ] || { echo "perf_gate.sh: --ref-rooflab needs a value" >&2; exit 2; }
               [ -x "$2" ] || { echo "perf_gate.sh: --ref-rooflab: $2 is not an executable" >&2; exit 2; }
               ref_rl=$(realpath -s "$2"); shift 2 ;;
    -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
    *) echo "perf_gate.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
# Usage errors first, so that they read the same whether or not a rooflab is built.
[ "$runs" = 1 ] || [ "$update" = 1 ] || { echo "perf_gate.sh: --runs applies to --update-baseline only" >&2; exit 2; }
[ -x "$rl" ] || { echo "perf_gate.sh: $rl not built (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp -d /tmp/rooflab-gate.XXXXXX)
mkdir -p "$out" || exit 1

# The gated kernels: names are fixed so the baseline's rows match (AVX2 runs on every x86-64
# this project targets; an AVX-512 machine still runs the AVX2 path). Each is compute-bound or
# far beyond any cache (128 MiB): a working set near the L3 size would be predicted from L3 in
# one run and DRAM in the next, since the measured L3 capacity moves between runs on a VM.
# The compute-bound ones first (compute_bound below takes the first two).
cases=(
  gemm/blocked/avx2/f64/512x512x512/threads:1
  floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1
  sinkhorn/microkernel/avx2/f64/4096x4096/part:iter/threads:1
  sinkhorn/fused_uv/avx2/f64/4096x4096/threads:1
  sinkhorn/c2r/f64/4096x4096/part:col/threads:1
)
args=()
for c in "${cases[@]}"; do args+=(--case "$c"); done
# How every gated kernel is timed (the run and its re-timings alike).
reps=9; min_time=0.05
bench_opts=(--benchmark_repetitions=$reps --benchmark_min_time=$min_time --benchmark_display_aggregates_only=true)
# The kernels that gate against a baseline from another CPU: ECM efficiency ratios within 0.85-1.15
# between the committed Zen 3, Zen 4 and Zen 5 baselines (docs/model.md#cross-cpu;
# tests/roofline/test_remodel.cpp), and only between two CPUs of a vendor in cross_cpu_vendors:
# against the Xeon's (results/baselines/gate-xeon) both leave that range (floyd_warshall 1.6-1.8,
# microkernel 1.04-1.22 over 10 Xeon runs), so an Intel / AMD pair compares, prints, gates nothing.
cross_cpu=(
  floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1
  sinkhorn/microkernel/avx2/f64/4096x4096/part:iter/threads:1
)
cross_cpu_vendors=(AuthenticAMD)
# Which gated kernels are bound by compute and which by DRAM (their ECM bottleneck on every CPU
# class measured): against this CPU's baseline from a host whose DRAM read differed from this
# run's by more than dram_state_factor, only the compute-bound ones gate (see the end).
compute_bound=("${cases[@]:0:2}")
dram_bound=("${cases[@]:2}")
dram_state_factor=1.3

py="$ROOT/.venv/bin/python"; [ -x "$py" ] || py=python3
# One whole measurement into DIR: this machine's ceilings, then the kernels, then their model.
measure() {  # DIR
  local d=$1 rc
  mkdir -p "$d" || exit 1
  echo "[gate] characterize -> $d/machine.json"
  "$rl" characterize --profile quick --threads 1 --no-likwid --out "$d" >/dev/null || { echo "[gate] characterize failed" >&2; exit 1; }
  # The gate normalizes by the most repeatable ceilings: the 1-stream DRAM read stayed within 1%
  # between gate runs here while the 4-stream one moved 32 -> 38 GB/s (the kernels did not follow),
  # which pushed efficiency ratios of unchanged DRAM kernels to 1.24. So the S-stream section is
  # dropped from the gate's machine.json (bandwidth.streams.omitted says so, and the model's note
  # with it) and those floors fall back to 1-stream ones.
  "$py" - "$d/machine.json" <<'PY' || { echo "[gate] cannot edit $d/machine.json" >&2; exit 1; }
import json, sys
m = json.load(open(sys.argv[1]))
m.setdefault("bandwidth", {})["streams"] = {"omitted": "scripts/perf_gate.sh leaves the S-stream ceilings out on purpose"}
json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
  echo "[gate] bench ${#cases[@]} kernels x 9 repetitions -> $d/bench.json"
  "$rl" bench "${args[@]}" --out "$d" "${bench_opts[@]}" >/dev/null
  rc=$?
  [ $rc = 0 ] || { echo "[gate] bench failed (exit $rc)" >&2; exit $rc; }
  # The predictions (model.json is the one prediction file; bench.json holds measurements).
  "$rl" model --run "$d" --remodel >/dev/null || { echo "[gate] model failed" >&2; exit 1; }

  # Say when a prediction fell back to a 1-stream ceiling (always, for the 4-row Sinkhorn kernels:
  # see above). The baseline's own model.json is not read: the compare re-prices its measurements.
  "$py" - "$d/model.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])).get("rows", []):
    for n in r.get("prediction_notes") or []: print(f"[gate] note: {r.get('name')}: {n}")
PY
}
if [ "$runs" = 1 ]; then
  measure "$out"
else
  # A run's state can hold for its whole process (on a Xeon guest one run's gemm was 1.3x
  # faster than most: results/baselines/gate-xeon/README.md), and a baseline that is such a run
  # fails unchanged code. So N runs, and the baseline is their medoid: the run whose ECM
  # efficiencies are closest to the per-kernel medians (least sum of |ln(efficiency / median)|);
  # every run's efficiencies go to the baseline's selection.json.
  for i in $(seq 1 "$runs"); do echo "[gate] run $i of $runs"; measure "$out/run-$i"; done
  pick=$("$py" - "$out" "$runs" <<'PY'
import json, math, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
eff = []
for i in range(1, n + 1):
    rows = json.load(open(f"{out}/run-{i}/model.json")).get("rows", [])
    eff.append({r["name"]: r["ecm"]["efficiency"] for r in rows
                if isinstance(r.get("ecm"), dict) and (r["ecm"].get("efficiency") or 0) > 0})
names = sorted(set().union(*eff))
med = {k: statistics.median(e[k] for e in eff if k in e) for k in names}
score = [sum(abs(math.log(e[k] / med[k])) for k in names if k in e) + (len(names) - len(e)) * 10 for e in eff]
best = min(range(n), key=lambda i: score[i])
json.dump({"rule": "medoid: least sum over kernels of |ln(ECM efficiency / median over runs)|",
           "chosen_run": best + 1, "median_efficiency": med,
           "runs": [{"run": i + 1, "score": score[i], "efficiency": eff[i]} for i in range(n)]},
          open(f"{out}/selection.json", "w"), indent=1)
for k in names:
    print(f"[gate] {k}: ECM efficiency over {n} runs " + " ".join(f"{e[k]:.3f}" if k in e else "-" for e in eff), file=sys.stderr)
print(best + 1)
PY
) || { echo "[gate] choosing the baseline run failed" >&2; exit 1; }
  echo "[gate] baseline: run $pick of $runs (the medoid, $out/selection.json)"
  cp "$out/run-$pick"/{bench,machine,model}.json "$out/" || exit 1
fi
# The CPU a baseline belongs to (plots/rooflab/data/cpu_identity.py, the rule the fleet report
# and the history share): the model name and host.cpu_signature (CPUID's vendor, family, model,
# stepping) where both files record it; for a file older than that, the name, the ISAs and the
# private cache sizes (under a hypervisor the model name can be generic: "AMD EPYC" for a Zen 3
# and a Zen 5). The default baseline is the one made on this CPU; against a baseline from another
# CPU the comparison is printed but a regression does not fail the gate (see the end).
cpu_of() {  # FILE [OTHER]: what identifies FILE's CPU when compared with OTHER's ("?": unreadable)
  "$py" "$ROOT/plots/cpu_identity.py" "$@" 2>/dev/null || echo "?"
}
vendor_of() {  # FILE: CPUID's vendor string (host.cpu_signature, else guessed from host.cpu), "?"
  "$py" - "$1" <<'PY' 2>/dev/null || echo "?"
import json, sys
h = json.load(open(sys.argv[1])).get("host", {})
sig, cpu = h.get("cpu_signature") or "", h.get("cpu") or ""
print(sig.split()[0] if sig.strip() else "AuthenticAMD" if "AMD" in cpu else "GenuineIntel" if "Intel" in cpu else "?")
PY
}
this_cpu=$(cpu_of "$out/machine.json"); this_vendor=$(vendor_of "$out/machine.json")
# A CPU can have several baselines, one per state of the host's memory (a guest's DRAM read moved
# 13 -> 24 GB/s between days, and the DRAM-bound kernels did not follow it: below): the default is
# the one whose 1-stream DRAM read is nearest this run's.
dram_read() {  # FILE: its 1-thread 1-stream DRAM read ceiling in GB/s, or "" when it has none
  "$py" - "$1" <<'PY' 2>/dev/null
import json, sys
v = json.load(open(sys.argv[1])).get("bandwidth", {}).get("levels", {}).get("DRAM", {}).get("read", {}).get("1")
print(f"{v:.3f}" if isinstance(v, (int, float)) and v > 0 else "")
PY
}
this_read=$(dram_read "$out/machine.json")
log_gap_above() {  # A B F: exit 0 when |ln(A / B)| > ln F (A, B > 0)
  awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { g = log(a / b); if (g < 0) g = -g; exit !(g > log(f)) }'
}
if [ -z "$base" ]; then
  mine=()
  for d in "$store"/gate*/; do
    [ -f "$d/machine.json" ] && [ "$(cpu_of "$d/machine.json" "$out/machine.json")" = "$(cpu_of "$out/machine.json" "$d/machine.json")" ] && mine+=("${d%/}")
  done
  if [ ${#mine[@]} -gt 1 ]; then
    # the one whose DRAM read is nearest this run's (least |ln ratio|; without reads, the first)
    listed=""; best_read=""
    for d in "${mine[@]}"; do
      r=$(dram_read "$d/machine.json"); listed+="${d#"$ROOT"/} (DRAM read ${r:-?} GB/s) "
      [ -n "$base" ] || { base=$d; best_read=$r; }
      [ -n "$r" ] && [ -n "$this_read" ] || continue
      if [ -z "$best_read" ] || awk -v r="$r" -v b="$best_read" -v m="$this_read" \
           'BEGIN { g = log(r / m); h = log(b / m); exit !((g < 0 ? -g : g) < (h < 0 ? -h : h)) }'; then
        base=$d; best_read=$r
      fi
    done
    echo "[gate] ${#mine[@]} baselines of this CPU: $listed"
    echo "[gate] this run's DRAM read ${this_read:-?} GB/s: nearest is ${base#"$ROOT"/}"
  elif [ ${#mine[@]} = 1 ]; then
    base=${mine[0]}
  fi
  if [ -z "$base" ]; then
    [ "$update" = 1 ] && { echo "perf_gate.sh: no baseline for this CPU ($this_cpu) under $store/gate*/: name the new one with --baseline results/baselines/gate-<cpu class>" >&2; exit 2; }
    # Another CPU's: one of this CPU's vendor where there is one (the likelier model), else the first
    base="$store/gate"
    for d in "$store"/gate*/; do
      [ -f "$d/machine.json" ] && [ "$(vendor_of "$d/machine.json")" = "$this_vendor" ] && { base=${d%/}; break; }
    done
  fi
fi
git_() { git -c safe.directory="$ROOT" -C "$ROOT" "$@"; }  # a clone owned by another user too
if [ "$update" = 1 ]; then
  mkdir -p "$base" && cp "$out/bench.json" "$out/machine.json" "$out/model.json" "$base/" || exit 1
  if [ -f "$out/selection.json" ]; then cp "$out/selection.json" "$base/" || exit 1; else rm -f "$base/selection.json"; fi
  # The code measured, for the A/B confirmation (step 4 above)
  if head=$(git_ rev-parse HEAD 2>/dev/null); then
    echo "$head" >"$base/commit" || exit 1
    [ -z "$(git_ status --porcelain -- kernels harness roofline microbench apps cmake CMakeLists.txt 2>/dev/null)" ] ||
      echo "[gate] warning: uncommitted changes to the sources: $base/commit names HEAD ($head), which lacks them; commit, then re-make the baseline" >&2
  else
    rm -f "$base/commit"; echo "[gate] warning: not a git clone: $base has no commit file, so its regressions are re-timed, not judged A/B" >&2
  fi
  echo "[gate] baseline written to $base"
  exit 0
fi
[ -f "$base/bench.json" ] || { echo "[gate] no baseline $base/bench.json (scripts/perf_gate.sh --update-baseline)" >&2; exit 1; }
[ -f "$base/machine.json" ] || { echo "[gate] no $base/machine.json beside the baseline" >&2; exit 1; }
base_cpu=$(cpu_of "$base/machine.json" "$out/machine.json"); this_cpu=$(cpu_of "$out/machine.json" "$base/machine.json")
# The baseline's measurements re-priced by this build's model, its cases' models re-derived with its
# own machine's caches (--remodel: a baseline from before the per-level traffic, or from a CPU with
# other caches, is then priced like this run): both sides' efficiencies come from the same model.
mkdir -p "$out/baseline" && cp "$base/bench.json" "$base/machine.json" "$out/baseline/" &&
  "$rl" model --run "$out/baseline" --remodel >/dev/null || { echo "[gate] re-pricing the baseline failed" >&2; exit 1; }
# The threshold: --threshold, else the baseline's own `threshold` file (a machine whose unchanged
# runs spread wider than 25%: its README gives the measured spread), else 0.25.
ab_threshold=${threshold:-0.25}  # the A/B's: two builds in the same minutes, not the stored numbers' spread
if [ -z "$threshold" ]; then
  threshold=0.25
  if [ -f "$base/threshold" ]; then
    threshold=$(tr -d ' \n' <"$base/threshold")
    [[ $threshold =~ ^0?\.[0-9]+$ ]] || { echo "[gate] $base/threshold: expected a fraction like 0.4, got '$threshold'" >&2; exit 1; }
  fi
fi
# The metric against this CPU's own baseline: ECM efficiency, or time where the baseline's `metric`
# file says so (a guest whose run-to-run ceilings spread wider than its kernels' times: the ECM
# prediction then adds noise instead of cancelling it; its README gives both spreads). Against
# another CPU's baseline always ECM efficiency.
metric=ecm
if [ "$base_cpu" = "$this_cpu" ] && [ -f "$base/metric" ]; then
  metric=$(tr -d ' \n' <"$base/metric")
  [[ $metric = ecm || $metric = time ]] || { echo "[gate] $base/metric: expected ecm or time, got '$metric'" >&2; exit 1; }
fi
label="ECM efficiency"; [ "$metric" = time ] && label="time, this CPU's own baseline ($base/metric)"
echo "[gate] compare ($label, threshold $threshold, alpha 0.01) against $base (re-priced by this build's model)"
"$rl" compare "$out/baseline/bench.json" "$out/bench.json" --metric "$metric" --threshold "$threshold" \
  --json-out "$out/compare.json"
rc=$?
# A gated kernel the compare could not judge (no ECM prediction on a side, e.g. a machine.json
# without a level's bandwidth; or missing from this run) is an error, not a pass. One missing from
# the baseline only (a kernel added to the gate after the baseline was made, which every other
# CPU class's baseline lacks until it is re-made there) is reported and not gated.
uncompared() {  # COMPARE_JSON: exit 1 (with the reasons) when a row is "too few" or "only in BASE"
  "$py" - "$1" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for r in rows:
    if r["status"] == "only in NEW":
        print(f"[gate] not gated: {r['name']} is not in the baseline (added to the gate later): re-make the"
              " baseline on its CPU (scripts/perf_gate.sh --update-baseline --runs 5 --baseline DIR)")
bad = [r for r in rows if r["status"] in ("too few", "only in BASE")]
for r in bad: print(f"[gate] error: {r['name']} not compared: {r['status']} ({r.get('note', '')})", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
slower_names() {  # COMPARE_JSON: the names of its "slower" rows, space-separated
  "$py" -c 'import json, sys
print(" ".join(r["name"] for r in json.load(open(sys.argv[1]))["rows"] if r["status"] == "slower"))' "$1"
}
# The baseline's own code: --ref-rooflab, else its `commit` built once (release, the rooflab target
# only, optional back ends off: no gated kernel uses one) into build/perf-gate-ref/COMMIT/. Prints
# the binary; returns 1 with the reason when there is none (no commit file, no git, a shallow clone
# without that commit, a build that fails).
ref_rooflab() {
  local want c d bin
  [ -n "$ref_rl" ] && { echo "$ref_rl"; return 0; }
  [ -f "$base/commit" ] || { echo "[gate] no A/B: $base has no commit file (the code it measured)" >&2; return 1; }
  want=$(tr -d ' \n' <"$base/commit")
  command -v git >/dev/null || { echo "[gate] no A/B: git is not installed" >&2; return 1; }
  c=$(git_ rev-parse --verify -q "$want^{commit}" 2>/dev/null) ||
    { echo "[gate] no A/B: commit $want of $base is not in this clone" >&2; return 1; }
  d="$ROOT/build/perf-gate-ref/${c:0:12}"
  if [ ! -x "$d/rooflab" ]; then
    echo "[gate] building the baseline's code (commit ${c:0:12}) into ${d#"$ROOT"/}: once, the rooflab target only" >&2
    rm -rf "$d" && mkdir -p "$d/src" || return 1
    local t0=$SECONDS off=()
    for o in CUDA MPI PAPI LIKWID OPENBLAS BLIS DNNL LIBXSMM; do off+=("-DROOFLAB_WITH_$o=OFF"); done
    if ! { git_ archive "$c" | tar -x -C "$d/src"; } ||
       ! cmake -S "$d/src" -B "$d/build" -DCMAKE_BUILD_TYPE=Release "${off[@]}" >"$d/build.log" 2>&1 ||
       ! cmake --build "$d/build" --target rooflab -j "$(nproc)" >>"$d/build.log" 2>&1; then
      echo "[gate] no A/B: the baseline's code did not build (${d#"$ROOT"/}/build.log)" >&2; return 1
    fi
    bin=$(find "$d/build" -type f -name rooflab -perm -u+x | head -1)
    [ -n "$bin" ] && ln -s "$bin" "$d/rooflab" || { echo "[gate] no A/B: no rooflab binary in ${d#"$ROOT"/}/build" >&2; return 1; }
    echo "[gate] built in $((SECONDS - t0)) s" >&2
  fi
  echo "$d/rooflab"
}
# A/B: the kernels NAMES (space-separated), timed by the baseline's code (REF) and this build in
# 2 x $confirm + 1 rounds of scripts/ab.py (each first in as many rounds as the other, +1), each
# kernel's repetitions pooled per side over the rounds neither side left it disturbed in, then
# compared by time (threshold $ab_threshold). The host's state weighs on both sides alike.
# Returns compare's exit: 4 confirmed, 0 cleared; with every round disturbed, against this CPU's
# baseline 4 (the table's verdict), against another CPU's 1 (nothing judged).
ab_confirmed() {  # NAMES REF
  local names=$1 ref=$2 rc d="$out/ab" rounds=$((2 * confirm + 1)) a=()
  [ -n "$names" ] || { echo "[gate] A/B: no kernel to time" >&2; return 1; }
  echo "[gate] A/B: $names timed by the baseline's code ($ref) and this build alternately, $rounds rounds"
  for n in $names; do a+=(--case "$n"); done
  echo "[gate] A/B per kernel: time(baseline's code) / time(this build), median over rounds (range); above 1 this build is faster"
  "$py" "$ROOT/scripts/ab.py" --rounds "$rounds" --reps "$reps" --min-time "$min_time" --pool --out "$d" \
    "ref=$ref" "new=$rl" "${a[@]}" | sed 's|^|[gate] A/B |'
  rc=${PIPESTATUS[0]}
  case $rc in
    0) ;;
    3) echo "[gate] A/B: a kernel failed verification" >&2; return 3 ;;
    4) if [ "$base_cpu" = "$this_cpu" ]; then
         echo "[gate] A/B disturbed in every round: it neither clears nor confirms; the table's verdict stands (rerun on a quiet machine)"
         return 4
       fi
       echo "[gate] A/B disturbed in every round: nothing judged against another CPU's baseline (rerun on a quiet machine)" >&2
       return 1 ;;
    *) echo "[gate] A/B: scripts/ab.py failed (exit $rc)" >&2; return 1 ;;
  esac
  echo "[gate] A/B (time, threshold $ab_threshold): BASE = the baseline's code, NEW = this build"
  "$rl" compare "$d/ref/bench.json" "$d/new/bench.json" --metric time --threshold "$ab_threshold" --json-out "$d/compare.json"
  rc=$?
  case $rc in
    4) echo "[gate] confirmed: slower than the baseline's code timed beside it: a regression" ;;
    0) echo "[gate] not confirmed: not slower than the baseline's code timed beside it (the stored numbers came from another" \
            "state of the host or another CPU): passes" ;;
  esac
  return $rc
}
# A regression must reproduce: the kernels COMPARE_JSON found slower are timed again, $confirm
# times $pause s apart, against the same baseline (the first run's machine.json prices them); one
# that is not slower in any of them (a slow spell of the host: gate-xeon's README) passes with its
# numbers printed; a disturbed re-timing counts neither way. Returns 4 (confirmed), else compare's
# exit status of the re-timing that cleared it.
confirmed() {  # COMPARE_JSON METRIC
  local json=$1 m=$2 k d names rc a=()
  for k in $(seq 1 "$confirm"); do
    names=$(slower_names "$json") || return 1
    [ -n "$names" ] || { echo "[gate] compare exited 4 without a 'slower' row in $json" >&2; return 1; }
    echo "[gate] slower: $names; re-timing it ($k of $confirm) in ${pause}s to confirm"
    sleep "$pause"
    d="$out/confirm-$k"; mkdir -p "$d" && cp "$out/machine.json" "$d/" || return 1
    a=(); for n in $names; do a+=(--case "$n"); done
    "$rl" bench "${a[@]}" --out "$d" "${bench_opts[@]}" >/dev/null
    rc=$?; [ $rc = 0 ] || { echo "[gate] bench failed (exit $rc)" >&2; return $rc; }
    "$rl" model --run "$d" --remodel >/dev/null || { echo "[gate] model failed" >&2; return 1; }
    "$rl" compare "$out/baseline/bench.json" "$d/bench.json" --metric "$m" --threshold "$threshold" \
      --filter "^($(sed 's/[.]/[.]/g; s/ /|/g' <<<"$names"))\$" --json-out "$d/compare.json"
    rc=$?
    # compare's exit 1 with every row disturbed: this re-timing can neither confirm nor clear it
    if [ $rc = 1 ] && "$py" -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
sys.exit(0 if rows and all(r["status"] == "disturbed" for r in rows) else 1)' "$d/compare.json" 2>/dev/null; then
      echo "[gate] re-timing $k disturbed ($d): it neither confirms nor clears the regression"; continue
    fi
    [ $rc = 4 ] || { [ $rc = 0 ] && echo "[gate] not confirmed: not slower when re-timed ($d): passes"; return $rc; }
    json=$d/compare.json
  done
  echo "[gate] confirmed: slower in the run and in each of $confirm re-timings (but disturbed ones): a regression"
  return 4
}
# Gate on a subset KERNEL... only (the table above showed them all): compare them again, re-time a
# regression, fail on a confirmed one or on one that could not be compared.
gate_only() {  # TAG KERNEL...
  local tag=$1 re; shift
  re=$(IFS='|'; echo "^($*)\$")
  "$rl" compare "$out/baseline/bench.json" "$out/bench.json" --metric "$metric" --threshold "$threshold" \
    --filter "$re" --json-out "$out/compare_$tag.json"
  rc=$?
  [ $rc = 4 ] && [ "$confirm" -gt 0 ] && { confirmed "$out/compare_$tag.json" "$metric"; rc=$?; }
  [ $rc = 0 ] && { uncompared "$out/compare_$tag.json" || exit 1; }
  exit $rc
}
# Step 4: with the baseline's code at hand the A/B judges every kernel found slower, whatever the
# host's state; against another CPU's baseline, whose "same" proves as little as its "slower", every
# kernel. The branches below are for when that code is not at hand.
if [ "$confirm" -gt 0 ] && { [ $rc = 4 ] || { [ $rc = 0 ] && [ "$base_cpu" != "$this_cpu" ]; }; } && ref=$(ref_rooflab); then
  if [ "$base_cpu" = "$this_cpu" ]; then
    names=$(slower_names "$out/compare.json") || exit 1
  else
    names="${cases[*]}"; echo "[gate] the baseline is from another CPU ('$base_cpu'): every kernel is judged A/B"
  fi
  ab_confirmed "$names" "$ref"; rc=$?
  [ $rc = 0 ] && { uncompared "$out/compare.json" || exit 1; }
  exit $rc
fi
if [ "$base_cpu" = "$this_cpu" ]; then
  # The host's memory state: on a guest the 1-stream DRAM read moved 13 -> 24 GB/s between days,
  # and the kernels did not follow it (unchanged fused_uv's efficiency ratio reached 1.75: results/
  # baselines/gate-zen3-slow-dram/README.md), so DRAM-bound kernels are judged only against a baseline measured
  # in a state within dram_state_factor of this run's; otherwise they are printed, not gated.
  base_read=$(dram_read "$base/machine.json")
  if [ -n "$base_read" ] && [ -n "$this_read" ] && log_gap_above "$base_read" "$this_read" "$dram_state_factor"; then
    echo "[gate] this run's DRAM read $this_read GB/s and the baseline's $base_read GB/s differ by more than" \
         "${dram_state_factor}x: the host's memory is in another state, so the DRAM-bound kernels" \
         "(${dram_bound[*]}) are informational; gating the ${#compute_bound[@]} compute-bound kernels" \
         "(a baseline in this state: --update-baseline --runs 5 --baseline results/baselines/gate-<cpu class>-<state>)"
    [ $rc = 3 ] && exit $rc
    gate_only compute_bound "${compute_bound[@]}"
  fi
  [ $rc = 4 ] && [ "$confirm" -gt 0 ] && { confirmed "$out/compare.json" "$metric"; rc=$?; }
  [ $rc = 0 ] && { uncompared "$out/compare.json" || exit 1; }
  exit $rc
fi
[ $rc = 3 ] && exit $rc
# Another CPU's baseline: only the cross_cpu kernels gate, between two CPUs of a vendor in
# cross_cpu_vendors (see above); the table above informs.
base_vendor=$(vendor_of "$base/machine.json")
if [ "$base_vendor" != "$this_vendor" ] || [[ " ${cross_cpu_vendors[*]} " != *" $this_vendor "* ]]; then
  echo "[gate] baseline CPU '$base_cpu' ($base_vendor) differs from this CPU '$this_cpu' ($this_vendor): no kernel's" \
       "ECM efficiency has been shown comparable between these vendors' CPUs (docs/model.md#cross-cpu): informational" \
       "only, nothing gated; make a baseline on this CPU (--update-baseline --runs 5 --baseline results/baselines/gate-<cpu class>)"
  exit 0
fi
echo "[gate] baseline CPU '$base_cpu' differs from this CPU '$this_cpu': gating only the kernels whose" \
     "cross-CPU ECM efficiency is comparable (${#cross_cpu[@]} of ${#cases[@]}; the others are informational):"
gate_only cross_cpu "${cross_cpu[@]}"
