"""integrations/reframe/references.py on the stored gate runs: every reference is the run's own
figure (machine.json ceilings, model.json kernels), with the tolerance on the side that is a
regression; several systems share one file; bad input is refused with a message."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "integrations" / "reframe" / "references.py"
ZEN5 = REPO / "results" / "baselines" / "gate-zen5"   # per-ISA ceilings (compute.by_isa)
ZEN3 = REPO / "results" / "baselines" / "gate"        # one ISA (compute.isa, no by_isa)


def refs(run: Path, out: Path, *extra: str, system: str = "cluster:compute"):
    return subprocess.run([sys.executable, str(SCRIPT), str(run), "--system", system,
                           "--out", str(out), *extra], capture_output=True, text=True)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_values_are_the_runs(tmp_path):
    out = tmp_path / "refs.json"
    r = refs(ZEN5, out)
    assert r.returncode == 0, r.stderr
    entry = load(out)["systems"]["cluster:compute"]
    machine = load(ZEN5 / "machine.json")
    ch = entry["rooflab_characterize"]["references"]
    levels = machine["bandwidth"]["levels"]
    assert ch["bw_DRAM_read_t1"] == [levels["DRAM"]["read"]["1"], -0.1, None, "GB/s"]
    assert ch["bw_L1_read_t1"][0] == levels["L1"]["read"]["1"]
    by_isa = machine["compute"]["by_isa"]
    for isa in by_isa:   # every ISA of the run, f64 and f32 FMA and add+min
        for op in ("fma_f64", "fma_f32", "addmin_f64", "addmin_f32"):
            assert ch[f"{op}_{isa}_t1"] == [by_isa[isa]["ceilings"][op]["1"], -0.1, None, "GFLOP/s"]
    assert len(ch) == 2 + 4 * len(by_isa)   # the stored run measured 1 thread only

    model = load(ZEN5 / "model.json")
    bench = entry["rooflab_bench"]
    assert bench["cases"] == sorted(row["name"] for row in model["rows"])
    for row in model["rows"]:
        key = row["name"].replace(":", "=")
        assert bench["references"][f"{key}/efficiency"] == [row["efficiency"], -0.1, None,
                                                            "attained/predicted"]
        assert bench["references"][f"{key}/gflops"][0] == row["gflops"]
        # A time regresses upwards: its tolerance is the upper one.
        assert bench["references"][f"{key}/time"] == [row["median_s"], None, 0.1, "s"]
    assert entry["source"]["tolerance"] == 0.1


def test_one_isa_run_tolerance_both_sides_filter_and_merge(tmp_path):
    out = tmp_path / "refs.json"
    assert refs(ZEN5, out, system="zen5").returncode == 0
    r = refs(ZEN3, out, "--tolerance", "0.05", "--both-sides", "--filter", "^gemm/", system="zen3")
    assert r.returncode == 0, r.stderr
    doc = load(out)
    assert set(doc["systems"]) == {"zen5", "zen3"}   # the first system is kept
    machine = load(ZEN3 / "machine.json")
    ch = doc["systems"]["zen3"]["rooflab_characterize"]["references"]
    isa = machine["compute"]["isa"]
    assert ch[f"fma_f64_{isa}_t1"] == [machine["compute"]["ceilings"]["fma_f64"]["1"], -0.05, 0.05,
                                       "GFLOP/s"]
    bench = doc["systems"]["zen3"]["rooflab_bench"]
    assert bench["cases"] and all(c.startswith("gemm/") for c in bench["cases"])
    assert all(v[1] == -0.05 and v[2] == 0.05 for v in bench["references"].values())


@pytest.mark.parametrize("args,rc,msg", [
    (["--tolerance", "1.5"], 2, "expected a fraction"),
    (["--filter", "("], 2, "--filter"),
    (["--filter", "^nothing/"], 1, "no measured and predicted kernel matches"),
    (["--system", "a:b:c"], 2, "expected NAME or NAME:PARTITION"),
])
def test_bad_input(tmp_path, args, rc, msg):
    r = subprocess.run([sys.executable, str(SCRIPT), str(ZEN5), "--out", str(tmp_path / "r.json"),
                        *(["--system", "s"] if "--system" not in args else []), *args],
                       capture_output=True, text=True)
    assert r.returncode == rc and msg in r.stderr, r.stderr
    assert not (tmp_path / "r.json").exists()


def test_not_a_run(tmp_path):
    r = refs(tmp_path, tmp_path / "r.json")
    assert r.returncode == 1 and "neither machine.json nor model.json" in r.stderr
    (tmp_path / "machine.json").write_text('{"schema": "rooflab.bench/1"}')
    r = refs(tmp_path, tmp_path / "r.json")
    assert r.returncode == 1 and "expected 'rooflab.machine/1'" in r.stderr
