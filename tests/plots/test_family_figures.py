"""Per-family figures: Sinkhorn breakdown and iterations, Floyd-Warshall performance, checked
against the fixture rows they must plot (tests/fixtures/run_families)."""
from __future__ import annotations

import pytest
from conftest import assert_png, load, run_script, save

from rooflab.figures import fw_performance
from rooflab.figures import sinkhorn_breakdown
from rooflab.figures import sinkhorn_iteration


def rows(run, family=None, status="ok"):
    return {r["name"]: r for r in load(run, "model.json")["rows"]
            if (family is None or r["family"] == family) and (status is None or r["status"] == status)}


def drop_family(run, family):
    doc = load(run, "model.json")
    doc["rows"] = [r for r in doc["rows"] if r["family"] != family]
    save(run, "model.json", doc)


# ------------------------------------------------------------------- Sinkhorn breakdown

def test_breakdown_speedups_are_ratios_of_fixture_medians(run_families, tmp_path):
    res = sinkhorn_breakdown.plot(run_families, tmp_path / "bd.png")
    assert_png(res.out_path, min_bytes=30_000)
    assert res.has_data
    r = rows(run_families, "sinkhorn")
    col = {n: x for n, x in r.items() if x["params"].get("part") == "col"}
    assert sorted(res.bars.name) == sorted(col)  # every ok part:col row, nothing else
    f64 = res.bars[res.bars.group == "f64 4096x4096, 1 thread"]
    # COFFEE's order, microkernel per ISA
    assert f64.label.str.split("\n").str[0].tolist() == ["typical", "c2r", "blocked", "microkernel/scalar",
                                                       "microkernel/avx2"]
    typical = r["sinkhorn/typical/f64/4096x4096/part:col/threads:1"]["median_s"]
    for _, b in f64.iterrows():
        assert b.median_s == r[b["name"]]["median_s"]
        assert b.speedup == pytest.approx(typical / r[b["name"]]["median_s"], rel=1e-12)
    mk = f64[f64.label == "microkernel/avx2"].iloc[0]
    assert mk.speedup == pytest.approx(0.432114622 / 0.013821837666666666)  # 31.3x


def test_breakdown_row_col_ratio_of_typical(run_families, tmp_path):
    res = sinkhorn_breakdown.plot(run_families, tmp_path / "bd.png")
    r = rows(run_families, "sinkhorn")
    rc = res.row_col.set_index("dtype")
    for dt in ("f32", "f64"):
        col = r[f"sinkhorn/typical/{dt}/4096x4096/part:col/threads:1"]["median_s"]
        row = r[f"sinkhorn/typical/{dt}/4096x4096/part:row/threads:1"]["median_s"]
        assert rc.loc[dt, "ratio"] == pytest.approx(col / row)
    assert rc.loc["f64", "ratio"] == pytest.approx(34.81, abs=0.01)


def test_breakdown_lists_failed_and_skipped_rows_and_never_plots_them(run_families, tmp_path):
    res = sinkhorn_breakdown.plot(run_families, tmp_path / "bd.png")
    bad = rows(run_families, "sinkhorn", status=None)
    bad = {n for n, x in bad.items() if x["status"] != "ok"}
    assert bad == {"sinkhorn/c2r/f32/1023x517/part:col/threads:1",
                   "sinkhorn/microkernel/avx512/f64/4096x4096/part:col/threads:1"}
    assert not bad & set(res.bars.name)
    assert any(o.startswith("sinkhorn/c2r/f32/1023x517/part:col/threads:1: failed (verification failed")
               for o in res.omitted)
    assert any("avx512" in o and "skipped" in o for o in res.omitted)
    # the failed row was the only part:col row at 1023x517: that problem gets no panel
    assert not (res.bars.dims == "1023x517").any()


def test_breakdown_without_typical_has_no_speedups(families_copy, tmp_path):
    doc = load(families_copy, "model.json")
    doc["rows"] = [r for r in doc["rows"] if r["variant"] != "typical"]
    save(families_copy, "model.json", doc)
    res = sinkhorn_breakdown.plot(families_copy, tmp_path / "bd.png")
    assert res.has_data and res.bars.speedup.isna().all() and res.row_col.empty


# ------------------------------------------------------------------ Sinkhorn iterations

