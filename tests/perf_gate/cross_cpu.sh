#!/usr/bin/env bash
# scripts/perf_gate.sh against a baseline from another CPU: a regression (compare's exit 4) is
# printed but does not fail the gate, while the same regression against this CPU's baseline does,
# and a failed verification (exit 3) fails on any CPU. "Another CPU" is cpu_of's: here the same
# generic model name with other ISAs, as under a hypervisor. rooflab is tests/perf_gate/fake_rooflab.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd); gate="$here/../../scripts/perf_gate.sh"; fake="$here/fake_rooflab.sh"
tmp=$(mktemp -d /tmp/rooflab-gate-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect CODE REGEX ISA COMPARE_RC [perf_gate args...]
  local code=$1 regex=$2 isa=$3 crc=$4; shift 4
  local out rc
  out=$(FAKE_CPU_ISA=$isa FAKE_COMPARE_RC=$crc "$gate" --rooflab "$fake" --out "$tmp/run.$RANDOM" "$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$regex" <<<"$out"; then
    echo "FAIL: this CPU $isa, compare exit $crc: expected exit $code and /$regex/, got exit $rc:"; echo "$out"; fail=1
  else
    echo "ok: this CPU $isa, compare exit $crc -> exit $rc"
  fi
}
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/base" --update-baseline
expect 0 "baseline CPU 'AMD EPYC, scalar\+avx2, .*' differs .*not gating" scalar,avx2,avx512 4 --baseline "$tmp/base"
expect 4 "fake compare: exit 4" scalar,avx2 4 --baseline "$tmp/base"
expect 3 "fake compare: exit 3" scalar,avx2,avx512 3 --baseline "$tmp/base"
exit $fail
