#!/usr/bin/env bash
# The performance regression gate (run by `./run_all.sh --test`, hence by CI):
#   1. characterize this machine (quick profile, 1 thread: every gated kernel runs on one,
#      no likwid) so predictions use its own ceilings (the Sinkhorn kernels stream 4 rows at
#      once: their floors use the 4-stream DRAM ceilings of machine.json's bandwidth.streams);
#   2. time a handful of kernels (compute-bound and DRAM-bound; ~1 s each) with 9
#      repetitions, verified first as always; `rooflab model` predicts them into model.json;
#   3. `rooflab compare BASELINE NEW --metric ecm`: ECM efficiency (attained / the ECM prediction
#      from the ceilings measured in the same run) is compared, so a machine that is uniformly
#      faster or slower than the one the baseline came from does not trip the gate; both sides are
#      priced by this build's model (`rooflab model --remodel`: each with its own machine's caches);
#      a benchmark fails the gate when the Mann-Whitney U test says p < 0.01 AND its
#      efficiency dropped by more than the threshold. Against a baseline from another CPU only the
#      kernels in `cross_cpu` below gate (their cross-CPU ratios are within 0.85-1.15); the
#      others are compared and printed.
# usage: scripts/perf_gate.sh [--rooflab BIN] [--out DIR] [--baseline DIR] [--threshold T]
#                             [--update-baseline]
#   --baseline DIR     default: the results/baselines/gate*/ made on this CPU (plots/cpu_identity.py),
#                      else results/baselines/gate/; against another CPU's only `cross_cpu` gates
#   --update-baseline  writes the run into the baseline directory instead of comparing (without
#                      --baseline: the one made on this CPU, which must exist)
# Exit: 0 pass, 4 a significant regression (against another CPU's baseline: of a `cross_cpu`
# kernel), 3 a kernel failed verification, 1 error (a gated kernel that could not be compared too).
# The threshold (default 0.25) and the false-alarm rate measured on the 2-core VM are in
# results/baselines/gate/README.md.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

