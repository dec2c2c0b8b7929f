#!/usr/bin/env bash
# bad_inputs.sh ROOFLAB ROOFLAB_MPI SOURCE_DIR TMP [MPIEXEC]: bad input as a demanding user types it, per
# class (numbers, threads, paths, unknown, missing, choices, help, cpus), on every command. Each case
# must answer clearly: exit 2 (usage) or 1 (a path), at most two lines on stderr (the message
# and a hint), nothing on stdout, no signal; --help exits 0. Prints the count per class.
# ROOFLAB_MPI may be "none" (no MPI build): its cases are left out.
RL=$1; MPI=$2; SRC=$3; T=$4; MPIEXEC=${5:-mpiexec}
FIX=$SRC/tests/fixtures/rtamm/machine.json; F=$SRC/tests/cli/expect.sh; mkdir -p "$T"; E=$T/stderr; fails=0
declare -A tried ok
check() {  # class expect_codes -- cmd...
  local cls=$1 codes=$2; shift 3
  if [ "$1" = "$MPIEXEC" ] && [ "$MPI" = none ]; then return; fi
  out=$(timeout 20 "$@" 2>"$E"); rc=$?
  nerr=$(wc -l <"$E")
  tried[$cls]=$(( ${tried[$cls]:-0} + 1 ))
  if [[ ",$codes," == *",$rc,"* ]] && { [ $rc = 0 ] || { [ -z "$out" ] && [ $nerr -le 2 ]; }; }; then ok[$cls]=$(( ${ok[$cls]:-0} + 1 ))
  else echo "BAD [$cls] rc=$rc nerr=$nerr: $*"; head -3 "$E"; fails=$((fails + 1)); fi
}
nums_int=(two 4x 1.5 "" " 3" 0x10 1e3 + -- 99999999999999999999 18446744073709551616 -9223372036854775809)
nums_real=(inf -inf nan NaN infinity 1e999 -1e999 x 1e-3x "" " 0.5" 0x1p99999)
for v in "${nums_int[@]}"; do
  check numbers 2 -- $RL characterize --threads "$v" --out $T
  check numbers 2 -- $RL counters --runs "$v"
  check numbers 2 -- $RL run-case sinkhorn/c2r/f64/8x8/part:col/threads:1 --runs "$v"
  check numbers 2 -- $RL sinkhorn --grid 4x4 --reg 1 --max-iter "$v"
  check numbers 2 -- $RL rtamm evaluate --machine $FIX --shapes "$v"
  check numbers 2 -- $RL gemm-knobs evaluate --out $T --shapes "$v"
  check numbers 2 -- $RL gpu-characterize --reps "$v"
  check numbers 2 -- $RL mpi --np "$v" --dry-run
done
for v in "${nums_real[@]}"; do
  check numbers 2 -- $RL sinkhorn --grid 4x4 --reg 1 --tol "$v"
  check numbers 2 -- $RL sinkhorn --grid 4x4 --reg "$v"
  check numbers 2 -- $RL rtamm units --machine $FIX --quiet-budget "$v"
  check numbers 2 -- $RL gemm-knobs tune --shape 8x8x8 --wait-quiet "$v"
done
for v in -1 0 65 4097 1001; do check numbers 2 -- $RL rtamm pool --machine $FIX --pool-size "$v"; done
for v in -5 0 1.0000001 2; do check numbers 2 -- $MPIEXEC -n 1 $MPI --design ring --size 8x8 --fi "$v"; done
for v in 4x 4x4y x4 -4x4 0x4 9223372036854775808x2; do check numbers 1,2 -- $RL sinkhorn --grid "$v" --reg 1; done
for v in 9223372036854775807x3 3000000x3000000 100000x100000000; do check numbers 1 -- $RL sinkhorn --grid "$v" --reg 1; done
for v in 0 -1 2147483648 2147483647 4294967297 9223372036854775808 1025; do
  check threads 2 -- $RL characterize --threads "$v"
  check threads 2 -- $RL sinkhorn --grid 4x4 --reg 1 --threads "$v"
  check threads 2 -- $RL rtamm units --machine $FIX --threads "$v"
  check threads 2 -- $RL gemm-knobs tune --shape 8x8x8 --threads "$v"
done
for p in "$F/sub" "$F" /proc/rooflab-x/y "/dev/null/x"; do
  check paths 1 -- $RL bench --case sinkhorn/c2r/f64/8x8/part:iter/threads:1 --out "$p"
  check paths 1 -- $RL characterize --out "$p"
  check paths 1 -- $RL counters --out "$p"
  check paths 1 -- $RL rtamm evaluate --machine $FIX --out "$p"
  check paths 1 -- $RL gemm-knobs build-nn --out "$p"
  check paths 1 -- $RL model --bench $SRC/tests/fixtures/run_small/bench.json --out "$p"
  check paths 2 -- $MPIEXEC -n 1 $MPI --design ring --size 8x8 --iters 1 --out "$p"  # rooflab_mpi: every refusal is 2
  check paths 2 -- $MPIEXEC -n 2 $MPI --pingpong --out "$p"
