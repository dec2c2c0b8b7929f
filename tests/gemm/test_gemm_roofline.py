"""The tight (per-BRGEMM) roofline of the GEMM figures: `rooflab gemm-knobs roofline` on the
gemm_small fixture run (real paper-profile rows of this VM with their machine.json), its file,
and its use by plots/gemm_data.py (summary columns, the 4096^3 target's model view) and
plots/gemm_performance.py (the drawn line). The rooflab binary comes from $ROOFLAB_BIN."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "plots"))
os.environ.setdefault("MPLBACKEND", "Agg")

from rooflab.data import gemm as gd  # noqa: E402
from rooflab.figures import gemm_performance  # noqa: E402
from rooflab.data.run import RooflabDataError  # noqa: E402

GEMM_SMALL = REPO / "tests" / "fixtures" / "gemm_small"
RL = os.environ.get("ROOFLAB_BIN", str(REPO / "build" / "release" / "harness" / "cli" / "rooflab"))


@pytest.fixture
def run(tmp_path) -> Path:
    if not Path(RL).is_file():
        pytest.skip(f"no rooflab binary at {RL} (set ROOFLAB_BIN)")
    dst = tmp_path / "gemm_small"
    shutil.copytree(GEMM_SMALL, dst)
    subprocess.run([RL, "gemm-knobs", "roofline", "--run", str(dst)], check=True, capture_output=True, text=True)
    return dst


def model_rows(run):
    return [r for r in json.loads((run / "model.json").read_text())["rows"] if r["family"] == "gemm"]


def test_one_bound_per_shape_never_above_the_fma_ceiling(run):
    doc = json.loads((run / "gemm_roofline.json").read_text())
    assert doc["schema"] == "rooflab.gemm_roofline/1"
    keys = {(r["dtype"], r["threads"], "x".join(map(str, r["dims"]))) for r in model_rows(run)}
    got = [(s["dtype"], s["threads"], s["mnk"]) for s in doc["shapes"]]
    assert sorted(got) == sorted(keys)  # every shape once
    for s in doc["shapes"]:
        t = s["tight"]
        assert t["gflops"] == pytest.approx(s["flops"] / t["seconds"] / 1e9)
        # the critical thread computes at least its share of the (padded) flops at the ceiling
        assert 0 < t["gflops"] <= s["compute_gflops"] * (1 + 1e-9)
        assert t["seconds"] == pytest.approx(t["pack_s"] + t["critical_s"] + t["reduce_s"])
        assert sum(t["brgemm_types"].values()) > 0
        # the bound is the least prediction: no configuration that ran is predicted faster
        for r in s["sfc_ca_runs"]:
            assert r["seconds"] >= t["seconds"] * (1 - 1e-12)
    ran = {r["name"] for s in doc["shapes"] for r in s["sfc_ca_runs"]}
    assert ran == {r["name"] for r in model_rows(run) if r["variant"] == "sfc_ca"}


def test_summary_and_points_carry_the_tight_bound(run):
    tight = gd.tight_roofline(run)
    pts, _ = gd.gemm_points(gd.load_run(run).model_df, tight)
    assert pts.tight_gflops.notna().all()
    by = tight.set_index(["dtype", "threads", "mnk"]).tight_gflops
    for _, p in pts.iterrows():
        assert p.tight_gflops == by[(p["dtype"], p.threads, p.mnk)]
    doc = gd.summary(run)
    for g in doc["groups"]:
        for v in g["implementations"]:
            sel = pts[(pts.impl == v["impl"]) & (pts["dtype"] == g["dtype"]) & (pts.threads == g["threads"])]
            assert v["tight_roofline_whm_gflops"] == pytest.approx(gd.whm(sel.flops, sel.tight_gflops))
            assert v["fraction_of_tight_roofline"] == pytest.approx(v["whm_gflops"] / v["tight_roofline_whm_gflops"])
    assert "/ tight" in gd.format_summary(doc)


def test_figure_draws_the_tight_roofline(run, tmp_path):
    res = gemm_performance.plot(run, tmp_path / "perf.png")
    assert res.has_data and res.out_path.stat().st_size > 40_000
    assert res.roofline.tight_gflops.notna().all()


def test_without_the_file_no_tight_columns(tmp_path):
    dst = tmp_path / "gemm_small"
    shutil.copytree(GEMM_SMALL, dst)
    (dst / "gemm_roofline.json").unlink(missing_ok=True)
    assert gd.tight_roofline(dst) is None
    doc = gd.summary(dst)
    assert all(v["tight_roofline_whm_gflops"] is None for g in doc["groups"] for v in g["implementations"])
    (dst / "gemm_roofline.json").write_text(json.dumps({"schema": "rooflab.other/1"}))
    with pytest.raises(RooflabDataError, match="gemm-knobs roofline"):
        gd.tight_roofline(dst)