def test_iteration_panel_rows(run_families, tmp_path):
    res = sinkhorn_iteration.plot(run_families, tmp_path / "it.png")
    assert_png(res.out_path, min_bytes=40_000)
    r = rows(run_families, "sinkhorn")
    want = {n for n, x in r.items() if x["threads"] == 1 and x["params"].get("part", "iter") == "iter"}
    assert set(res.per_iter.name) == want
    # the fused variants (no part) are in, column and row passes are not
    assert "sinkhorn/fused_uv/avx2/f64/4096x4096/threads:1" in want
    assert not any("part:col" in n or "part:row" in n for n in res.per_iter.name)
    pi = res.per_iter.set_index("name")
    assert pi.loc["sinkhorn/mapuot/avx2/f64/1023x517/threads:1", "median_s"] == \
        r["sinkhorn/mapuot/avx2/f64/1023x517/threads:1"]["median_s"]


def test_iteration_bandwidth_fraction_of_dram_ceiling(run_families, tmp_path):
    res = sinkhorn_iteration.plot(run_families, tmp_path / "it.png")
    r = rows(run_families, "sinkhorn")
    bw = res.bandwidth.set_index("name")
    # exactly the iteration rows the model places in DRAM
    want = {n for n, x in r.items() if x["level"] == "DRAM" and x["params"].get("part", "iter") == "iter"}
    assert set(bw.index) == want and len(want) == 25
    for n in want:
        assert bw.loc[n, "fraction"] == pytest.approx(r[n]["gbps"] / r[n]["ceiling_gbps"])
        assert bw.loc[n, "fraction"] == pytest.approx(r[n]["efficiency"], rel=1e-6)  # memory-bound rows
    assert bw.loc["sinkhorn/mapuot/avx2/f64/4096x4096/threads:2", "threads"] == 2


def test_iteration_thread_scaling_pairs(run_families, tmp_path):
    res = sinkhorn_iteration.plot(run_families, tmp_path / "it.png")
    r = rows(run_families, "sinkhorn")
    sc = res.scaling.set_index("label")
    # five cases ran at 1 and 2 threads; the fi:0.7 2-thread rows have no 1-thread twin
    assert len(sc) == 5 and set(sc.threads) == {2}
    t1 = r["sinkhorn/mapuot/avx2/f64/4096x4096/threads:1"]["median_s"]
    t2 = r["sinkhorn/mapuot/avx2/f64/4096x4096/threads:2"]["median_s"]
    assert sc.loc["mapuot/avx2 f64 4096x4096", "speedup"] == pytest.approx(t1 / t2)
    assert not any("fi:0.7" in lab for lab in sc.index)


# -------------------------------------------------------------------- Floyd-Warshall

def test_fw_points_and_fraction_of_addmin_ceiling(run_families, tmp_path):
    res = fw_performance.plot(run_families, tmp_path / "fw.png")
    assert_png(res.out_path, min_bytes=40_000)
    machine = load(run_families, "machine.json")["compute"]["ceilings"]
    r = rows(run_families, "floyd_warshall")
    pts = res.points.set_index("name")
    assert set(pts.index) == set(r)
    for n, x in r.items():
        ceil = machine[f"addmin_{x['dtype']}"][str(x["threads"])]
        assert pts.loc[n, "gflops"] == x["gflops"]
        assert pts.loc[n, "ceiling_gflops"] == ceil
        assert pts.loc[n, "fraction"] == pytest.approx(x["gflops"] / ceil)
    opt = "floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/bs:64/task:256/threads:1"
    assert pts.loc[opt, "fraction"] == pytest.approx(45.19786 / 51.39104, rel=1e-5)
    # bs/task are the same on every row: not in the labels; sched/layout are
    assert pts.loc[opt, "series"] == "regblock/avx2 sched:rec layout:bdl"
    assert pts.loc["floyd_warshall/naive/f32/1024x1024/threads:1", "series"] == "naive"


def test_fw_fraction_against_the_isa_that_priced_the_row(families_copy, tmp_path):
    machine = load(families_copy, "machine.json")
    ceil = machine["compute"]["ceilings"]
    machine["compute"]["by_isa"] = {"scalar": {"ceilings": {k: {t: v / 4 for t, v in per_t.items()} for k, per_t in ceil.items()}},
                                    machine["compute"]["isa"]: {"ceilings": ceil}}
    save(families_copy, "machine.json", machine)
    doc = load(families_copy, "model.json")
    naive = "floyd_warshall/naive/f32/1024x1024/threads:1"
    for r in doc["rows"]:
        if r["name"] == naive:  # own code without an ISA: priced at the baseline target, as `rooflab model` writes it
            r["compute_isa"] = "scalar"
            r["ceiling_gflops"] = machine["compute"]["by_isa"]["scalar"]["ceilings"]["addmin_f32"]["1"]
    save(families_copy, "model.json", doc)
    pts = fw_performance.plot(families_copy, tmp_path / "fw.png").points.set_index("name")
    g = rows(families_copy, "floyd_warshall")[naive]["gflops"]
    assert pts.loc[naive, "ceiling_gflops"] == pytest.approx(ceil["addmin_f32"]["1"] / 4)
    assert pts.loc[naive, "fraction"] == pytest.approx(g / (ceil["addmin_f32"]["1"] / 4))
    opt = "floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/bs:64/task:256/threads:1"
    assert pts.loc[opt, "ceiling_gflops"] == ceil["addmin_f32"]["1"]  # no compute_isa: the widest ISA's