done
for p in /nonexistent/m.json /tmp "$F/x"; do
  check paths 1 -- $RL bench --machine "$p" --out $T
  check paths 1 -- $RL model --bench "$p"
  check paths 1 -- $RL model --mpi-sweep "$p"
  check paths 1 -- $RL rtamm pool --machine "$p"
  check paths 1 -- $RL sinkhorn --cost "$p" --reg 1
  check paths 1 -- $RL gemm-knobs predict --shape 8x8x8 --machine "$p"
done
check paths 1 -- $RL sinkhorn --grid 4x4 --reg 1 --plan /tmp
check paths 1 -- $RL sinkhorn --grid 4x4 --reg 1 --plan "$F/p.txt"
check paths 2 -- $RL bench --out=
for c in list characterize bench model counters run-case sinkhorn gpu-characterize info; do
  check unknown 2 -- $RL $c --bogus; check unknown 2 -- $RL $c -x; check unknown 2 -- $RL $c --bogus=1
done
for c in "rtamm pool" "rtamm units" "rtamm evaluate" "rtamm calibrate" "rtamm rescore" "gemm-knobs tune" "gemm-knobs predict" "gemm-knobs build-nn" "gemm-knobs evaluate"; do
  check unknown 2 -- $RL $c --bogus
done
for c in frob "" LIST --bogus; do check unknown 2 -- $RL "$c"; done
check unknown 2 -- $RL rtamm frob; check unknown 2 -- $RL gemm-knobs frob; check unknown 2 -- $MPIEXEC -n 1 $MPI --bogus
check unknown 2 -- $RL info extra; check unknown 2 -- $RL list extra
for o in --profile --filter; do check missing 2 -- $RL list $o; done
for o in --out --machine --case --profile --filter; do check missing 2 -- $RL bench $o; done
for o in --run --bench --machine --out --mpi-sweep; do check missing 2 -- $RL model $o; done
check unknown 2 -- $RL model --mpi-sweep $SRC/tests/fixtures/mpi_run --run $SRC/tests/fixtures/mpi_run
check missing 2 -- $RL characterize --out; check missing 2 -- $RL characterize --threads
check missing 2 -- $RL counters --runs; check missing 2 -- $RL sinkhorn --grid; check missing 2 -- $RL sinkhorn --grid 4x4
check missing 2 -- $RL rtamm units; check missing 2 -- $RL rtamm rescore --machine $FIX
check missing 2 -- $RL gemm-knobs tune; check missing 2 -- $RL gemm-knobs evaluate --shapes 3
check missing 2 -- $RL mpi --design ring; check missing 2 -- $RL mpi --np
check missing 2 -- $RL run-case; check missing 2 -- $MPIEXEC -n 1 $MPI --size
check missing 2 -- $RL list --filter --verbose; check missing 2 -- $RL bench --out --profile smoke
for c in list characterize bench model counters run-case sinkhorn gpu-characterize info mpi report claims compare "rtamm pool" "rtamm units" "rtamm evaluate" "rtamm calibrate" "rtamm rescore" "gemm-knobs tune" "gemm-knobs predict" "gemm-knobs build-nn" "gemm-knobs evaluate"; do
  check help 0 -- $RL $c --help
done
check help 0 -- $RL help; check help 0 -- $RL --help; check help 0 -- $RL rtamm help; check help 0 -- $RL gemm-knobs --help
check help 0 -- $MPIEXEC -n 1 $MPI --help
for v in full huge "" QUICK; do
  check choices 2 -- $RL list --profile "$v"; check choices 2 -- $RL rtamm units --machine $FIX --profile "$v"
  check choices 2 -- $RL counters --profile "$v"
done
for v in f16 ""; do check choices 2 -- $RL sinkhorn --grid 4x4 --reg 1 --dtype "$v"; check choices 2 -- $RL gemm-knobs tune --shape 8x8x8 --dtype "$v"; done
for v in avx1024 none; do check choices 2 -- $RL sinkhorn --grid 4x4 --reg 1 --isa "$v"; check choices 2 -- $RL gemm-knobs tune --shape 8x8x8 --isa "$v"; done
check choices 2 -- $RL counters --backend perf; check choices 2 -- $RL run-case x --backend cachegrind; check choices 2 -- $RL counters --ll-level L1
check choices 2 -- $RL list --verbose=maybe
# One CPU given (the first of this shell's mask): two ranks would take turns on it, so the
# ping-pong and the MPI sweep refuse, saying why, instead of timing the scheduler's slices.
cpu0=$(awk '/^Cpus_allowed_list/ {split($2, a, /[-,]/); print a[1]}' /proc/self/status)
if [ "$MPI" != none ]; then
  check cpus 2 -- taskset -c "$cpu0" $MPIEXEC -n 2 $MPI --pingpong
  grep -q "more ranks on this host than its 1 CPU" "$E" || { echo "BAD [cpus] --pingpong on one CPU: $(head -1 "$E")"; fails=$((fails + 1)); }
  check cpus 1 -- taskset -c "$cpu0" $SRC/scripts/mpi_sweep.sh --run "$T/sweep" --build "$(dirname "$MPI")"
  grep -q "1 CPU (nproc" "$E" || { echo "BAD [cpus] mpi_sweep.sh on one CPU: $(head -1 "$E")"; fails=$((fails + 1)); }
fi
total=0
for k in "${!tried[@]}"; do echo "$k: ${ok[$k]:-0}/${tried[$k]} clear"; total=$((total + tried[$k])); done
echo "total $total, unclear $fails"
[ $fails = 0 ]
