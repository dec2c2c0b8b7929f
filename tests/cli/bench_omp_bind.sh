#!/usr/bin/env bash
# bench_omp_bind.sh ROOFLAB DIR: the CPUs a bench's OpenMP threads may run on, end to end.
#  1. OMP_PROC_BIND=close OMP_PLACES=threads (one place per CPU, so the count does not depend on
#     SMT): libgomp binds the initial thread to its first place when it loads, and rooflab
#     re-executes itself once (its OpenMP wait policy); the new process must not inherit that
#     one-CPU mask. bench.json's context.omp_affinity: procs = places = every CPU of this shell's
#     mask, no diagnostic.
#  2. taskset to one CPU, a 2-thread case: procs 1 and a diagnostic that its threads share CPUs.
# Skipped (77) with fewer than 2 CPUs in the mask.
set -u
rl=$1 dir=$2
n=$(nproc)
[ "$n" -ge 2 ] || { echo "skip: $n CPU in this process's affinity mask"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
c=sinkhorn/c2r/f64/37x53/part:iter/threads:2
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }
run() {  # run NAME [command prefix...]
  local name=$1; shift
  "$@" env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u ROOFLAB_OMP_POLICY \
    "$rl" bench --case $c --out "$dir/$name" --benchmark_repetitions=1 --benchmark_min_time=0.01 \
    >"$dir/$name.out.log" 2>"$dir/$name.log" || fail "$name: bench exit $?"
}
run bound env OMP_PROC_BIND=close OMP_PLACES=threads
run one taskset -c "$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')"
python3 - "$dir" "$n" <<'PY' || fail "JSON check"
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
b = json.load(open(f"{d}/bound/bench.json"))
a = b["context"]["omp_affinity"]
assert a["OMP_PROC_BIND"] == "close" and a["OMP_PLACES"] == "threads", a
assert b["context"]["omp_wait_policy"]["set_by"] == "rooflab"   # the re-executed process
assert a["procs"] == n and a["places"] == n, (a, n)
assert not any("more threads than" in w for w in b["diagnostics"]), b["diagnostics"]
b = json.load(open(f"{d}/one/bench.json"))
a = b["context"]["omp_affinity"]
assert a["procs"] == 1 and a["places"] == 0 and a["OMP_PROC_BIND"] is None, a
assert any(w.startswith("1 case(s) ask for more threads than the 1 CPU(s)") for w in b["diagnostics"]), b["diagnostics"]
PY
echo "ok: bound threads keep every CPU ($n), a one-CPU mask is diagnosed"
