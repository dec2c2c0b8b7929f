#!/bin/bash
# The load-proof check: the same `rooflab bench` selection timed on a quiet machine and with one
# competing CPU-bound process (a busy loop at nice 19 in its own session), medians side by side with their ratio
# and the disturbed mark (`rooflab compare QUIET LOADED`). Run it under the timing lock:
#   scripts/cpu_lock.sh time scripts/load_compare.sh BUILD_DIR OUT_DIR [rooflab bench args...]
# e.g. ... build/rel /tmp/lc --profile quick --filter '^(sinkhorn|gemm)/.*threads:2$'
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: load_compare.sh BUILD_DIR OUT_DIR [rooflab bench args...]" >&2; exit 2; }
build=$1 out=$2; shift 2
rooflab=$build/rooflab
[ -x "$rooflab" ] || { echo "load_compare.sh: $rooflab: not an executable" >&2; exit 2; }
mkdir -p "$out/quiet" "$out/loaded"
busy=
stop_busy() { if [ -n "$busy" ]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=; fi; }
trap stop_busy EXIT INT TERM

"$rooflab" bench --out "$out/quiet" "$@" >"$out/quiet/console.txt" 2>&1 || echo "quiet run: exit $?" >&2
# In its own session, as another user's or terminal's job would be: with autogroup scheduling
# (sched_autogroup_enabled) nice only ranks tasks within one session, so the competitor then
# takes its full share of a core however nice it is.
setsid nice -n 19 sh -c 'while :; do :; done' &
busy=$!
"$rooflab" bench --out "$out/loaded" "$@" >"$out/loaded/console.txt" 2>&1 || echo "loaded run: exit $?" >&2
stop_busy

# The table is `rooflab compare`'s (loaded vs quiet medians, their ratio, a disturbed measurement
# marked with its reason); every case with 2 or more repetitions is shown, and a slowdown is what
# this check measures, not a failure (compare's exit 4).
echo "base: the quiet run ($out/quiet), new: the loaded run ($out/loaded)"
rc=0
"$rooflab" compare "$out/quiet" "$out/loaded" --metric time --min-reps 2 || rc=$?
[ "$rc" = 4 ] && rc=0
exit "$rc"
