"""Checks the files of the sinkhorn_mpi_model CTest (argument: its temporary directory):
the calibration written beside machine.json (machine.mpi.json, joined as its "mpi" section when
read) while machine.json itself stays as characterize wrote it,
a usable fit, and runs that carry their prediction. Standard library only."""
import json
import math
import sys
from pathlib import Path

tmp = Path(sys.argv[1])
fixture = json.loads((Path(__file__).parent.parent / "fixtures/run_small/machine.json").read_text())
machine = json.loads((tmp / "machine.json").read_text())
section = json.loads((tmp / "machine.mpi.json").read_text())
pp = json.loads((tmp / "pp" / "mpi_pingpong.json").read_text())  # --out DIR: the file named after its schema

assert machine == fixture, "the calibration edited machine.json"
assert section["schema"] == "rooflab.machine_section/1" and section["section"] == "mpi"
assert section["machine_created"] == fixture["created"], "the section does not name the machine.json it belongs to"
mpi = section["value"]
assert mpi["schema"] == "rooflab.mpi_pingpong/1" and mpi["pingpong_ranks"] == [0, 1]
assert mpi["alpha_s"] >= 0 and mpi["beta_bytes_per_s"] > 0 and mpi["gamma_s_per_byte"] > 0
assert 0 <= mpi["fit"]["rms_rel_err"] <= mpi["fit"]["max_rel_err"]
for p in mpi["points"]:  # every point carries the fitted model's value and its error
    assert math.isclose(p["predicted_s"], mpi["alpha_s"] + p["bytes"] / mpi["beta_bytes_per_s"], rel_tol=1e-9)
ar = mpi["allreduce"]
assert ar["ranks"] == 2 and len(ar["points"]) >= 5
assert {p["algorithm"] for p in ar["points"]} == {"recursive doubling", "Rabenseifner"}
assert pp["alpha_s"] == mpi["alpha_s"], "--out and --machine got different calibrations"
assert sorted(p.name for p in (tmp / "pp").iterdir()) == ["mpi_pingpong.json"]

salar = json.loads((tmp / "salar" / "sinkhorn_mpi.json").read_text())
assert salar["ranks_per_node"] == 2 and salar["predicted_comm_s"] > 0
assert salar["model"]["source"].endswith("machine.json") and "salar" in salar["model"]["assumes"]
assert math.isclose(salar["measured_over_predicted_comm"], salar["comm_time_per_iter_s"] / salar["predicted_comm_s"])
# Per-rank medians: the run's figures are their max; the rounds of salar's pipeline (4 ranks in
# nodes of 2, 2 chunks of 212 bytes: reduce 1, leaders' allreduce 1, bcast 1, + 1 more chunk).
pr = salar["per_rank"]
assert all(len(v) == 4 for v in pr.values())
assert max(pr["time_s"]) == salar["time_per_iter_s"] and max(pr["comm_s"]) == salar["comm_time_per_iter_s"]
assert max(pr["compute_s"]) == salar["compute_time_per_iter_s"] and all(c >= 0 for c in pr["cpu_s"])
assert salar["allreduce_rounds"] == 4 and salar["wait"] == "spin"
comm = json.loads((tmp / "comm" / "sinkhorn_mpi.json").read_text())
assert comm["compute_time_per_iter_s"] == 0 and comm["per_rank"]["compute_s"] == [0, 0, 0, 0]
assert comm["name"].endswith("ranks:4/rpn:2/chunks:2/part:comm/threads:1") and comm["comm_only"]
assert comm["time_per_iter_s"] == comm["comm_time_per_iter_s"] and comm["noise_rel_iqr"] >= 0
print("ok")
