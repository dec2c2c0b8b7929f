#!/usr/bin/env bash
# The GEMM paper evaluation (issue 5) into one run directory: machine.json (characterized when
# absent), the 125-shape grid {256..4096}^3 of the paper profile (`rooflab bench --profile paper
# --filter '^gemm/'`), the roofline model with the tight per-BRGEMM roofline (DIR/model.json,
# `rooflab model`), DIR/gemm_summary.json (WHM per implementation and the
# targets), simulated L2 misses of SFC-CA k_layers 1/2/4 vs the best baseline (Fig. 7), the GEMM
# figures and the HTML report. Every step that runs kernels holds /tmp/rooflab-timing.lock.
# Cost on the 2-core VM (measured under load, so upper bounds): the paper profile's own settings
# (5 repetitions x >= 0.5 s) give >= 2.5 s per case, ~60+ min for all 1375 cases; with
# --reps 3 --min-time 0.05 all 1375 cases took 23 min quietly, and the cachegrind step ~2 min
# at 1 thread (--l2-threads; at 2 threads BLIS's spinning barriers under valgrind exceeded the
# 600 s case timeout). --interleave costs a setup and verification per
# repetition (~1 s each): about 3x the bench time.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<'TXT'
usage: scripts/gemm_paper.sh [options]

  --out DIR          run directory (default results/<host>/gemm-paper-<UTC timestamp>)
  --machine FILE     copy this machine.json instead of characterizing (when DIR has none)
  --rooflab PATH     rooflab binary (default build/release/rooflab)
  --dtype D          f64, f32 or all (default all)
  --max-size N       only shapes with M, N, K <= N (256..4096; default 4096 = the whole grid)
  --filter REGEX     benchmark filter instead of --dtype / --max-size (e.g. a subset of shapes)
  --reps R           Google Benchmark repetitions (default: the paper profile's, 5)
  --min-time S       seconds per repetition (default: the paper profile's, 0.5)
  --interleave       run the repetitions of all benchmarks in random order (Google Benchmark's
                     --benchmark_enable_random_interleaving): a load that changes during the
                     run then affects every implementation alike (costs a setup per repetition)
  --l2-shape MxNxK   shape of the L2-miss experiment (default 512x512x512: ~1 min per case
                     under cachegrind on this VM; 1024^3 takes ~8x longer)
  --l2-dtype D       dtype of the L2-miss experiment (default f64)
  --l2-threads T     threads of the L2-miss cases (default 1: cachegrind serializes threads into
                     one simulated cache, so 1 thread is what maps onto one core's L2, and a
                     threaded library's spinning barriers made BLIS at threads:2 run > 10 min)
  --skip-bench       reuse DIR/bench.json (redo model, summary, counters, figures)
  --skip-counters    no L2-miss experiment
  --no-lock          do not take /tmp/rooflab-timing.lock (when the caller holds it)
  -h, --help         this text

Steps: characterize (if needed), bench, model (with the tight roofline), summary, L2 counters (+ the same cases timed
natively into DIR/gemm_l2/), figures (DIR/gemm_*.png), report (DIR/report/index.html).
TXT
}

out=""; machine=""; RL="$ROOT/build/release/rooflab"; dtype=all; max_size=4096
filter=""; reps=""; min_time=""; interleave=0; l2_shape=512x512x512; l2_dtype=f64; l2_threads=1; skip_bench=0; skip_counters=0; lock=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --machine) machine=${2:?--machine needs a value}; shift 2 ;;
    --rooflab) RL=${2:?--rooflab needs a value}; shift 2 ;;
    --dtype) dtype=${2:?--dtype needs a value}; shift 2 ;;
    --max-size) max_size=${2:?--max-size needs a value}; shift 2 ;;
    --filter) filter=${2:?--filter needs a value}; shift 2 ;;
    --reps) reps=${2:?--reps needs a value}; shift 2 ;;
    --min-time) min_time=${2:?--min-time needs a value}; shift 2 ;;
    --interleave) interleave=1; shift ;;
    --l2-shape) l2_shape=${2:?--l2-shape needs a value}; shift 2 ;;
    --l2-dtype) l2_dtype=${2:?--l2-dtype needs a value}; shift 2 ;;
    --l2-threads) l2_threads=${2:?--l2-threads needs a value}; shift 2 ;;
    --skip-bench) skip_bench=1; shift ;;
    --skip-counters) skip_counters=1; shift ;;
    --no-lock) lock=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gemm_paper.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "gemm_paper.sh: $*" >&2; exit 1; }
