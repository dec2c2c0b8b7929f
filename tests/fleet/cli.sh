#!/usr/bin/env bash
# rooflab fleet without Slurm: --help, the argument errors, the batch script of --dry-run, and
# collect / status on a run directory made here (a node with every file, a node missing, a case
# that failed verification, a machine.json of another CPU).
#   cli.sh ROOFLAB
set -uo pipefail
RL=${1:?usage: cli.sh ROOFLAB}
T=$(mktemp -d /tmp/rooflab-fleet-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect CODE REGEX CMD...: CMD exits CODE and its output (stdout + stderr) matches REGEX
expect() {
  local code=$1 re=$2 rc; shift 2
  "$@" >"$T/out" 2>&1; rc=$?
  [ "$rc" = "$code" ] || { cat "$T/out"; fail "exit $rc, expected $code: $*"; }
  grep -Eq -- "$re" "$T/out" || { cat "$T/out"; fail "no /$re/ in the output of: $*"; }
  n=$((n + 1))
}

expect 0 "collect +check each node" "$RL" fleet --help
expect 0 "--nodelist L" "$RL" fleet submit --help
expect 0 "--history DB" "$RL" fleet collect --help
expect 0 "--wait SECONDS" "$RL" fleet status --help
expect 2 "unknown command 'sumbit'" "$RL" fleet sumbit
expect 2 "--nodelist: not allowed with argument --nodes" \
  "$RL" fleet submit --partition p --nodes 2 --nodelist a,b --out "$T/r" --dry-run
expect 2 "one of the arguments --nodes --nodelist is required" "$RL" fleet submit --partition p --out "$T/r" --dry-run
expect 2 "required: --partition" "$RL" fleet submit --nodes 2 --out "$T/r" --dry-run
expect 2 "required: --out" "$RL" fleet submit --partition p --nodes 2 --dry-run
expect 2 "--nodes: must be positive" "$RL" fleet submit --partition p --nodes 0 --out "$T/r" --dry-run
expect 2 "'\[' without '\]'" "$RL" fleet submit --partition p --nodelist 'n[1-3' --out "$T/r" --dry-run
expect 2 "runs backwards" "$RL" fleet submit --partition p --nodelist 'n[3-1]' --out "$T/r" --dry-run
expect 2 "not a regular expression" "$RL" fleet submit --partition p --nodes 1 --filter '(' --out "$T/r" --dry-run
touch "$T/file"
expect 2 "exists and is not a directory" "$RL" fleet submit --partition p --nodes 1 --out "$T/file" --dry-run
mkdir -p "$T/full" && touch "$T/full/x"
expect 2 "not empty" "$RL" fleet submit --partition p --nodes 1 --out "$T/full" --dry-run
expect 2 "not a fleet run" "$RL" fleet collect "$T/full"
expect 2 "run directory is missing" "$RL" fleet status

# --dry-run: the script (whole nodes, one srun task per node, this rooflab), nothing written.
expect 0 "^sbatch --parsable $T/r/fleet.sbatch" \
  "$RL" fleet submit --partition debug --nodelist 'n[01-02],gpu7' --profile smoke --time 00:30:00 --out "$T/r" --dry-run
for re in '^#SBATCH --partition=debug$' '^#SBATCH --nodes=3$' '^#SBATCH --nodelist=n01,n02,gpu7$' \
          '^#SBATCH --exclusive$' '^#SBATCH --ntasks-per-node=1$' '^#SBATCH --time=00:30:00$' \
          '^srun .*--ntasks-per-node=1 --whole' "ROOFLAB_EXE=$(readlink -f "$RL")" 'fleet.py node '"$T/r"'$'; do
  grep -Eq -- "$re" "$T/out" || { cat "$T/out"; fail "the dry-run script lacks /$re/"; }
done
grep -q -- '--array' "$T/out" && fail "the script is an array job (one task per node is the design)"
[ ! -e "$T/r" ] || fail "--dry-run wrote $T/r"
expect 0 "^#SBATCH --nodes=4$" "$RL" fleet submit --partition p --nodes 4 --out "$T/r" --dry-run
grep -q -- '--nodelist' "$T/out" && fail "--nodes N wrote a --nodelist"

# collect: a run directory of two requested nodes, a and b; only a ran.
mkdir -p "$T/run/a"
cat >"$T/run/fleet.json" <<JSON
{"schema": "rooflab.fleet/1", "job_id": "7", "partition": "p", "nodes": 2, "nodelist": ["a", "b"],
 "profile": "smoke", "filter": "", "rooflab": "$(readlink -f "$RL")"}
JSON
echo '{"schema": "rooflab.machine/1", "host": {"cpu": "X", "cpu_signature": "S1"}}' >"$T/run/a/machine.json"
echo '{"schema": "rooflab.model/1", "rows": []}' >"$T/run/a/model.json"
ok='"rooflab": {"verification": {"ok": true}}'
bad='"error_occurred": true, "error_message": "verification failed: x", "rooflab": {"verification": {"ok": false}}'
cat >"$T/run/a/bench.json" <<JSON
{"schema": "rooflab.bench/1", "benchmarks": [
 {"name": "f/v/f64/8/threads:1", "run_name": "f/v/f64/8/threads:1", "run_type": "iteration", $ok},
 {"name": "f/v/f64/8/threads:1", "run_name": "f/v/f64/8/threads:1", "run_type": "iteration", $ok},
 {"name": "f/v/f64/8/threads:1_median", "run_name": "f/v/f64/8/threads:1", "run_type": "aggregate"},
 {"name": "f/w/f64/8/threads:1", "run_name": "f/w/f64/8/threads:1", "run_type": "iteration", $bad}]}
JSON
cat >"$T/run/a/node.json" <<JSON
{"schema": "rooflab.fleet_node/1", "node": "a", "state": "done", "host": {"cpu_signature": "S1", "cpu_model": "X",
 "cpus_online": 4, "cpus_usable": 4},
 "steps": [{"id": "characterize", "status": "ok", "elapsed_s": 1}, {"id": "bench", "status": "ok", "elapsed_s": 2},
           {"id": "model", "status": "ok", "elapsed_s": 0}]}
JSON
expect 1 "^b +missing" "$RL" fleet collect "$T/run"
grep -Eq '^a +verification +1 +1 ' "$T/out" || { cat "$T/out"; fail "node a: 1 verified, 1 failed expected"; }
grep -q '"missing": \[' "$T/run/fleet.json" && grep -q '"b"' "$T/run/fleet.json" || fail "fleet.json's collected section lacks b"
# Only a requested: every node present, a case failed verification -> 3.
python3 -c 'import json, sys; p = sys.argv[1]; d = json.load(open(p)); d.update(nodelist=["a"], nodes=1)
json.dump(d, open(p, "w"))' "$T/run/fleet.json"
expect 3 "1 node\(s\) collected, 0 missing, 0 failed" "$RL" fleet collect "$T/run"
# machine.json measured on another CPU than the node's: failed.
sed -i 's/"S1"/"S2"/' "$T/run/a/machine.json"
expect 1 "measured on 'S2', the node is 'S1'" "$RL" fleet collect "$T/run"
sed -i 's/"S2"/"S1"/' "$T/run/a/machine.json"
# A task bound to fewer CPUs than the node has: failed (its timings would not be the node's).
sed -i 's/"cpus_usable": 4/"cpus_usable": 1/' "$T/run/a/node.json"
expect 1 "could use 1 of 4 CPUs" "$RL" fleet collect "$T/run"
sed -i 's/"cpus_usable": 1/"cpus_usable": 4/' "$T/run/a/node.json"
rm "$T/run/a/model.json"
expect 1 "no model.json" "$RL" fleet collect "$T/run"
# status without Slurm or with the job gone: the job's state is unknown, the nodes' progress shown.
mkdir -p "$T/bin" && ln -s "$(command -v python3)" "$T/bin/python3"  # a PATH with no squeue / sacct
expect 0 "squeue not found" env PATH="$T/bin" "$(readlink -f "$RL")" fleet status "$T/run"
grep -q "a: done, characterize ok" "$T/out" || { cat "$T/out"; fail "status does not show node a's progress"; }
echo "PASS: $n checks"
