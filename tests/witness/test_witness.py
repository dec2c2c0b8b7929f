#!/usr/bin/env python3
"""scripts/witness.py's table on the committed fixture (tests/fixtures/witness: a hand-written
hosts_sweep.json of 3 repetitions, one unverified, and SMPI cells): medians, the pair errors,
the >25% flag, oversubscribed cells flagged and left out of the summary; then, with the rooflab
binary, the model input it writes goes through `rooflab model --mpi-sweep` and --table-only
writes witness.json / witness.md from a run directory.
  test_witness.py SOURCE_DIR ROOFLAB TMPDIR"""
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys

src, rooflab, tmp = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("witness", os.path.join(src, "scripts", "witness.py"))
w = importlib.util.module_from_spec(spec)
spec.loader.exec_module(w)
fx = os.path.join(src, "tests", "fixtures", "witness")
hosts = json.load(open(os.path.join(fx, "hosts_sweep.json")))
smpi = json.load(open(os.path.join(fx, "smpi_cells.json")))


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


real = w.real_cells(hosts)
assert sorted(real) == ["2x1/coffee", "2x1/mpich", "2x2/ring"], sorted(real)
m = real["2x1/mpich"]
assert close(m["time_s"], 2.0e-3) and m["reps"] == 3 and m["range_s"] == [1.0e-3, 3.0e-3], m  # median of 1, 3, 2 ms
assert close(m["compute_s"], 0.85e-3) and m["verified"] and m["run"]["rep"] == 3, m  # the median repetition's run
assert not real["2x1/coffee"]["verified"]  # one of its repetitions failed verification

model = {"2x1/mpich": {"time_s": 1.5e-3}, "2x1/coffee": {"time_s": 1.2e-3}, "2x2/ring": {"time_s": 8.0e-3}}
rows, summary = w.build_table(real, smpi, model, 2)
by = {r["cell"]: r for r in rows}
assert [r["cell"] for r in rows] == ["2x1/mpich", "2x1/coffee", "2x2/ring"]  # hosts, ranks, design order
e = by["2x1/mpich"]["errors"]
assert close(e["smpi_vs_real"], 2.6 / 2.0 - 1) and close(e["model_vs_real"], 1.5 / 2.0 - 1), e
assert close(e["model_vs_smpi"], 1.5 / 2.6 - 1), e
assert by["2x1/mpich"]["smpi_real_disagree"]  # +30% > 25%
assert not by["2x1/coffee"]["smpi_real_disagree"] and close(by["2x1/coffee"]["errors"]["smpi_vs_real"], 0.0)
ring = by["2x2/ring"]
assert ring["oversubscribed"] and ring["ranks"] == 4 and not by["2x1/mpich"]["oversubscribed"]
assert ring["smpi_real_disagree"]  # 1 ms simulated vs 4 ms real: flagged, but not judged
assert summary["judged_cells"] == 2 and summary["oversubscribed_cells"] == 1, summary
assert summary["smpi_real_disagree"] == ["2x1/mpich"], summary
assert summary["smpi_real_disagree_oversubscribed"] == ["2x2/ring"], summary
s = summary["model_vs_real"]  # over the judged cells only: |1.5/2 - 1| and |1.2/1.2 - 1|
assert s["cells"] == 2 and close(s["max_abs"], 0.25) and close(s["median_abs"], 0.125), s
# A witness missing for a cell: its errors are None, never a number.
rows2, summary2 = w.build_table(real, {}, model, 2)
assert all(r["errors"]["smpi_vs_real"] is None for r in rows2) and summary2["smpi_vs_real"]["cells"] == 0
md = w.markdown(rows, summary)
assert "| 2 x 2 | ring | 4.000 (4.000-4.000) | 1.000 | 8.000 | -75% | +100% | +700% | oversubscribed (4 ranks, 2 CPUs): " \
       "not judged |" in md, md
assert "| 2 x 1 | coffee |" in md and "NOT VERIFIED" in md
print("table: ok")

if not (rooflab and os.path.isfile(rooflab)):
    print("SKIP: no rooflab binary: the model part is not checked")
    sys.exit(77)
# The model input: `rooflab model --mpi-sweep` accepts it and predicts each cell; the fixture's
# 2x2 cell waits with yield, so it is charged the yield rounds; compute = one rank x (M / P) x k.
run = os.path.join(tmp, "run")
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(os.path.join(run, "witness"))
shutil.copy(os.path.join(fx, "hosts_sweep.json"), run)
shutil.copy(os.path.join(fx, "smpi_cells.json"), os.path.join(run, "witness"))
pp = os.path.join(run, "hosts", "N2", "pingpong", "h0-h1")
os.makedirs(pp)
json.dump({"schema": "rooflab.mpi_pingpong/1", "alpha_s": 5e-6, "beta_bytes_per_s": 1.2e8, "gamma_s_per_byte": 4e-11},
          open(os.path.join(pp, "mpi_pingpong.json"), "w"))
p = subprocess.run([sys.executable, os.path.join(src, "scripts", "witness.py"), "--run", run, "--table-only",
                    "--build", os.path.dirname(rooflab)], capture_output=True, text=True)
assert p.returncode == 0, p.stderr
doc = json.load(open(os.path.join(run, "witness.json")))
assert doc["schema"] == "rooflab.witness/1"
by = {r["cell"]: r for r in doc["rows"]}
mr = by["2x2/ring"]["model"]
assert mr["regime"] == "shared-yield" and mr["ranks_per_core"] == 2, mr
assert close(mr["compute_s"], 1.6e-3 * 128 / 512 * 2), mr
assert close(mr["comm_s"], 1.3e-4 + 6 * 1 * 4e-6), mr  # alpha-beta + rounds x (k - 1) x yield_round_s
mm = by["2x1/mpich"]["model"]
assert mm["regime"] == "unshared" and close(mm["time_s"], 1.6e-3 * 256 / 512 + 1.3e-4), mm
assert close(by["2x1/mpich"]["errors"]["model_vs_real"], mm["time_s"] / 2.0e-3 - 1)
assert open(os.path.join(run, "witness.md")).read() == w.markdown(
    [dict(r) for r in doc["rows"]], doc["summary"])
print("model: ok")
