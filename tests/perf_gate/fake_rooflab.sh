#!/usr/bin/env bash
# A stand-in for the rooflab binary that scripts/perf_gate.sh drives, timing nothing: characterize
# writes a machine.json naming the CPU in FAKE_CPU_ISA (comma-separated ISAs of an "AMD EPYC") and
# FAKE_CPU_SIG (its host.cpu_signature; unset or empty: none, as in a file from before it) and
# FAKE_DRAM_READ (its 1-thread DRAM read in GB/s; unset: none),
# bench writes one 1 ms repetition of each --case, model an empty result (with FAKE_EFFS, space-separated ECM efficiencies, the
# model of DIR/run-I lists the gemm case at the I-th), compare prints a verdict and exits FAKE_COMPARE_RC; with
# --filter F and FAKE_SLOWER (the name of the kernel that got slower) it exits 4 when F matches
# that name, else 0 (the gate's second compare, of the kernels that gate across CPUs). Its
# --json-out lists FAKE_UNCOMPARED (a kernel name) with status FAKE_UNCOMPARED_STATUS (default
# "too few") when set (and --filter matches it);
# its arguments go to compare.args beside it. When it exits 4 its --json-out lists FAKE_SLOWER as
# "slower"; the gate's re-timings (--json-out DIR/confirm-K/...) find it slower again while
# K <= FAKE_REPRODUCE (default: always); re-timing FAKE_DISTURBED_RETIMING exits 1, its row disturbed.
# The A/B's compare (--json-out DIR/ab/...) exits FAKE_AB_RC (default 0), listing FAKE_SLOWER as
# "slower" when 4. bench marks its result disturbed when its --out directory's name matches the regex
# FAKE_DISTURBED_BENCH (an A/B round: ref-2, new-1, ...), and appends its --out directory to FAKE_BENCH_LOG when set, with "FAKE_TAG"
# (the A/B's reference binary can be this script under another FAKE_TAG: a symlink's name).
set -eu
cmd=$1; shift
args="$*"
dir=""; filter=""; json_out=""; cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--run) dir=$2; shift 2 ;; --filter) filter=$2; shift 2 ;; --json-out) json_out=$2; shift 2 ;;
    --case) cases+=("$2"); shift 2 ;; *) shift ;;
  esac
done
case "$cmd" in
  characterize)
    isa=$(printf '"%s",' ${FAKE_CPU_ISA//,/ }); isa=${isa%,}
    sig=${FAKE_CPU_SIG:+, \"cpu_signature\": \"$FAKE_CPU_SIG\"}
    dram=""; [ -z "${FAKE_DRAM_READ:-}" ] || dram=", \"levels\": {\"DRAM\": {\"read\": {\"1\": $FAKE_DRAM_READ}}}"
    printf '{"schema": "rooflab.machine/1", "host": {"cpu": "AMD EPYC", "isa": [%s]%s},
 "caches": {"reported": {"L1": 49152, "L2": 1048576}}, "bandwidth": {"streams": {}%s}}\n' "$isa" "$sig" "$dram" >"$dir/machine.json" ;;
  bench) mkdir -p "$dir"; rows=""; dist=false
         [[ ${dir##*/} =~ ${FAKE_DISTURBED_BENCH:-^$} ]] && dist=true
         for c in "${cases[@]}"; do
           rows+="${rows:+, }{\"name\": \"$c\", \"run_type\": \"iteration\", \"real_time\": 1.0, \"time_unit\": \"ms\", \"rooflab\": {\"name\": \"$c\", \"disturbed\": $dist}}"
         done
         echo "{\"schema\": \"rooflab.bench/1\", \"benchmarks\": [$rows]}" >"$dir/bench.json"
         [ -z "${FAKE_BENCH_LOG:-}" ] || echo "$(basename "$0") ${dir##*/}" >>"$FAKE_BENCH_LOG" ;;
  model)
    rows=""
    if [ -n "${FAKE_EFFS:-}" ] && [[ $dir =~ run-([0-9]+)$ ]]; then
      e=$(cut -d' ' -f"${BASH_REMATCH[1]}" <<<"$FAKE_EFFS")
      rows="{\"name\": \"gemm/blocked/avx2/f64/512x512x512/threads:1\", \"ecm\": {\"efficiency\": $e}}"
    fi
    echo "{\"schema\": \"rooflab.model/1\", \"rows\": [$rows]}" >"$dir/model.json" ;;
  compare)
    rows=""
    if [ -n "${FAKE_UNCOMPARED:-}" ] && { [ -z "$filter" ] || grep -qE -- "$filter" <<<"$FAKE_UNCOMPARED"; }; then
      rows="{\"name\": \"$FAKE_UNCOMPARED\", \"status\": \"${FAKE_UNCOMPARED_STATUS:-too few}\", \"note\": \"NEW: machine.json has no bandwidth for level L3\"}"
    fi
    rc=${FAKE_COMPARE_RC}
    if [[ $json_out =~ /ab/ ]]; then
      rc=${FAKE_AB_RC:-0}; echo "fake A/B compare: exit $rc"
    elif [ -n "$filter" ] && [ -n "${FAKE_SLOWER:-}" ]; then
      rc=0; grep -qE -- "$filter" <<<"$FAKE_SLOWER" && rc=4
      [[ $json_out =~ confirm-([0-9]+)/ ]] && [ "${BASH_REMATCH[1]}" -gt "${FAKE_REPRODUCE:-99}" ] && rc=0
      echo "fake compare of the kernels in $filter: exit $rc"
    else
      echo "fake compare: exit $rc"
    fi
    [ "$rc" != 4 ] || [ -z "${FAKE_SLOWER:-}" ] || rows="${rows:+$rows, }{\"name\": \"$FAKE_SLOWER\", \"status\": \"slower\"}"
    if [[ $json_out =~ confirm-([0-9]+)/ ]] && [ "${BASH_REMATCH[1]}" = "${FAKE_DISTURBED_RETIMING:-}" ]; then
      rc=1; rows="{\"name\": \"$FAKE_SLOWER\", \"status\": \"disturbed\"}"
    fi
    [ -z "$json_out" ] || { echo "{\"schema\": \"rooflab.compare/1\", \"rows\": [$rows]}" >"$json_out"; echo "$args" >>"$(dirname "$json_out")/compare.args"; }
    exit "$rc" ;;
  *) echo "fake_rooflab.sh: unexpected command $cmd" >&2; exit 1 ;;
esac
