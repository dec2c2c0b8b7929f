#!/usr/bin/env bash
# bench_interrupt.sh ROOFLAB DIR SIGNAL: starts `rooflab bench` on three small cases, sends SIGNAL
# once the first case is finished (the progress line of the second on stderr), and checks that
# bench exits with 128 + signal, that DIR/bench.json is valid JSON marked interrupted, holds the
# finished case and not the unfinished ones, and that no hidden temporary file (.bench.*) is left.
set -u
rl=$1 dir=$2 sig=${3:-INT}
rm -rf "$dir" && mkdir -p "$dir"   # an empty directory: the interrupt must not lose the first case
c1=sinkhorn/c2r/f64/37x53/part:iter/threads:1
c2=sinkhorn/c2r/f64/64x48/part:col/threads:1
c3=sinkhorn/c2r/f64/48x64/part:col/threads:1
"$rl" bench --case $c1 --case $c2 --case $c3 --out "$dir" \
  --benchmark_repetitions=3 --benchmark_min_time=0.2 >"$dir/stdout.log" 2>"$dir/stderr.log" &
pid=$!
for _ in $(seq 600); do  # up to 60 s for the first case to finish
  grep -q '^\[bench 2/3\]' "$dir/stderr.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
grep -q '^\[bench 2/3\]' "$dir/stderr.log" || { echo "the second case never started"; cat "$dir/stderr.log"; exit 1; }
kill -$sig $pid
wait $pid; rc=$?
num=$(kill -l $sig)
fail() { echo "FAIL: $*"; echo "--- stderr"; cat "$dir/stderr.log"; exit 1; }
[ "$rc" = $((128 + num)) ] || fail "exit $rc, expected $((128 + num))"
left=$(find "$dir" -name '.bench*')
[ -z "$left" ] || fail "temporary files left: $left"
[ -f "$dir/bench.json" ] || fail "no bench.json"
python3 - "$dir/bench.json" "$c1" "$c3" "SIG$sig" <<'PY' || fail "bench.json check"
import json, sys
path, done, never, sig = sys.argv[1:]
d = json.load(open(path))  # valid JSON
names = {b["run_name"] for b in d["benchmarks"]}
assert done in names, f"the finished case {done} is missing: {names}"
assert never not in names, f"the case never started ({never}) is present"
assert d["schema"] == "rooflab.bench/1"
assert d["interrupted"]["signal"] == sig, d["interrupted"]
assert never in d["interrupted"]["unfinished"], d["interrupted"]
assert done not in d["interrupted"]["unfinished"]
reps = [b for b in d["benchmarks"] if b["run_name"] == done and b["run_type"] == "iteration"]
assert len(reps) == 3 and all(b["real_time"] > 0 for b in reps), reps
print("ok: interrupted bench kept", sorted(names))
PY
grep -q "interrupted" "$dir/stderr.log" || fail "stderr does not say it was interrupted"
echo "ok: exit $rc"