rl="$ROOT/build/release/rooflab"; out=""; base=""; threshold=0.25; update=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rooflab) [ $# -ge 2 ] || { echo "perf_gate.sh: --rooflab needs a value" >&2; exit 2; }; rl=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "perf_gate.sh: --out needs a value" >&2; exit 2; }; out=$2; shift 2 ;;
    --baseline) [ $# -ge 2 ] || { echo "perf_gate.sh: --baseline needs a value" >&2; exit 2; }; base=$2; shift 2 ;;
    --threshold) [ $# -ge 2 ] || { echo "perf_gate.sh: --threshold needs a value" >&2; exit 2; }; threshold=$2; shift 2 ;;
    --update-baseline) update=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "perf_gate.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$rl" ] || { echo "perf_gate.sh: $rl not built (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp -d /tmp/rooflab-gate.XXXXXX)
mkdir -p "$out" || exit 1

# The gated kernels: names are fixed so the baseline's rows match (AVX2 runs on every x86-64
# this project targets; an AVX-512 machine still runs the AVX2 path). Each is compute-bound or
# far beyond any cache (128 MiB): a working set near the L3 size would be predicted from L3 in
# one run and DRAM in the next, since the measured L3 capacity moves between runs on a VM.
cases=(
  gemm/blocked/avx2/f64/512x512x512/threads:1
  floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1
  sinkhorn/microkernel/avx2/f64/4096x4096/part:iter/threads:1
  sinkhorn/fused_uv/avx2/f64/4096x4096/threads:1
  sinkhorn/c2r/f64/4096x4096/part:col/threads:1
)
args=()
for c in "${cases[@]}"; do args+=(--case "$c"); done
# The kernels that gate against a baseline from another CPU: ECM efficiency ratios within 0.85-1.15
# between the committed Zen 3, Zen 4 and Zen 5 baselines (results/baselines/gate-zen4/README.md;
# tests/roofline/test_remodel.cpp). floyd_warshall/simd since its model maps the tile to the L1's
# sets (its rows' 2 KiB stride puts a 64 x 64 tile in 8 of 64 sets: C from L2 at every k, priced
# at the L2 read ceiling). Not (yet) the others: fused_uv and c2r part:col differ by 1.22-1.27
# against the Zen 3's older run (docs/model.md#cross-cpu).
cross_cpu=(
  gemm/blocked/avx2/f64/512x512x512/threads:1
  floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1
  sinkhorn/microkernel/avx2/f64/4096x4096/part:iter/threads:1
)

echo "[gate] characterize -> $out/machine.json"
"$rl" characterize --profile quick --threads 1 --no-likwid --out "$out" >/dev/null || { echo "[gate] characterize failed" >&2; exit 1; }
py="$ROOT/.venv/bin/python"; [ -x "$py" ] || py=python3
# The CPU a baseline belongs to (plots/rooflab/data/cpu_identity.py, the rule the fleet report
# and the history share): the model name and host.cpu_signature (CPUID's vendor, family, model,
# stepping) where both files record it; for a file older than that, the name, the ISAs and the
# private cache sizes (under a hypervisor the model name can be generic: "AMD EPYC" for a Zen 3
# and a Zen 5). The default baseline is the one made on this CPU; against a baseline from another
# CPU the comparison is printed but a regression does not fail the gate (see the end).
cpu_of() {  # FILE [OTHER]: what identifies FILE's CPU when compared with OTHER's ("?": unreadable)
  "$py" "$ROOT/plots/cpu_identity.py" "$@" 2>/dev/null || echo "?"
}
this_cpu=$(cpu_of "$out/machine.json")
if [ -z "$base" ]; then
  for d in "$ROOT"/results/baselines/gate*/; do
    [ -f "$d/machine.json" ] && [ "$(cpu_of "$d/machine.json" "$out/machine.json")" = "$(cpu_of "$out/machine.json" "$d/machine.json")" ] && { base=${d%/}; break; }
  done
  if [ -z "$base" ]; then
    [ "$update" = 1 ] && { echo "perf_gate.sh: no baseline for this CPU ($this_cpu) under results/baselines/gate*/: name the new one with --baseline results/baselines/gate-<cpu class>" >&2; exit 2; }
    base="$ROOT/results/baselines/gate"
  fi
fi
# The gate normalizes by the most repeatable ceilings: the 1-stream DRAM read stayed within 1%
# between gate runs here while the 4-stream one moved 32 -> 38 GB/s (the kernels did not follow),
# which pushed efficiency ratios of unchanged DRAM kernels to 1.24. So the S-stream section is
# dropped from the gate's machine.json and those floors fall back to 1-stream ones (with a note).
"$py" - "$out/machine.json" <<'PY' || { echo "[gate] cannot edit $out/machine.json" >&2; exit 1; }
import json, sys
m = json.load(open(sys.argv[1]))
if m.get("bandwidth", {}).pop("streams", None) is not None:
    json.dump(m, open(sys.argv[1], "w"), indent=1)
PY
echo "[gate] bench ${#cases[@]} kernels x 9 repetitions -> $out/bench.json"
"$rl" bench "${args[@]}" --out "$out" --benchmark_repetitions=9 --benchmark_min_time=0.05 \
  --benchmark_display_aggregates_only=true >/dev/null
rc=$?
[ $rc = 0 ] || { echo "[gate] bench failed (exit $rc)" >&2; exit $rc; }
# The predictions (model.json is the one prediction file; bench.json holds measurements).
"$rl" model --run "$out" --remodel >/dev/null || { echo "[gate] model failed" >&2; exit 1; }

# Say when a prediction fell back to a 1-stream ceiling (always, for the 4-row Sinkhorn kernels:
# see above). The baseline's own model.json is not read: the compare re-prices its measurements.
"$py" - "$out/model.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])).get("rows", []):
    for n in r.get("prediction_notes") or []: print(f"[gate] note: {r.get('name')}: {n}")
PY
if [ "$update" = 1 ]; then
  mkdir -p "$base" && cp "$out/bench.json" "$out/machine.json" "$out/model.json" "$base/" && echo "[gate] baseline written to $base"
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
echo "[gate] compare (ECM efficiency, threshold $threshold, alpha 0.01) against $base (re-priced by this build's model)"
"$rl" compare "$out/baseline/bench.json" "$out/bench.json" --metric ecm --threshold "$threshold" \
  --json-out "$out/compare.json"
rc=$?
# A gated kernel the compare could not judge (no ECM prediction on a side, e.g. a machine.json
# without a level's bandwidth; or missing from a side) is an error, not a pass.
uncompared() {  # COMPARE_JSON: exit 1 (with the reasons) when a row is "too few" or "only in ..."
  "$py" - "$1" <<'PY'
import json, sys
bad = [r for r in json.load(open(sys.argv[1]))["rows"] if r["status"] == "too few" or r["status"].startswith("only in")]
for r in bad: print(f"[gate] error: {r['name']} not compared: {r['status']} ({r.get('note', '')})", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
if [ "$base_cpu" = "$this_cpu" ]; then
  [ $rc = 0 ] && { uncompared "$out/compare.json" || exit 1; }
  exit $rc
fi
[ $rc = 3 ] && exit $rc
# Another CPU's baseline: only the cross_cpu kernels gate (see above); the table above informs.
re=$(IFS='|'; echo "^(${cross_cpu[*]})\$")
echo "[gate] baseline CPU '$base_cpu' differs from this CPU '$this_cpu': gating only the kernels whose" \
     "cross-CPU ECM efficiency is comparable (${#cross_cpu[@]} of ${#cases[@]}; the others are informational):"
"$rl" compare "$out/baseline/bench.json" "$out/bench.json" --metric ecm --threshold "$threshold" \
  --filter "$re" --json-out "$out/compare_cross_cpu.json"
rc=$?
[ $rc = 0 ] && { uncompared "$out/compare_cross_cpu.json" || exit 1; }
exit $rc
