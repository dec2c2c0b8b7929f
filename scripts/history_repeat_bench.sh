#!/usr/bin/env bash
# Repeated `rooflab bench` + `rooflab model` runs of unchanged code, each under the timing lock:
# the real series scripts/history_check_rates.py --real measures the check's false alarms on.
#   scripts/history_repeat_bench.sh N OUT_DIR MACHINE_JSON [FILTER] [ROOFLAB]
# Writes OUT_DIR/1 .. OUT_DIR/N, each a run directory (machine.json copied in, bench.json, model.json).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { sed -n '4,5p' "$0" >&2; exit 2; }
n=$1; out=$2; machine=$3
filter=${4:-'gemm/blocked|floyd_warshall/simd'}
rl=${5:-build/rel/rooflab}
[ -f "$machine" ] || { echo "history_repeat_bench.sh: $machine: no such machine.json" >&2; exit 2; }
for i in $(seq 1 "$n"); do
  d=$out/$i
  mkdir -p "$d"
  cp "$machine" "$d/machine.json"
  rc=0
  scripts/cpu_lock.sh time "$rl" bench --profile smoke --filter "$filter" --out "$d" >"$d/bench.log" 2>&1 || rc=$?
  # 3: a case failed verification; its row says so and the reader leaves it out.
  [ $rc = 0 ] || [ $rc = 3 ] || { echo "history_repeat_bench.sh: run $i: rooflab bench exit $rc (see $d/bench.log)" >&2; exit 1; }
  "$rl" model --run "$d" >"$d/model.log" 2>&1
  echo "run $i/$n done"
done
