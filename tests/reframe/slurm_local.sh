#!/usr/bin/env bash
# ReFrame's rooflab_bench through a real Slurm: a one-host cluster (tests/fleet/local_slurm.sh:
# munge with its own key, slurmctld, one slurmd as node rl1) and settings.py's `cluster:compute`
# partition (ROOFLAB_SLURM_PARTITION=rltest; scheduler squeue, as this Slurm keeps no accounting
# for sacct; launcher srun) run the test on the smoke profile with one 1-thread kernel. Checks:
# ReFrame says PASSED; the report's job id is a Slurm job that ran on rl1 in rltest and completed
# (scontrol); the job script sbatch got holds the partition and srun; the perflog has the kernel.
# Every daemon it started is stopped, also on failure. Skips (77) without root, slurm-wlm /
# munge, or reframe in PYTHON's environment.
#   slurm_local.sh ROOFLAB PYTHON
set -uo pipefail
RL=${1:?usage: slurm_local.sh ROOFLAB PYTHON}; PY=${2:?usage: slurm_local.sh ROOFLAB PYTHON}
PY=$(command -v "$PY") || { echo "SKIP: no Python $2"; exit 77; }
RL=$(cd "$(dirname "$RL")" && pwd)/$(basename "$RL")
HERE=$(cd "$(dirname "$0")" && pwd)
RF=$(cd "$HERE/../../integrations/reframe" && pwd)
"$PY" -c "import reframe" 2>/dev/null || { echo "SKIP: reframe is not importable from $PY"; exit 77; }
REFRAME=$(dirname "$PY")/reframe
[ -x "$REFRAME" ] || { echo "SKIP: no $REFRAME"; exit 77; }
. "$HERE/../fleet/slurm_test_lib.sh"
SLURM_TEST_LOGS="$T/rf.txt $T/rf/stage/*/*/*/*/rfm_job.*"
slurm_test_start 1
export ROOFLAB_SLURM_PARTITION=rltest ROOFLAB_SLURM_SCHEDULER=squeue PYTHONDONTWRITEBYTECODE=1

# One tiny kernel; the job runs characterize (smoke), bench and model, as on a cluster's node.
FILTER='^sinkhorn/fused_uv/scalar/f64/.*threads:1$'
mkdir -p "$T/rf"
t0=$(date +%s)
(cd "$T/rf" && "$REFRAME" -C "$RF/settings.py" -c "$RF/rooflab_checks.py" --system cluster:compute \
   -n '^rooflab_bench$' --prefix "$T/rf" --perflogdir "$T/rf/perflogs" --report-file "$T/rf/report.json" \
   -S "rooflab=$RL" -S profile=smoke -S rooflab_bench.machine_profile=smoke \
   -S "rooflab_bench.bench_filter=$FILTER" -r) >"$T/rf.txt" 2>&1; rc=$?
echo "reframe through Slurm: $(( $(date +%s) - t0 )) s, exit $rc"
[ $rc = 0 ] || fail "reframe exited $rc"
grep -Eq 'PASSED .*Ran 1/1 test case' "$T/rf.txt" || fail "no 'PASSED ... Ran 1/1 test case' in ReFrame's output"

"$PY" - "$T/rf" <<'PYEOF' || fail "ReFrame's report, job or perflog is wrong (above)"
import json, os, re, subprocess, sys
from pathlib import Path
rf = Path(sys.argv[1])
case, = json.loads((rf / "report.json").read_text())["runs"][0]["testcases"]
assert case["name"] == "rooflab_bench" and case["result"] == "pass", case.get("fail_reason")
assert case["system"] == "cluster" and case["partition"] == "compute", (case["system"], case["partition"])
jobid = str(case["jobid"])
assert jobid.isdigit(), jobid
# The job Slurm ran: ours, on rl1 in rltest, completed (kept by slurmctld for MinJobAge, 300 s).
job = subprocess.run(["scontrol", "show", "-o", "job", jobid], capture_output=True, text=True)
assert job.returncode == 0, job.stderr
f = dict(kv.split("=", 1) for kv in job.stdout.split() if "=" in kv)
assert f["JobState"] == "COMPLETED" and f["ExitCode"] == "0:0", job.stdout
assert f["Partition"] == "rltest" and f["NodeList"] == "rl1" and f["JobName"] == "rfm_rooflab_bench", job.stdout
assert f["OverSubscribe"] == "NO", job.stdout          # exclusive_access: --exclusive
out = rf / "output" / "cluster" / "compute" / "builtin" / "rooflab_bench"
script = (out / "rfm_job.sh").read_text()
assert "#SBATCH --partition=rltest" in script and "#SBATCH --exclusive" in script, script
assert re.search(r"^srun .*rooflab.* bench ", script, re.M), script
# The kernel's variables: in the report and the perflog, equal to the job's model.json.
model = json.loads((out / "model.json").read_text())
rows = [r for r in model["rows"] if r["status"] == "ok"]
assert rows and all(r["name"].startswith("sinkhorn/fused_uv/scalar/f64/") for r in rows), rows
pv = {k.split(":", 2)[-1]: v for k, v in case["perfvalues"].items()}
line = (rf / "perflogs" / "cluster" / "compute" / "rooflab_bench.log").read_text().splitlines()[-1]
assert "|pass|rooflab_bench|" in line, line[:300]
for r in rows:
    key = r["name"].replace(":", "=")
    assert pv[f"{key}/efficiency"][0] == r["efficiency"] > 0 and pv[f"{key}/time"][0] == r["median_s"] > 0
    assert f"{key}/efficiency=" in line, line[:300]
print(f"ok: Slurm job {jobid} on {f['NodeList']} ({f['Partition']}) {f['JobState']}, "
      f"{len(rows)} kernel(s) PASSED, {len(pv)} variables")
PYEOF
echo "PASS"
