#!/usr/bin/env bash
# A stand-in for the rooflab binary that scripts/perf_gate.sh drives, timing nothing: characterize
# writes a machine.json naming the CPU in FAKE_CPU_ISA (comma-separated ISAs of an "AMD EPYC") and
# FAKE_CPU_SIG (its host.cpu_signature; unset or empty: none, as in a file from before it),
# bench and model write empty results, compare prints a verdict and exits FAKE_COMPARE_RC.
set -eu
cmd=$1; shift
dir=""
while [ $# -gt 0 ]; do
  case "$1" in --out|--run) dir=$2; shift 2 ;; *) shift ;; esac
done
case "$cmd" in
  characterize)
    isa=$(printf '"%s",' ${FAKE_CPU_ISA//,/ }); isa=${isa%,}
    sig=${FAKE_CPU_SIG:+, \"cpu_signature\": \"$FAKE_CPU_SIG\"}
    printf '{"schema": "rooflab.machine/1", "host": {"cpu": "AMD EPYC", "isa": [%s]%s},
 "caches": {"reported": {"L1": 49152, "L2": 1048576}}, "bandwidth": {"streams": {}}}\n' "$isa" "$sig" >"$dir/machine.json" ;;
  bench) echo '{"schema": "rooflab.bench/1", "benchmarks": []}' >"$dir/bench.json" ;;
  model) echo '{"schema": "rooflab.model/1", "rows": []}' >"$dir/model.json" ;;
  compare) echo "fake compare: exit ${FAKE_COMPARE_RC}"; exit "${FAKE_COMPARE_RC}" ;;
  *) echo "fake_rooflab.sh: unexpected command $cmd" >&2; exit 1 ;;
esac
