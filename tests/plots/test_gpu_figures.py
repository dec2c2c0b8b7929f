"""GPU figures on the gpu_run fixture (a real H100 run, see its README.md): the roofline draws
the device ceilings of machine.json's "gpu" section and the sinkhorn_cuda points with their
copy-bandwidth fractions; failed rows are listed, not drawn; the tile sweep finds the fastest
tiles; missing inputs are clear errors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, assert_png

from rooflab.figures import gpu_roofline
from rooflab.figures import gpu_sweep
from rooflab.data.run import RooflabDataError

GPU_RUN = REPO / "tests" / "fixtures" / "gpu_run"


def c_copy(run: Path) -> float:
    return json.loads((run / "machine.json").read_text())["gpu"]["bandwidth"]["DRAM"]["copy"]


def test_roofline_uses_the_measured_device_ceilings(tmp_path):
    res = gpu_roofline.plot(GPU_RUN, tmp_path / "gpu.png")
    assert_png(res.out_path, min_bytes=20_000)
    c = res.ceilings.set_index("name").value
    gpu = json.loads((GPU_RUN / "machine.json").read_text())["gpu"]
    assert c["fma_f32"] == gpu["compute"]["fma_f32"]
    assert c["DRAM copy"] == gpu["bandwidth"]["DRAM"]["copy"]
    assert c["L2 read"] == gpu["bandwidth"]["L2"]["read"]
    assert res.device.startswith("NVIDIA H100")


def test_points_and_copy_fractions_come_from_model_json(tmp_path):
    res = gpu_roofline.plot(GPU_RUN, tmp_path / "gpu.png")
    model = {r["name"]: r for r in json.loads((GPU_RUN / "model.json").read_text())["rows"]}
    p = res.points.set_index("name")
    name = "sinkhorn_cuda/fused_uv/f32/10240x10240/ty:2/tx:32/ny:8/rtx:128/rny:8/threads:1"
    assert p.loc[name, "attained_gflops"] == pytest.approx(model[name]["gflops"])
    assert p.loc[name, "copy_fraction"] == pytest.approx(model[name]["gbps"] / c_copy(GPU_RUN))
    assert p.loc[name, "predicted_gflops"] == pytest.approx(model[name]["flops"] / model[name]["predicted_s"] / 1e9)
    # mapuot moves twice fused_uv's bytes per flop (A updated twice vs K read twice).
    m = p.loc[name.replace("fused_uv", "mapuot").replace("/threads:1", "/part:iter/threads:1")]
    assert m.intensity == pytest.approx(p.loc[name, "intensity"] / 2, rel=1e-3)


def test_failed_rows_are_listed_not_drawn(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(GPU_RUN, run, ignore=shutil.ignore_patterns("*.md"))
    doc = json.loads((run / "model.json").read_text())
    bad = dict(doc["rows"][0], name="sinkhorn_cuda/mapuot/f32/1023x517/part:iter/threads:1", status="failed",
               message="verification failed: injected", median_s=None, gflops=None, gbps=None)
    doc["rows"].append(bad)
    (run / "model.json").write_text(json.dumps(doc))
    res = gpu_roofline.plot(run, tmp_path / "gpu.png")
    assert any("1023x517" in o and "failed" in o for o in res.omitted)
    assert not res.points.name.str.contains("1023x517").any()


def test_roofline_without_gpu_section_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(GPU_RUN, run, ignore=shutil.ignore_patterns("*.md"))
    doc = json.loads((run / "machine.json").read_text())
    del doc["gpu"]
    (run / "machine.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="rooflab gpu-characterize"):
        gpu_roofline.plot(run, tmp_path / "x.png")
    doc["gpu"] = {"schema": "rooflab.gpu/2"}
    (run / "machine.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="rooflab.gpu/1"):
        gpu_roofline.plot(run, tmp_path / "x.png")


def test_sweep_finds_the_fastest_tiles(tmp_path):
    res = gpu_sweep.plot(GPU_RUN, tmp_path / "sweep.png")
    assert_png(res.out_path, min_bytes=20_000)
    rows = [r for r in json.loads((GPU_RUN / "model.json").read_text())["rows"]
            if r["status"] == "ok" and r["params"].get("part") == "p2"]
    fastest = min(rows, key=lambda r: r["median_s"])
    assert res.best["p2"]["tx"] == int(fastest["params"]["tx"])
    assert res.best["p2"]["ny"] == int(fastest["params"]["ny"])
    assert res.best["p2"]["ms"] == pytest.approx(fastest["median_s"] * 1e3)
    assert res.grids["p2"].shape == (6, 5)   # ny 1..32 x tx 32..512 of the H100 sweep
    assert res.grids["p4"].shape == (6, 6)   # rny 1..32 x rtx 32..1024


def test_sweep_without_rows_is_a_clear_error(run_small, tmp_path):
    with pytest.raises(RooflabDataError, match="gpu_sweep.sh"):
        gpu_sweep.plot(run_small, tmp_path / "x.png")