case "$dtype" in f64|f32) dsel=$dtype ;; all) dsel='f(32|64)' ;; *) die "--dtype must be f64, f32 or all, got '$dtype'" ;; esac
case "$l2_dtype" in f64|f32) ;; *) die "--l2-dtype must be f64 or f32, got '$l2_dtype'" ;; esac
case "$l2_threads" in ''|*[!0-9]*|0) die "--l2-threads must be a positive integer, got '$l2_threads'" ;; esac
case "$max_size" in 256|512|1024|2048|4096) ;; *) die "--max-size must be one of 256 512 1024 2048 4096, got '$max_size'" ;; esac
[[ "$l2_shape" =~ ^[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$ ]] || die "--l2-shape must be MxNxK, got '$l2_shape'"
[ -z "$reps" ] || [[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer, got '$reps'"
[ -z "$min_time" ] || [[ "$min_time" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--min-time must be a number of seconds, got '$min_time'"
[ -x "$RL" ] || die "$RL is not built (cmake --preset release && cmake --build --preset release --target rooflab, or --rooflab PATH)"
PY="$ROOT/.venv/bin/python"; [ -x "$PY" ] || PY=python3

sizes=""; for s in 256 512 1024 2048 4096; do [ "$s" -le "$max_size" ] && sizes="${sizes:+$sizes|}$s"; done
if [ -n "$filter" ]; then filter="^(?=.*(${filter}))gemm/"   # the caller's, within the family
elif [ "$dtype$max_size" = all4096 ]; then filter='^gemm/'
else filter="^gemm/.*/${dsel}/(${sizes})x(${sizes})x(${sizes})/"; fi
gb_args=()
[ -n "$reps" ] && gb_args+=("--benchmark_repetitions=$reps")
[ -n "$min_time" ] && gb_args+=("--benchmark_min_time=$min_time")
[ "$interleave" = 1 ] && gb_args+=("--benchmark_enable_random_interleaving=true")

[ -n "$out" ] || out="$ROOT/results/$(hostname)/gemm-paper-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out" 2>/dev/null && [ -w "$out" ] || die "output directory '$out' cannot be created or is not writable"
out=$(cd "$out" && pwd)
locked() { if [ "$lock" = 1 ]; then flock /tmp/rooflab-timing.lock "$@"; else "$@"; fi; }

T0=$(date +%s); NSTEPS=8; step_i=0
fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
step() { step_i=$((step_i + 1)); echo "==> [gemm $step_i/$NSTEPS] $1  (elapsed $(fmt $(( $(date +%s) - T0 ))))"; }

ncases=$("$RL" list --profile paper --filter "$filter" 2>/dev/null | wc -l)
[ "$ncases" -gt 0 ] || die "no paper-profile benchmark matches '$filter' (see rooflab list --profile paper --filter gemm)"
echo "gemm paper evaluation: $ncases benchmarks ('$filter'), run directory $out"

step "machine -> $out/machine.json"
if [ -f "$out/machine.json" ]; then echo "(present; reused)"
elif [ -n "$machine" ]; then cp "$machine" "$out/machine.json" || die "cannot read $machine"
else locked "$RL" characterize --profile paper --out "$out" >/dev/null || die "characterize failed"; fi

step "bench: $ncases benchmarks (paper profile${reps:+, $reps repetitions}${min_time:+, min time $min_time s}) -> $out/bench.json"
bench_rc=0
if [ "$skip_bench" = 1 ]; then
  [ -f "$out/bench.json" ] || die "--skip-bench but $out/bench.json does not exist"
  echo "(skipped: reusing bench.json)"
else
  locked "$RL" bench --profile paper --filter "$filter" --out "$out" --machine "$out/machine.json" "${gb_args[@]}" \
    > "$out/gemm_bench.log"
  bench_rc=$?
  [ $bench_rc = 0 ] || [ $bench_rc = 3 ] || die "bench failed (exit $bench_rc; see $out/gemm_bench.log)"
fi

step "roofline model and the tight per-BRGEMM roofline -> $out/model.json"
"$RL" model --run "$out" >/dev/null || die "model failed"

step "WHM summary and targets -> $out/gemm_summary.json"
"$PY" "$ROOT/plots/gemm_summary.py" "$out" || die "summary failed"

step "simulated L2 misses ($l2_dtype $l2_shape, cachegrind LL = L2) -> $out/gemm_l2/counters.json"
if [ "$skip_counters" = 1 ]; then echo "(skipped)"
else
  # The best baseline for the dtype (at the run's largest thread count), from the summary just written.
  read -r _ base < <("$PY" - "$out/gemm_summary.json" "$l2_dtype" <<'PYEOF'
import json, sys
doc, dt = json.load(open(sys.argv[1])), sys.argv[2]
gs = [g for g in doc["groups"] if g["dtype"] == dt]
g = max(gs, key=lambda g: g["threads"]) if gs else None
print(g["threads"] if g else 0, (g or {}).get("best_baseline") or "-")
PYEOF
  )
  threads=$l2_threads
  # valgrind cannot run AVX-512: the simulated SFC-CA uses the AVX2 micro-kernel (kbf: its default).
  cases=()
  for kl in 1 2 4; do cases+=(--case "gemm/sfc_ca/avx2/$l2_dtype/$l2_shape/k_layers:$kl/threads:$threads"); done
  if [ "$base" != - ]; then cases+=(--case "gemm/$base/$l2_dtype/$l2_shape/threads:$threads")
  else echo "warning: no $l2_dtype baseline in this run: SFC-CA only"; fi
  mkdir -p "$out/gemm_l2"
  rm -f "$out/gemm_l2/counters.json"  # counters merges into an existing file; start clean
  locked "$RL" counters --backend cachegrind --ll-level L2 --runs 1 --machine "$out/machine.json" \
    --out "$out/gemm_l2" "${cases[@]}" || echo "warning: some L2-miss case failed (see $out/gemm_l2/counters.json)"
  # the same cases timed natively, for the GFLOP/s under the bars (those cachegrind ran: bench
  # stops at an invalid case, e.g. k_layers above the K blocks of a small K)
  mapfile -t okcases < <("$PY" -c 'import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    if r.get("status") == "ok": print("--case"); print(r["name"])' "$out/gemm_l2/counters.json" 2>/dev/null)
  [ ${#okcases[@]} -gt 0 ] && locked "$RL" bench --profile paper --out "$out/gemm_l2" --machine "$out/machine.json" "${okcases[@]}" "${gb_args[@]}" \
    > "$out/gemm_l2/bench.log" && "$RL" model --run "$out/gemm_l2" --machine "$out/machine.json" >/dev/null \
    || echo "warning: timing the L2-miss cases failed (see $out/gemm_l2/bench.log)"
fi

step "figures -> $out/gemm_*.png"
for fig in gemm_performance gemm_whm gemm_l2_misses; do
  MPLBACKEND=Agg "$PY" "$ROOT/plots/figure.py" "$fig" "$out" --out "$out/$fig.png" || echo "warning: $fig not drawn"
done

step "report -> $out/report/index.html"
"$RL" report "$out" || echo "warning: report failed"
echo "total $(fmt $(( $(date +%s) - T0 ))); summary: $out/gemm_summary.json"
exit $bench_rc
