"""GEMM summary (WHM, targets, gemm_summary.json) and figures (per-shape GFLOP/s vs roofline,
WHM bars, simulated L2 misses), checked against the rows of tests/fixtures/gemm_small: a few
shapes of a real paper-profile run on this VM (scripts/gemm_paper.sh), with its machine.json and
the cachegrind L2 counters of the same run (gemm_l2/)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, assert_png, load, run_script, save

from rooflab.data import gemm as gd
from rooflab.figures import gemm_l2_misses
from rooflab.figures import gemm_performance
from rooflab.figures import gemm_whm
from rooflab.report import build as report
from rooflab.data.run import RooflabDataError

GEMM_SMALL = REPO / "tests" / "fixtures" / "gemm_small"


@pytest.fixture
def gemm_run(tmp_path) -> Path:
    dst = tmp_path / "gemm_small"
    shutil.copytree(GEMM_SMALL, dst)
    return dst


def ok_rows(run):
    return [r for r in load(run, "model.json")["rows"] if r["family"] == "gemm" and r["status"] == "ok"]


def impl(r):
    return r["variant"] + (f"/{r['isa']}" if r["isa"] else "")


def best_per_shape(run, dtype, threads):
    """{impl: {(m, n, k): (flops, seconds)}} with the fastest configuration per shape, from the raw JSON."""
    out = {}
    for r in ok_rows(run):
        if r["dtype"] != dtype or r["threads"] != threads:
            continue
        d = out.setdefault(impl(r), {})
        key = tuple(r["dims"])
        if key not in d or r["median_s"] < d[key][1]:
            d[key] = (r["flops"], r["median_s"])
    return out


def whm_raw(points, shapes=None):
    sel = [v for s, v in points.items() if shapes is None or s in shapes]
    return sum(f for f, _ in sel) / 1e9 / sum(t for _, t in sel)


def group(doc, dtype, threads):
    return next(g for g in doc["groups"] if g["dtype"] == dtype and g["threads"] == threads)


def target(doc, tid):
    return next(t for t in doc["targets"] if t["id"] == tid)


# ------------------------------------------------------------------------------ WHM

def test_whm_is_total_flops_over_total_time():
    # 1 GFLOP at 10 GFLOP/s (0.1 s) and 3 GFLOP at 100 GFLOP/s (0.03 s): 4 GFLOP in 0.13 s
    assert gd.whm([1e9, 3e9], [10.0, 100.0]) == pytest.approx(4 / 0.13)
    # equal weights: the plain harmonic mean
    assert gd.whm([5.0, 5.0], [1.0, 3.0]) == pytest.approx(2 / (1 + 1 / 3))
    assert gd.whm([], []) != gd.whm([], [])  # NaN
    with pytest.raises(RooflabDataError, match="non-positive"):
        gd.whm([1.0], [0.0])


def test_summary_whm_and_ratios_match_the_fixture_rows(gemm_run):
    doc = gd.summary(gemm_run)
    assert doc["schema"] == "rooflab.gemm_summary/1"
    for g in doc["groups"]:
        raw = best_per_shape(gemm_run, g["dtype"], g["threads"])
        assert {v["impl"] for v in g["implementations"]} == set(raw)
        base = {i: whm_raw(p) for i, p in raw.items() if i.split("/")[0] in gd.baselines(gemm_run)}
        assert g["best_baseline"] == max(base, key=base.get)
        for v in g["implementations"]:
            assert v["whm_gflops"] == pytest.approx(whm_raw(raw[v["impl"]]), rel=1e-12)
            assert v["n_shapes"] == len(raw[v["impl"]])
            common = set(raw[v["impl"]]) & set(raw[g["best_baseline"]])
            assert v["ratio_to_best_baseline"] == pytest.approx(
                whm_raw(raw[v["impl"]], common) / whm_raw(raw[g["best_baseline"]], common), rel=1e-12)


def test_fastest_configuration_stands_for_a_shape(gemm_run):
    pts, _ = gd.gemm_points(gd.load_run(gemm_run).model_df)
    multi = pts[pts.configs > 1]
    assert not multi.empty, "the fixture holds one shape with two sfc_ca configurations"
    for _, p in multi.iterrows():
        same = [r for r in ok_rows(gemm_run) if impl(r) == p.impl and r["dtype"] == p["dtype"]
                and r["threads"] == p.threads and "x".join(map(str, r["dims"])) == p.mnk]
        assert len(same) == p.configs
        assert p.gflops == max(r["gflops"] for r in same)


def test_ratio_uses_only_common_shapes(gemm_run):
    """Dropping a shape of the best baseline removes it from the ratio, not from the WHM."""
    doc = gd.summary(gemm_run)
    g = group(doc, "f64", 2)
    best = g["best_baseline"]
    rows = load(gemm_run, "model.json")
    gone = "gemm/" + best + "/f64/4096x4096x4096/threads:2"
    assert any(r["name"] == gone for r in rows["rows"])
    rows["rows"] = [r for r in rows["rows"] if r["name"] != gone]
    save(gemm_run, "model.json", rows)
    g2 = group(gd.summary(gemm_run), "f64", 2)
    sfc = next(v for v in g2["implementations"] if v["variant"] == "sfc_ca")
    raw = best_per_shape(gemm_run, "f64", 2)
    common = set(raw[sfc["impl"]]) & set(raw[g2["best_baseline"]])
    assert (4096, 4096, 4096) not in common and sfc["common_shapes_with_best_baseline"] == len(common)
    assert sfc["whm_gflops"] == pytest.approx(whm_raw(raw[sfc["impl"]]))  # still over all its shapes


def test_failed_rows_are_listed_not_used(gemm_run):
    doc = load(gemm_run, "model.json")
    victim = next(r for r in doc["rows"] if r["family"] == "gemm" and r["variant"] == "openblas")
    victim.update(status="failed", message="verification failed: x", median_s=None, gflops=None, gbps=None,
                  efficiency=None)
    save(gemm_run, "model.json", doc)
    s = gd.summary(gemm_run)
    assert any(o.startswith(victim["name"] + ": failed (verification failed") for o in s["not_used"])
    g = group(s, victim["dtype"], victim["threads"])
    ob = next(v for v in g["implementations"] if v["impl"] == "openblas")
    assert ob["n_shapes"] == len(best_per_shape(gemm_run, victim["dtype"], victim["threads"])["openblas"])


# ---------------------------------------------------------------------------- targets

def test_targets_state_reached_with_the_numbers(gemm_run):
    doc = gd.summary(gemm_run)
    machine = load(gemm_run, "machine.json")
    t = target(doc, "f64_fma_fraction_4096")
    row = next(r for r in ok_rows(gemm_run) if r["variant"] == "sfc_ca" and r["dtype"] == "f64"
               and r["dims"] == [4096, 4096, 4096])
    ceil = machine["compute"]["ceilings"]["fma_f64"][str(row["threads"])]
    assert t["value"] == pytest.approx(row["gflops"] / ceil) and t["fma_f64_gflops"] == ceil
    assert t["reached"] is (row["gflops"] / ceil >= 0.85)
    t = target(doc, "f64_whm_vs_best_baseline")
    sfc = next(v for v in group(doc, "f64", 2)["implementations"] if v["variant"] == "sfc_ca")
    assert t["value"] == sfc["ratio_to_best_baseline"] and t["reached"] is (t["value"] >= 1.5)
    t = target(doc, "f32_whm_vs_onednn")
    raw = best_per_shape(gemm_run, "f32", 2)
    common = set(raw[t["impl"]]) & set(raw["onednn"])
    assert t["value"] == pytest.approx(whm_raw(raw[t["impl"]], common) / whm_raw(raw["onednn"], common))
    assert t["reached"] is (t["value"] >= 1.0) and t["baseline"] == "onednn"


def test_targets_not_evaluated_say_why(gemm_run):
    doc = load(gemm_run, "model.json")
    doc["rows"] = [r for r in doc["rows"] if r["variant"] != "onednn" and r["dims"] != [4096, 4096, 4096]]
    save(gemm_run, "model.json", doc)
    s = gd.summary(gemm_run)
    for tid, why in (("f64_fma_fraction_4096", "4096x4096x4096"), ("f32_whm_vs_onednn", "no ok onednn")):
        t = target(s, tid)
        assert t["reached"] is None and t["value"] is None and why in t["reason"]
    assert target(s, "f64_whm_vs_best_baseline")["reached"] is not None


def test_summary_file_and_command_line(gemm_run, tmp_path):
    p = run_script("gemm_summary.py", str(gemm_run))
    assert p.returncode == 0, p.stderr
    path = gemm_run / "gemm_summary.json"
    assert p.stdout.strip().splitlines()[-1] == str(path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "rooflab.gemm_summary/1" and len(doc["targets"]) == 3
    assert "f64_whm_vs_best_baseline" in p.stdout and "WHM GFLOP/s" in p.stdout
    p = run_script("gemm_summary.py", str(tmp_path / "nope"))
    assert p.returncode == 1 and "does not exist" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------------------- figures

def test_performance_shapes_sorted_by_intensity_with_roofline(gemm_run, tmp_path):
    res = gemm_performance.plot(gemm_run, tmp_path / "perf.png")
    assert_png(res.out_path, min_bytes=40_000)
    assert res.has_data
    rows = ok_rows(gemm_run)
    for (dt, t), shapes in res.order.items():
        inten = {"x".join(map(str, r["dims"])): r["intensity"] for r in rows if r["dtype"] == dt and r["threads"] == t}
        assert set(shapes) == set(inten)
        assert [inten[s] for s in shapes] == sorted(inten.values())
        roof = res.roofline[(res.roofline["dtype"] == dt) & (res.roofline.threads == t)].set_index("mnk")
        for r in rows:
            if r["dtype"] == dt and r["threads"] == t:
                s = "x".join(map(str, r["dims"]))
                assert roof.loc[s, "roof_gflops"] == pytest.approx(r["flops"] / r["predicted_s"] / 1e9)
                assert roof.loc[s, "roof_gflops"] <= res.fma[(dt, t)] * (1 + 1e-9)
    # every point sits at its shape's position
    for _, p in res.points.iterrows():
        assert res.order[(p["dtype"], p.threads)][int(p.x)] == p.mnk


def test_whm_bars_are_the_summary(gemm_run, tmp_path):
    res = gemm_whm.plot(gemm_run, tmp_path / "whm.png")
    assert_png(res.out_path, min_bytes=30_000)
    want = {(g["dtype"], g["threads"], v["impl"]): v["whm_gflops"] for g in res.summary["groups"]
            for v in g["implementations"]}
    assert {(b["dtype"], b["threads"], b["impl"]): b["whm_gflops"] for b in res.bars} == want
    assert "NOT reached" in gemm_whm.target_line({"id": "x", "value": 0.5, "target": 1.5, "reached": False})


def test_l2_misses_per_case_and_best_baseline(gemm_run, tmp_path):
    res = gemm_l2_misses.plot(gemm_run, tmp_path / "l2.png")
    assert_png(res.out_path, min_bytes=30_000)
    assert res.config["LL_level"] == "L2"
    raw = {r["name"]: r for r in load(gemm_run / "gemm_l2", "counters.json")["rows"] if r["status"] == "ok"}
    rows = res.rows.set_index("name")
    assert set(rows.index) == set(raw)
    for n, r in raw.items():
        assert rows.loc[n, "l2_misses"] == r["events"]["DLmr"] + r["events"]["DLmw"]
    assert sorted(rows[rows.variant == "sfc_ca"].k_layers) == [1, 2, 4]
    best = gd.summary(gemm_run)
    dt = rows["dtype"].iloc[0]
    want = max((g for g in best["groups"] if g["dtype"] == dt), key=lambda g: g["threads"])["best_baseline"]
    assert rows[rows.best_baseline].impl.tolist() == [want]
    timed = {r["name"]: r["gflops"] for r in load(gemm_run / "gemm_l2", "model.json")["rows"] if r["status"] == "ok"}
    for n, g in timed.items():
        assert rows.loc[n, "gflops"] == g


def test_l2_misses_refuses_an_l3_simulation_and_a_missing_file(gemm_run, tmp_path):
    doc = load(gemm_run / "gemm_l2", "counters.json")
    for b in doc["backends"]:
        if b["name"] == "cachegrind":
            b["config"]["LL_level"] = "L3"
    save(gemm_run / "gemm_l2", "counters.json", doc)
    with pytest.raises(RooflabDataError, match="not L2"):
        gemm_l2_misses.plot(gemm_run, tmp_path / "l2.png")
    shutil.rmtree(gemm_run / "gemm_l2")
    with pytest.raises(RooflabDataError, match="--ll-level L2"):
        gemm_l2_misses.plot(gemm_run, tmp_path / "l2.png")


def test_l2_failed_case_is_listed(gemm_run, tmp_path):
    doc = load(gemm_run / "gemm_l2", "counters.json")
    r = next(r for r in doc["rows"] if "k_layers:4" in r["name"])
    r.update(status="failed", message="valgrind child timed out")
    del r["events"], r["derived"]
    save(gemm_run / "gemm_l2", "counters.json", doc)
    res = gemm_l2_misses.plot(gemm_run, tmp_path / "l2.png")
    assert r["name"] not in set(res.rows.name)
    assert res.omitted == [f"{r['name']}: failed (valgrind child timed out)"]


@pytest.mark.parametrize("module", [gemm_performance, gemm_whm])
def test_run_without_gemm_draws_a_note(gemm_run, tmp_path, module):
    doc = load(gemm_run, "model.json")
    doc["rows"] = [r for r in doc["rows"] if r["family"] != "gemm"]
    save(gemm_run, "model.json", doc)
    res = module.plot(gemm_run, tmp_path / "x.png")
    assert not res.has_data
    assert_png(res.out_path, min_bytes=3_000)


def test_report_has_the_gemm_section(gemm_run, tmp_path):
    index = report.build(gemm_run, tmp_path / "rep")
    assert 'href="gemm.html"' in index.read_text()
    sec = (tmp_path / "rep" / "gemm.html").read_text()
    for png in ("gemm_performance.png", "gemm_whm.png", "gemm_l2_misses.png"):
        assert f'<img src="{png}"' in sec
        assert_png(tmp_path / "rep" / png, min_bytes=20_000)
    assert "not drawn" not in sec[sec.index("<h2>Figures</h2>"):sec.index("<h2>GEMM knob selection")]


@pytest.mark.parametrize("name", ["gemm_performance", "gemm_whm", "gemm_l2_misses"])
def test_gemm_script_command_line(gemm_run, tmp_path, name):
    out = tmp_path / f"{name}.png"
    p = run_script("figure.py", name, str(gemm_run), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == str(out)


# ------------------------------------------------------------------ scripts/gemm_paper.sh

@pytest.mark.parametrize("args,msg", [(["--dtype", "f16"], "--dtype must be f64, f32 or all, got 'f16'"),
                                      (["--max-size", "300"], "--max-size must be one of 256 512 1024 2048 4096"),
                                      (["--l2-shape", "512x512"], "--l2-shape must be MxNxK, got '512x512'"),
                                      (["--reps", "0"], "--reps must be a positive integer"),
                                      (["--bogus"], "unknown option '--bogus'")])
def test_gemm_paper_script_refuses_bad_options(tmp_path, args, msg):
    import subprocess
    p = subprocess.run(["bash", str(REPO / "scripts" / "gemm_paper.sh"), "--out", str(tmp_path / "r"), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode in (1, 2) and msg in p.stderr, p.stderr
    assert not (tmp_path / "r").exists()  # nothing written before the options are checked
