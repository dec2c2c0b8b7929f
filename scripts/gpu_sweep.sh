#!/usr/bin/env bash
# The GPU measurements of issue 9 on a machine with a CUDA device: device ceilings, the
# MAP-UOT tile sweep (MAP-UOT Fig. 8: ty = 2, part 2 over tx x ny, part 4 over rtx x rny at
# 10240 x 10240 f32), the three variants at the default tiles, the model and the figures.
#
#   scripts/gpu_sweep.sh [--rooflab BIN] [--out DIR] [--size N] [--dtype f32|f64] [--quick]
#
# --quick: a 3 x 3 sweep of each part (for a first look; the full sweep is 5 x 6 + 6 x 6).
# Exits 77 (skipped) when the build has no usable device. On the shared 2-core VM wrap it in
# `flock /tmp/rooflab-timing.lock` like every timing job.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
rooflab=$here/build/release/rooflab
out=$here/results/gpu-sweep-$(date -u +%Y%m%dT%H%M%SZ)
n=10240
dtype=f32
quick=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --rooflab) rooflab=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --size) n=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "gpu_sweep.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -x $rooflab ]] || { echo "gpu_sweep.sh: $rooflab not found (build first, or --rooflab BIN)" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] || { echo "gpu_sweep.sh: --size takes an integer, got '$n'" >&2; exit 2; }
[[ $dtype == f32 || $dtype == f64 ]] || { echo "gpu_sweep.sh: --dtype is f32 or f64" >&2; exit 2; }
python=${ROOFLAB_PYTHON:-$here/.venv/bin/python}
[[ -x $python ]] || python=python3

mkdir -p "$out"
if [[ ! -f $out/machine.json ]]; then
  echo "[gpu_sweep] rooflab characterize (CPU part of machine.json)" >&2
  "$rooflab" characterize --profile quick --out "$out" >/dev/null
fi
echo "[gpu_sweep] rooflab gpu-characterize" >&2
set +e
"$rooflab" gpu-characterize --out "$out" >/dev/null
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  echo "gpu_sweep.sh: skipped: gpu-characterize failed (no CUDA device?)" >&2
  exit 77
fi

if [[ $quick -eq 1 ]]; then
  tx_list="32 128 512"; ny_list="2 8 32"; rtx_list="64 256 1024"; rny_list="2 8 32"
else
  tx_list="32 64 128 256 512"; ny_list="1 2 4 8 16 32"
  rtx_list="32 64 128 256 512 1024"; rny_list="1 2 4 8 16 32"
fi
dims=${n}x${n}
cases=()
for v in mapuot fused_uv; do
  part=""; [[ $v == mapuot ]] && part="/part:iter"
  cases+=("sinkhorn_cuda/$v/$dtype/$dims/ty:2/tx:32/ny:8/rtx:128/rny:8$part/threads:1")
done
cases+=("sinkhorn_cuda/baseline/$dtype/$dims/threads:1")
for tx in $tx_list; do
  for ny in $ny_list; do
    cases+=("sinkhorn_cuda/mapuot/$dtype/$dims/ty:2/tx:$tx/ny:$ny/rtx:128/rny:8/part:p2/threads:1")
  done
done
for rtx in $rtx_list; do
  for rny in $rny_list; do
    cases+=("sinkhorn_cuda/mapuot/$dtype/$dims/ty:2/tx:32/ny:8/rtx:$rtx/rny:$rny/part:p4/threads:1")
  done
done
args=()
for c in "${cases[@]}"; do args+=(--case "$c"); done
echo "[gpu_sweep] rooflab bench: ${#cases[@]} cases (each verified against the CPU reference first)" >&2
set +e  # exit 3 = a case failed verification: it is reported in bench.json, keep going
"$rooflab" bench "${args[@]}" --out "$out" --benchmark_repetitions=5 --benchmark_min_time=0.2
bench_rc=$?
set -e
[[ $bench_rc -eq 0 || $bench_rc -eq 3 ]] || exit $bench_rc
"$rooflab" model --run "$out"
for fig in gpu_roofline gpu_sweep; do
  MPLBACKEND=Agg "$python" "$here/plots/figure.py" "$fig" "$out" --out "$out/$fig.png"
done
echo "[gpu_sweep] results in $out" >&2
exit $bench_rc
