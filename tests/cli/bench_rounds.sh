#!/usr/bin/env bash
# bench_rounds.sh ROOFLAB DIR: `rooflab bench --rounds N` end to end, with the test hook instead of
# a real change of the host's speed (structure only, never speed):
#  1. --rounds 3: every case timed in three rounds (the second in reverse order), one measurement
#     kept per case, each round's median in rooflab.rounds, the kept round the best by the rule
#     (undisturbed first, then the lowest median) and rooflab.rounds_spread the spread of those
#     medians;
#  2. ROOFLAB_TEST_SLOW_ROUND=1 (round 1's times x10) with --rounds 2: the spread (~10x) is
#     reported in bench.json's "rounds" and on the console;
#  3. without --rounds: no round fields;
#  4. ROOFLAB_TEST_SLOW_ROUND=2 with --rounds 3: the slow middle round is marked "slower" (only),
#     not kept, and its spread still reported.
set -u
rl=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
a=sinkhorn/c2r/f64/37x53/part:iter/threads:1
b=gemm/blocked/scalar/f64/31x17x9/threads:1  # scalar: runs on any x86-64
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }
run() {  # run NAME [bench args...]
  local name=$1; shift
  "$rl" bench --case $a --case $b --out "$dir/$name" --benchmark_repetitions=3 --benchmark_min_time=0.01 "$@" \
    >"$dir/$name.out.log" 2>"$dir/$name.log" || fail "$name: bench exit $?"
}
run three --rounds 3
ROOFLAB_TEST_SLOW_ROUND=1 run slow --rounds 2
ROOFLAB_TEST_SLOW_ROUND=2 run slowmid --rounds 3
run one
grep -q "round 2 of 3: 2 cases, in reverse order" "$dir/three.log" || fail "console: no reversed round 2"
grep -q "round 3 of 3: 2 cases$" "$dir/three.log" || fail "console: no round 3"
grep -q "ran more than 15% apart between rounds" "$dir/slow.log" || fail "console: the slow round is not reported"
python3 - "$dir" "$a" "$b" <<'PY' || fail "JSON check"
import json, sys
d, cases = sys.argv[1], sys.argv[2:]
load = lambda p: json.load(open(f"{d}/{p}"))
def rows(doc, case):
    return [x for x in doc["benchmarks"] if x["run_name"] == case and x["run_type"] == "iteration"]
t = load("three/bench.json")
assert t["rounds"]["n"] == 3 and t["rounds"]["spread_max"] == 1.15, t["rounds"]
for case in cases:
    r = rows(t, case)
    assert len(r) == 3, r  # one round's repetitions kept, not three rounds'
    f = r[0]["rooflab"]
    log = f["rounds"]
    assert [x["round"] for x in log] == [1, 2, 3] and all(x["median_s"] > 0 for x in log), log
    best = min(log, key=lambda x: (x["disturbed"], x["median_s"]))
    assert f["round_kept"] == best["round"], (f["round_kept"], log)
    clean = [x["median_s"] for x in log if not x["disturbed"] or x["slower_only"]]
    use = clean if len(clean) >= 2 else [x["median_s"] for x in log]
    assert abs(f["rounds_spread"] - max(use) / min(use)) < 1e-9, (f["rounds_spread"], log)
    kept = sorted(x["real_time"] for x in r)[1] * {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1}[r[0]["time_unit"]]
    if f["retries"] == 0:  # (a kept round still disturbed is re-measured, and a retry may replace it)
        assert abs(kept - best["median_s"]) <= 1e-9 + 1e-6 * kept, (kept, best)  # the kept rows are that round's
s = load("slow/bench.json")
varied = {v["name"]: v["spread"] for v in s["rounds"]["varied"]}
for case in cases:
    log = rows(s, case)[0]["rooflab"]["rounds"]
    assert log[0]["median_s"] > 5 * log[1]["median_s"], log  # the hook slowed round 1 only
    assert case in varied and varied[case] > 5, varied
# A slow middle round (the hook: round 2 x10, every probe quiet) is marked "slower" and not kept,
# and its slowness is still the spread the rounds report (it is the host's change of speed).
m = load("slowmid/bench.json")
varied = {v["name"]: v["spread"] for v in m["rounds"]["varied"]}
for case in cases:
    f = rows(m, case)[0]["rooflab"]
    log = f["rounds"]
    assert log[1]["disturbed"] and f["round_kept"] != 2, log
    if log[1]["slower_only"]:  # (on a busy test machine the CV rules may fire too: then it is not clean)
        assert case in varied and varied[case] > 5, (varied, log)
o = load("one/bench.json")
assert "rounds" not in o and all("rounds" not in x["rooflab"] for x in o["benchmarks"] if "rooflab" in x)
PY
echo ok
