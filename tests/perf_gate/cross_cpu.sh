#!/usr/bin/env bash
# scripts/perf_gate.sh against a baseline from another CPU (and its re-timing of a regression): a regression (compare's exit 4) of a
# kernel outside its cross_cpu list is printed but does not fail the gate, one of a cross_cpu
# kernel does (FAKE_SLOWER names the kernel) between two AMD CPUs and does not across vendors, the same regression against this CPU's baseline does
# whatever the kernel, and a failed verification (exit 3) fails on any CPU. "Another CPU" is cpu_of's
# (plots/cpu_identity.py): without CPUID signatures, the same generic model name with other ISAs,
# as under a hypervisor; with a signature on both sides, another signature (other ISAs do not
# count then); with one on one side only, the name, ISAs and caches again.
# rooflab is tests/perf_gate/fake_rooflab.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd); gate="$here/../../scripts/perf_gate.sh"; fake="$here/fake_rooflab.sh"
tmp=$(mktemp -d /tmp/rooflab-gate-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT
fail=0
sig=""  # this CPU's host.cpu_signature, as the fake writes it
fused=sinkhorn/fused_uv/avx2/f64/4096x4096/threads:1                           # not in cross_cpu
fw=floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1  # in cross_cpu
slower=$fused
keep_commit=0
expect() {  # expect CODE REGEX ISA COMPARE_RC [perf_gate args...]
  local code=$1 regex=$2 isa=$3 crc=$4; shift 4
  local out rc
  out=$(FAKE_CPU_ISA=$isa FAKE_CPU_SIG=$sig FAKE_COMPARE_RC=$crc FAKE_SLOWER=$slower "$gate" --rooflab "$fake" --confirm-pause 0 --out "$tmp/run.$RANDOM" "$@" 2>&1); rc=$?
  # the cases above the A/B section: without the baseline's code at hand (no commit file)
  [ "$keep_commit" = 1 ] || rm -f "$tmp"/base*/commit "$tmp"/store/*/commit
  if [ "$rc" != "$code" ] || ! grep -qE -- "$regex" <<<"$out"; then
    echo "FAIL: this CPU $isa ${sig:-no signature}, compare exit $crc: expected exit $code and /$regex/, got exit $rc:"; echo "$out"; fail=1
  else
    echo "ok: this CPU $isa ${sig:-no signature}, compare exit $crc -> exit $rc"
  fi
}
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/base" --update-baseline
expect 0 "baseline CPU 'AMD EPYC, scalar\+avx2, .*' differs from this CPU .*: gating only the kernels" scalar,avx2,avx512 4 --baseline "$tmp/base"
slower=$fw
expect 4 "baseline CPU 'AMD EPYC, scalar\+avx2, .*' differs from this CPU .*: gating only the kernels" scalar,avx2,avx512 4 --baseline "$tmp/base"
FAKE_REPRODUCE=1 expect 0 "not confirmed: not slower when re-timed \(.*/confirm-2\)" scalar,avx2,avx512 4 --baseline "$tmp/base"
slower=$fused
expect 4 "fake compare: exit 4" scalar,avx2 4 --baseline "$tmp/base"
# A regression must reproduce: re-timed twice (--confirm 2, the default), it fails the gate only
# when slower every time; slower in the run only, or in the first re-timing only, it passes.
expect 4 "confirmed: slower in the run and in each of 2 re-timings" scalar,avx2 4 --baseline "$tmp/base"
FAKE_REPRODUCE=0 expect 0 "not confirmed: not slower when re-timed \(.*/confirm-1\): passes" scalar,avx2 4 --baseline "$tmp/base"
FAKE_REPRODUCE=1 expect 0 "not confirmed: not slower when re-timed \(.*/confirm-2\)" scalar,avx2 4 --baseline "$tmp/base"
FAKE_REPRODUCE=0 expect 4 "fake compare: exit 4" scalar,avx2 4 --baseline "$tmp/base" --confirm 0
# a disturbed re-timing counts neither way: the other one decides
FAKE_DISTURBED_RETIMING=1 FAKE_REPRODUCE=0 expect 0 "not confirmed: not slower when re-timed \(.*/confirm-2\)" scalar,avx2 4 --baseline "$tmp/base"
FAKE_DISTURBED_RETIMING=2 expect 4 "re-timing 2 disturbed .*neither confirms nor clears" scalar,avx2 4 --baseline "$tmp/base"
ls -d "$tmp"/run.*/confirm-2 >/dev/null 2>&1 || { echo "FAIL: no confirm-2 directory"; fail=1; }
expect 3 "fake compare: exit 3" scalar,avx2,avx512 3 --baseline "$tmp/base"
# this CPU records a signature, the baseline does not: compared by name, ISAs and caches
sig="AuthenticAMD family 25 model 1 stepping 1"
expect 4 "fake compare: exit 4" scalar,avx2 4 --baseline "$tmp/base"
expect 0 "baseline CPU 'AMD EPYC, scalar\+avx2, .*' differs from this CPU .*: gating only the kernels" scalar,avx2,avx512 4 --baseline "$tmp/base"
# both record one: the signature decides, ISAs masked by a hypervisor or not
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/base-sig" --update-baseline
expect 4 "fake compare: exit 4" scalar,avx2,avx512 4 --baseline "$tmp/base-sig"
sig="AuthenticAMD family 26 model 2 stepping 0"
expect 0 "baseline CPU 'AMD EPYC \[AuthenticAMD family 25 model 1 stepping 1\]' differs from this CPU 'AMD EPYC \[AuthenticAMD family 26 model 2 stepping 0\]': gating only the kernels" scalar,avx2 4 --baseline "$tmp/base-sig"
# A gated kernel the compare could not judge (no ECM on a side) fails the gate (exit 1); against
# another CPU's baseline only when it is a cross_cpu kernel.
slower=""
unc() { FAKE_UNCOMPARED=$1 expect "${@:2}"; }
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/base-26" --update-baseline
unc "$fused" 1 "error: $fused not compared: too few \(NEW: machine.json has no bandwidth for level L3\)" scalar,avx2 0 --baseline "$tmp/base-26"
unc "$fused" 0 "gating only the kernels" scalar,avx2 0 --baseline "$tmp/base-sig"
unc "$fw" 1 "error: $fw not compared: too few" scalar,avx2 0 --baseline "$tmp/base-sig"
# One the baseline lacks (added to the gate after it was made) is reported, not gated, on this CPU's
# baseline and on another's; one this run lacks is an error.
only() { FAKE_UNCOMPARED_STATUS=$1 unc "${@:2}"; }
only "only in NEW" "$fused" 0 "not gated: $fused is not in the baseline" scalar,avx2 0 --baseline "$tmp/base-26"
only "only in NEW" "$fw" 0 "not gated: $fw is not in the baseline" scalar,avx2 0 --baseline "$tmp/base-sig"
only "only in BASE" "$fused" 1 "error: $fused not compared: only in BASE" scalar,avx2 0 --baseline "$tmp/base-26"
# The threshold: --threshold, else the baseline's `threshold` file (a noisier machine's), else 0.25.
expect 0 "compare \(ECM efficiency, threshold 0.25," scalar,avx2 0 --baseline "$tmp/base-26"
echo 0.4 >"$tmp/base-26/threshold"
expect 0 "compare \(ECM efficiency, threshold 0.4," scalar,avx2 0 --baseline "$tmp/base-26"
expect 0 "compare \(ECM efficiency, threshold 0.3," scalar,avx2 0 --baseline "$tmp/base-26" --threshold 0.3
echo lots >"$tmp/base-26/threshold"
expect 1 "threshold: expected a fraction like 0.4, got 'lots'" scalar,avx2 0 --baseline "$tmp/base-26"
rm "$tmp/base-26/threshold"
# The metric: ECM efficiency, or time where this CPU's baseline has a `metric` file saying so; against
# another CPU's baseline the file does not count.
echo time >"$tmp/base-26/metric"
expect 0 "compare \(time, this CPU's own baseline .*/metric\), threshold 0.25," scalar,avx2 0 --baseline "$tmp/base-26"
grep -q -- "--metric time" "$tmp"/run.*/compare.args || { echo "FAIL: compare was not run with --metric time"; fail=1; }
echo time >"$tmp/base-sig/metric"
expect 0 "compare \(ECM efficiency, threshold 0.25," scalar,avx2 0 --baseline "$tmp/base-sig"
rm "$tmp/base-sig/metric"
echo ipc >"$tmp/base-26/metric"
expect 1 "metric: expected ecm or time, got 'ipc'" scalar,avx2 0 --baseline "$tmp/base-26"
rm "$tmp/base-26/metric"
# An Intel CPU against an AMD baseline: no kernel is shown comparable across the vendors, nothing
# gates (a cross_cpu kernel's regression included), and it says so.
slower=$fw
sig="GenuineIntel family 6 model 207 stepping 2"
expect 0 "\(AuthenticAMD\) differs from this CPU .*\(GenuineIntel\): no kernel's ECM efficiency has been shown comparable.*nothing gated" scalar,avx2 4 --baseline "$tmp/base-sig"
slower=""
# --update-baseline --runs N: the baseline is the medoid run (efficiencies 0.9, 0.5, 0.8: the
# median is run 3's), with every run's efficiency in selection.json.
FAKE_EFFS="0.9 0.5 0.8" expect 0 "baseline: run 3 of 3 \(the medoid" scalar,avx2 0 --baseline "$tmp/base-runs" --update-baseline --runs 3
grep -q '"chosen_run": 3' "$tmp/base-runs/selection.json" || { echo "FAIL: selection.json lacks the chosen run"; fail=1; }
grep -q '0.8' "$tmp/base-runs/model.json" || { echo "FAIL: the baseline's model.json is not run 3's"; fail=1; }
# The gate leaves the S-stream ceilings out of its machine.json and says why there, for the
# model's note.
grep -q '"omitted": "scripts/perf_gate.sh leaves the S-stream ceilings out on purpose"' "$tmp/base-runs/machine.json" ||
  { echo "FAIL: the gate's machine.json does not say why it has no S-stream ceilings"; fail=1; }
# a single run leaves no selection.json behind
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/base-runs" --update-baseline
[ ! -e "$tmp/base-runs/selection.json" ] || { echo "FAIL: a stale selection.json stayed"; fail=1; }
# The host's memory state, on this CPU: against a baseline whose 1-stream DRAM read differs from
# this run's by more than 1.3x a DRAM-bound kernel's regression is printed, not gated, and a
# compute-bound one's still fails; of several baselines of this CPU the default is the one whose
# DRAM read is nearest this run's.
sig="AuthenticAMD family 25 model 1 stepping 1"
FAKE_DRAM_READ=24 expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/store/gate-fast" --update-baseline
FAKE_DRAM_READ=13 expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/store/gate-slow" --update-baseline
slower=$fused
FAKE_DRAM_READ=14 expect 0 "DRAM read 14.000 GB/s and the baseline's 24.000 GB/s differ by more than 1.3x: .*DRAM-bound kernels \(.*fused_uv.*\) are informational; gating the 2 compute-bound" scalar,avx2 4 --baseline "$tmp/store/gate-fast"
FAKE_DRAM_READ=22 expect 4 "confirmed: slower in the run and in each of 2 re-timings" scalar,avx2 4 --baseline "$tmp/store/gate-fast"
FAKE_DRAM_READ=14 expect 4 "this run's DRAM read 14.000 GB/s: nearest is .*/gate-slow$" scalar,avx2 4 --baselines "$tmp/store"
FAKE_DRAM_READ=18 expect 0 "this run's DRAM read 18.000 GB/s: nearest is .*/gate-fast$" scalar,avx2 4 --baselines "$tmp/store"
slower=$fw
FAKE_DRAM_READ=14 expect 4 "confirmed: slower in the run and in each of 2 re-timings" scalar,avx2 4 --baseline "$tmp/store/gate-fast"
# no DRAM read on a side (a baseline from before it): every kernel gates, as before
slower=$fused
expect 4 "confirmed: slower in the run and in each of 2 re-timings" scalar,avx2 4 --baseline "$tmp/store/gate-fast"
# Step 4, A/B: --update-baseline writes git's HEAD into the baseline's `commit` (in a git clone);
# with the baseline's code at hand (here --ref-rooflab, the fake under another name) a slower
# kernel is timed by both alternately and the A/B's compare decides (threshold 0.25 or
# --threshold, not the baseline's file), whatever the CPU or the host's memory state.
keep_commit=1; slower=$fused; sig="AuthenticAMD family 25 model 1 stepping 1"
expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/ab-base" --update-baseline
if head=$(git -c safe.directory="$here/../.." -C "$here/../.." rev-parse HEAD 2>/dev/null); then
  [ "$(cat "$tmp/ab-base/commit" 2>/dev/null)" = "$head" ] || { echo "FAIL: the baseline's commit file is not HEAD ($head)"; fail=1; }
else
  [ ! -e "$tmp/ab-base/commit" ] || { echo "FAIL: a commit file outside a git clone"; fail=1; }
fi
ln -s "$fake" "$tmp/ref_rooflab"
ab() { FAKE_BENCH_LOG="$tmp/bench.log" expect "$@" --ref-rooflab "$tmp/ref_rooflab"; }
rm -f "$tmp/bench.log"
FAKE_AB_RC=0 ab 0 "A/B: $fused timed by the baseline's code \(.*/ref_rooflab\) and this build alternately, 5 rounds" scalar,avx2 4 --baseline "$tmp/ab-base"
order=$(grep -E " (ref|new)-[0-9]$" "$tmp/bench.log" | tr '\n' ' ')
r=ref_rooflab; n=fake_rooflab.sh
# scripts/ab.py's order: each side first in as many rounds as the other (+1), each in both positions
[ "$order" = "$r ref-1 $n new-1 $n new-2 $r ref-2 $n new-3 $r ref-3 $r ref-4 $n new-4 $r ref-5 $n new-5 " ] ||
  { echo "FAIL: the A/B's rounds ran as '$order'"; fail=1; }
FAKE_AB_RC=0 ab 0 "not confirmed: not slower than the baseline's code timed beside it" scalar,avx2 4 --baseline "$tmp/ab-base"
FAKE_AB_RC=4 ab 4 "confirmed: slower than the baseline's code timed beside it" scalar,avx2 4 --baseline "$tmp/ab-base"
echo 0.5 >"$tmp/ab-base/threshold"
FAKE_AB_RC=0 ab 0 "A/B \(time, threshold 0.25\)" scalar,avx2 4 --baseline "$tmp/ab-base"
FAKE_AB_RC=0 ab 0 "A/B \(time, threshold 0.3\)" scalar,avx2 4 --baseline "$tmp/ab-base" --threshold 0.3
grep -q -- "--metric time --threshold 0.3" "$tmp"/run.*/ab/compare.args || { echo "FAIL: the A/B's compare was not by time at 0.3"; fail=1; }
rm "$tmp/ab-base/threshold"
FAKE_AB_RC=0 ab 4 "fake compare: exit 4" scalar,avx2 4 --baseline "$tmp/ab-base" --confirm 0
# a round left disturbed on a side is not pooled; every round disturbed: the table's verdict stands
FAKE_DISTURBED_BENCH='^new-2$' FAKE_AB_RC=0 ab 0 "A/B ref / new: 1.000 \(1.000-1.000, 4 rounds\), dropped \(disturbed\) \[2\]  $fused" scalar,avx2 4 --baseline "$tmp/ab-base"
grep -q '"real_time"' "$(ls -td "$tmp"/run.*/ab/new | head -1)/bench.json" || { echo "FAIL: the A/B pooled no repetitions"; fail=1; }
FAKE_DISTURBED_BENCH='^ref-' FAKE_AB_RC=0 ab 4 "A/B disturbed in every round: it neither clears nor confirms" scalar,avx2 4 --baseline "$tmp/ab-base"
# the A/B gates what the stored numbers cannot: another vendor's baseline, another memory state
sig="GenuineIntel family 6 model 207 stepping 2"
FAKE_AB_RC=4 ab 4 "confirmed: slower than the baseline's code timed beside it" scalar,avx2 4 --baseline "$tmp/ab-base"
# against another CPU's baseline every kernel is timed A/B, "same" in the table or not
FAKE_AB_RC=4 ab 4 "the baseline is from another CPU .*: every kernel is judged A/B" scalar,avx2 0 --baseline "$tmp/ab-base"
FAKE_AB_RC=0 ab 0 "A/B: gemm/blocked/avx2/f64/512x512x512/threads:1 floyd_warshall.* timed by the baseline's code" scalar,avx2 0 --baseline "$tmp/ab-base"
# every round disturbed against another CPU's baseline: nothing judged, an error, not a pass
FAKE_DISTURBED_BENCH='^new-' FAKE_AB_RC=0 ab 1 "nothing judged against another CPU's baseline" scalar,avx2 0 --baseline "$tmp/ab-base"
sig="AuthenticAMD family 25 model 1 stepping 1"
echo "$(git -c safe.directory="$here/../.." -C "$here/../.." rev-parse HEAD 2>/dev/null)" >"$tmp/ab-base/commit"
FAKE_DRAM_READ=14 expect 0 "baseline written" scalar,avx2 0 --baseline "$tmp/ab-fast" --update-baseline
FAKE_DRAM_READ=24 FAKE_AB_RC=4 ab 4 "confirmed: slower than the baseline's code" scalar,avx2 4 --baseline "$tmp/ab-fast"
# a commit this clone lacks: no A/B, the re-timings decide
echo 0123456789abcdef0123456789abcdef01234567 >"$tmp/ab-base/commit"
expect 4 "no A/B: commit 0123456789abcdef0123456789abcdef01234567 of .* is not in this clone" scalar,avx2 4 --baseline "$tmp/ab-base"
out=$("$gate" --rooflab "$fake" --ref-rooflab "$tmp/none" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "ref-rooflab: .*/none is not an executable" <<<"$out" || { echo "FAIL: --ref-rooflab of nothing: exit $rc: $out"; fail=1; }
slower=""
exit $fail
