"""The tight (per-BRGEMM) roofline of the GEMM figures: `rooflab model` puts it into model.json
(predictions.tight / .brgemm of the sfc_ca rows) for the gemm_small fixture run (real
paper-profile rows of this VM with their machine.json), and plots/rooflab/data/gemm.py uses it
(summary columns, the 4096^3 target's model view) as does the figure (the drawn line). The
fixture holds model.json only, so the test gives `rooflab model` a bench.json made of its rows
(names, model fields, median times) and takes the predictions it writes into a copy of the
fixture's model.json. The rooflab binary comes from $ROOFLAB_BIN."""
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
FIELDS = ("name", "family", "variant", "isa", "dtype", "dims", "params", "threads", "flops", "bytes")


def bench_of(model: dict) -> dict:
    """A bench.json with the fixture model's cases: their rooflab fields and median times."""
    benchmarks = []
    for r in model["rows"]:
        rl = {k: r[k] for k in FIELDS}
        benchmarks.append({"name": r["name"], "run_name": r["name"], "run_type": "iteration",
                           "real_time": r["median_s"], "time_unit": "s", "rooflab": rl})
    return {"schema": "rooflab.bench/1", "context": {}, "benchmarks": benchmarks}


@pytest.fixture
def run(tmp_path) -> Path:
    if not Path(RL).is_file():
        pytest.skip(f"no rooflab binary at {RL} (set ROOFLAB_BIN)")
    dst = tmp_path / "gemm_small"
    shutil.copytree(GEMM_SMALL, dst)
    model = json.loads((dst / "model.json").read_text())
    made = tmp_path / "made"
    made.mkdir()
    (made / "bench.json").write_text(json.dumps(bench_of(model)))
    subprocess.run([RL, "model", "--bench", str(made / "bench.json"), "--machine", str(dst / "machine.json"),
                    "--out", str(made)], check=True, capture_output=True, text=True)
    preds = {r["name"]: r["predictions"] for r in json.loads((made / "model.json").read_text())["rows"]}
    for r in model["rows"]:
        r["predictions"] = preds[r["name"]]
    (dst / "model.json").write_text(json.dumps(model))
    return dst


def model_rows(run):
    return [r for r in json.loads((run / "model.json").read_text())["rows"] if r["family"] == "gemm"]


def test_one_bound_per_shape_never_above_the_fma_ceiling(run):
    rows = model_rows(run)
    keys = {(r["dtype"], r["threads"], "x".join(map(str, r["dims"]))) for r in rows}
    tight = gd.tight_roofline(run)
    got = list(zip(tight["dtype"], tight.threads, tight["mnk"]))
    assert sorted(got) == sorted(keys)  # every shape once
    assert all(r["predictions"] == {} for r in rows if r["variant"] != "sfc_ca")  # sfc_ca's own model
    sfc = [r for r in rows if r["variant"] == "sfc_ca"]
    assert sfc and all(set(r["predictions"]) == {"tight", "brgemm"} for r in sfc)
    for r in sfc:
        t = r["predictions"]["tight"]
        assert t["gflops"] == pytest.approx(r["flops"] / t["time_s"] / 1e9)
        # the critical thread computes at least its share of the (padded) flops at the ceiling
        assert 0 < t["gflops"] <= t["compute_gflops"] * (1 + 1e-9)
        assert t["time_s"] == pytest.approx(t["pack_s"] + t["critical_s"] + t["reduce_s"])
        assert sum(t["brgemm_types"].values()) > 0
    for _, s in tight.iterrows():
        # the bound is the least prediction: no configuration that ran is predicted faster
        for x in s.sfc_ca_runs:
            assert x["seconds"] >= s.tight_s * (1 - 1e-12)
    ran = {x["name"] for runs in tight.sfc_ca_runs for x in runs}
    assert ran == {r["name"] for r in sfc}


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


def test_without_predictions_no_tight_columns(run):
    model = json.loads((run / "model.json").read_text())
    good = json.dumps(model)
    for r in model["rows"]:
        r["predictions"] = {}
    (run / "model.json").write_text(json.dumps(model))
    assert gd.tight_roofline(run) is None
    doc = gd.summary(run)
    assert all(v["tight_roofline_whm_gflops"] is None for g in doc["groups"] for v in g["implementations"])
    # a malformed bound is an error naming the key path, never a silent gap
    model = json.loads(good)
    sfc = next(i for i, r in enumerate(model["rows"]) if r["predictions"])
    model["rows"][sfc]["predictions"]["tight"]["time_s"] = "fast"
    (run / "model.json").write_text(json.dumps(model))
    with pytest.raises(RooflabDataError, match=rf"rows\[{sfc}\]\.predictions\.tight\.time_s"):
        gd.tight_roofline(run)