def test_fw_ablations(run_families, tmp_path):
    res = fw_performance.plot(run_families, tmp_path / "fw.png")
    ab = res.ablation
    one = ab[(ab.n == 1024) & (ab.threads == 1) & (ab.isa == "avx2")].set_index("ablation")
    assert one.index.tolist() == fw_performance.ABLATIONS
    assert one.loc["Rec-OPT", "name"].startswith("floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/")
    assert one.loc["NonRec-OPT", "name"].startswith("floyd_warshall/regblock/avx2/f32/1024x1024/sched:blocked/layout:bdl/")
    assert one.loc["Rec-NoBDL", "name"].startswith("floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:std/")
    assert one.loc["Rec-NoRBK", "name"].startswith("floyd_warshall/bdl/avx2/f32/1024x1024/sched:rec/")
    assert (one.fraction == one.gflops / one.ceiling_gflops).all()
    # f64 ablations are against addmin_f64
    f64 = ab[ab["dtype"] == "f64"]
    assert len(f64) == 4 and (f64.ceiling_gflops == 25.67860647127406).all()
    assert fw_performance.ablation_of("regblock", {"sched": "blocked", "layout": "std"}) is None
    assert fw_performance.ablation_of("simd", {"sched": "rec", "layout": "bdl"}) is None


def test_fw_failed_row_listed_not_plotted(run_families, tmp_path):
    res = fw_performance.plot(run_families, tmp_path / "fw.png")
    failed = "floyd_warshall/regblock/avx2/f32/777x777/sched:blocked/layout:bdl/bs:64/threads:2"
    assert failed not in set(res.points.name) and failed not in set(res.ablation.name)
    assert any(o.startswith(failed + ": failed (verification failed") for o in res.omitted)


def test_fw_without_addmin_ceiling(families_copy, tmp_path):
    doc = load(families_copy, "machine.json")
    doc["compute"]["ceilings"] = {k: v for k, v in doc["compute"]["ceilings"].items() if not k.startswith("addmin")}
    save(families_copy, "machine.json", doc)
    model = load(families_copy, "model.json")
    for r in model["rows"]:  # `rooflab model` on that machine.json: FW's addmin ceiling is missing, no prediction
        if r["family"] == "floyd_warshall":
            r.update({k: None for k in ("predicted_s", "bound", "level", "ceiling_gflops", "compute_isa",
                                        "ceiling_gbps", "efficiency")})
    save(families_copy, "model.json", model)
    res = fw_performance.plot(families_copy, tmp_path / "fw.png")
    assert res.has_data and res.ceilings.empty
    assert res.points.fraction.isna().all() and res.points.gflops.notna().all()
    assert "no addmin ceiling" in res.omitted[0]


# ------------------------------------------------------------------ a family is absent

@pytest.mark.parametrize("module,family", [(sinkhorn_breakdown, "sinkhorn"), (sinkhorn_iteration, "sinkhorn"),
                                           (fw_performance, "floyd_warshall")])
def test_missing_family_draws_a_note(families_copy, tmp_path, module, family):
    drop_family(families_copy, family)
    res = module.plot(families_copy, tmp_path / "x.png")
    assert not res.has_data and res.omitted == []
    assert_png(res.out_path, min_bytes=3_000)


def test_family_with_only_failed_rows_lists_them(families_copy, tmp_path):
    doc = load(families_copy, "model.json")
    for r in doc["rows"]:
        if r["family"] == "floyd_warshall":
            r.update(status="failed", message="verification failed: x", median_s=None, gflops=None, gbps=None,
                     efficiency=None)
    save(families_copy, "model.json", doc)
    res = fw_performance.plot(families_copy, tmp_path / "fw.png")
    assert not res.has_data and len(res.omitted) == len(rows(families_copy, "floyd_warshall", status=None))


@pytest.mark.parametrize("name", ["sinkhorn_breakdown", "sinkhorn_iteration", "fw_performance"])
def test_family_script_command_line(run_families, tmp_path, name):
    out = tmp_path / f"{name}.png"
    p = run_script("figure.py", name, str(run_families), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == str(out)
    p = run_script("figure.py", name, str(tmp_path / "nope"), "--out", str(tmp_path / "y.png"))
    assert p.returncode == 1 and "does not exist" in p.stderr and "Traceback" not in p.stderr
