#!/usr/bin/env bash
# The fleet commands on a real Slurm: a one-host cluster (tests/fleet/local_slurm.sh: munge with
# its own key, slurmctld, two slurmd serving node names rl1 and rl2) gets a fleet run of the
# smoke profile (characterize + the Floyd-Warshall benchmarks + model); the test waits for it,
# collects it into a history store and checks every node's files, and stops every daemon it
# started, also when it fails. Skips (77) without root or slurm-wlm / munge.
#   slurm_local.sh ROOFLAB
set -uo pipefail
RL=${1:?usage: slurm_local.sh ROOFLAB}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/slurm_test_lib.sh"
SLURM_TEST_LOGS="$T/run/slurm-*.out $T/run/*/logs/*.log"
slurm_test_start 2

# A node Slurm does not know: sbatch refuses it, and the run directory is left as it was.
"$RL" fleet submit --partition rltest --nodelist rl9 --out "$T/bad" --profile smoke >"$T/bad.txt" 2>&1 \
  && fail "a job on the unknown node rl9 was accepted"
grep -q "sbatch failed" "$T/bad.txt" || { cat "$T/bad.txt"; fail "no 'sbatch failed' for the unknown node"; }
[ ! -e "$T/bad" ] || fail "the refused submission left $T/bad behind"

t0=$(date +%s)
"$RL" fleet submit --partition rltest --nodes 2 --profile smoke --filter '^floyd_warshall/' --out "$T/run" \
  || fail "fleet submit failed"
"$RL" fleet status "$T/run" --wait 480 || fail "the job did not end within 480 s"
"$RL" fleet collect "$T/run" --history "$T/history.sqlite"; rc=$?
echo "fleet run: submit to collected in $(( $(date +%s) - t0 )) s"
[ $rc = 0 ] || fail "fleet collect exited $rc (0: every node ok)"

# Every node: the three files, valid, measured on this CPU, every case verified; the two nodes
# (one host) never measured at the same time; both runs in the history store.
sig=$("$RL" info | sed -n 's/^cpu signature: //p')
python3 - "$T/run" "$sig" <<'PY' || fail "the fleet run's files are wrong (above)"
import json, sys
from pathlib import Path
run, sig = Path(sys.argv[1]), sys.argv[2]
fleet = json.loads((run / "fleet.json").read_text())
assert fleet["schema"] == "rooflab.fleet/1" and fleet["job_id"], fleet
col = fleet["collected"]
assert col["missing"] == [] and col["failed"] == [], col
assert sorted(r["node"] for r in col["nodes"]) == ["rl1", "rl2"], col["nodes"]
spans = []
for n in ("rl1", "rl2"):
    d = run / n
    m = json.loads((d / "machine.json").read_text())
    b = json.loads((d / "bench.json").read_text())
    mo = json.loads((d / "model.json").read_text())
    node = json.loads((d / "node.json").read_text())
    assert m["schema"] == "rooflab.machine/1" and m["host"]["cpu_signature"] == sig, m["host"]
    assert b["schema"] == "rooflab.bench/1" and mo["schema"] == "rooflab.model/1"
    cases = {x["name"] for x in b["benchmarks"] if x.get("run_type") == "iteration"}
    assert cases and all(x["name"].startswith("floyd_warshall/") for x in b["benchmarks"]), cases
    assert all(x["rooflab"]["verification"]["ok"] and not x.get("error_occurred")
               for x in b["benchmarks"] if x.get("run_type") == "iteration")
    assert node["node"] == n and node["state"] == "done" and node["host"]["cpu_signature"] == sig, node
    assert node["host"]["cpus_usable"] == node["host"]["cpus_online"], node["host"]  # --whole: every CPU
    assert [s["id"] for s in node["steps"]] == ["characterize", "bench", "model"], node["steps"]
    row = next(r for r in col["nodes"] if r["node"] == n)
    assert row["status"] == "ok" and row["verified"] == len(cases) and "stored as run" in row["history"], row
    spans.append((node["measure_started"], node["ended"]))
(a0, a1), (b0, b1) = sorted(spans)
assert a1 <= b0, f"the two nodes measured at the same time on one host: {spans}"
print(f"ok: 2 nodes, {len(cases)} verified cases each, measured one after the other: {spans}")
PY
"$RL" history list --db "$T/history.sqlite" | tee "$T/list.txt"
grep -q "^2 runs in" "$T/list.txt" || fail "the history store does not hold the two nodes' runs"

# collect names a requested node that never ran: the same run, asked for a third node.
python3 - "$T/run/fleet.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p)); d["nodelist"] = ["rl1", "rl2", "rl3"]; json.dump(d, open(p, "w"))
PY
"$RL" fleet collect "$T/run" >"$T/collect3.txt"; rc=$?
[ $rc = 1 ] && grep -q "^rl3 .*missing" "$T/collect3.txt" || { cat "$T/collect3.txt"; fail "rl3 not named missing (exit $rc)"; }
echo "PASS"
