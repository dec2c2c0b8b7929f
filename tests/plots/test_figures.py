"""Each figure script on the fixture run: a real PNG, and the data it drew."""
from __future__ import annotations

import copy

import pytest
from conftest import assert_png, load, run_script, save

from rooflab.figures import attained_vs_predicted
from rooflab.figures import bandwidth
from rooflab.figures import common as fc
from rooflab.figures import cache_misses
from rooflab.figures import roofline
from rooflab.data.run import RooflabDataError


def ok_rows(run):
    return [r for r in load(run, "model.json")["rows"] if r["status"] == "ok"]


# ------------------------------------------------------------------------------ roofline

def test_roofline_draws_documented_ceilings_and_points(run_small, tmp_path):
    res = roofline.plot(run_small, tmp_path / "roofline.png")
    assert_png(res.out_path, min_bytes=40_000)
    machine = load(run_small, "machine.json")
    bw = res.ceilings[res.ceilings.kind == "bandwidth"].set_index(["name", "threads"]).value
    # at the machine's largest thread count, with the default kernel "read"
    assert res.kernel == "read"
    assert bw[("DRAM", 2)] == machine["bandwidth"]["levels"]["DRAM"]["read"]["2"]
    assert bw[("L1", 1)] == machine["bandwidth"]["levels"]["L1"]["read"]["1"]
    assert sorted({n for n, _ in bw.index}) == ["DRAM", "L1", "L2", "L3"]
    comp = res.ceilings[res.ceilings.kind == "compute"]
    for key, per_t in machine["compute"]["ceilings"].items():
        got = comp[comp.name == key].set_index("threads").value.to_dict()
        assert got == {int(t): v for t, v in per_t.items()}

    rows = ok_rows(run_small)
    assert len(res.points) == len(rows) == 7
    by_name = res.points.set_index("name")
    for r in rows:
        assert by_name.loc[r["name"], "attained_gflops"] == r["gflops"]
        assert by_name.loc[r["name"], "predicted_gflops"] == pytest.approx(r["flops"] / r["predicted_s"] / 1e9)
    assert any(o.startswith("sinkhorn/blocked/f64/1000x777/threads:1: failed") for o in res.omitted)


def test_roofline_other_kernel_and_unknown_kernel(run_small, tmp_path):
    res = roofline.plot(run_small, tmp_path / "r.png", kernel="copy")
    bw = res.ceilings[res.ceilings.kind == "bandwidth"].set_index(["name", "threads"]).value
    assert bw[("DRAM", 2)] == load(run_small, "machine.json")["bandwidth"]["levels"]["DRAM"]["copy"]["2"]
    with pytest.raises(RooflabDataError, match='kernel "stream".*available: copy, copy_nt, read, triad'):
        roofline.plot(run_small, tmp_path / "r2.png", kernel="stream")


def test_roofline_with_fifty_points_and_a_missing_prediction(run_copy, tmp_path):
    model = load(run_copy, "model.json")
    base = ok_rows(run_copy)
    rows = []
    for i in range(50):
        r = copy.deepcopy(base[i % len(base)])
        r["name"] = f"{r['name']}#{i}"
        r["variant"] = f"{r['variant']}{i % 9}"
        r["intensity"] *= 1.1 ** (i % 13)
        rows.append(r)
    for k in ("predicted_s", "efficiency", "ceiling_gflops", "ceiling_gbps", "bound", "level"):
        rows[0][k] = None
    model["rows"] = rows
    save(run_copy, "model.json", model)
    res = roofline.plot(run_copy, tmp_path / "fifty.png")
    assert_png(res.out_path, min_bytes=40_000)
    assert len(res.points) == 50
    assert res.points.predicted_gflops.isna().sum() == 1


def test_roofline_needs_model_json(run_copy, tmp_path):
    (run_copy / "model.json").unlink()
    with pytest.raises(RooflabDataError, match="run `rooflab model`"):
        roofline.plot(run_copy, tmp_path / "r.png")
    assert not (tmp_path / "r.png").exists()


# ------------------------------------------------------------------ attained vs predicted

def test_attained_vs_predicted_plots_ok_rows_only(run_small, tmp_path):
    res = attained_vs_predicted.plot(run_small, tmp_path / "avp.png")
    assert_png(res.out_path)
    rows = ok_rows(run_small)
    assert sorted(res.points.name) == sorted(r["name"] for r in rows)
    pts = res.points.set_index("name")
    for r in rows:
        assert (pts.loc[r["name"], "predicted_s"], pts.loc[r["name"], "median_s"]) == (r["predicted_s"], r["median_s"])
    assert any("sinkhorn/blocked/f64/1000x777" in o and "verification failed" in o for o in res.omitted)
    assert any("avx512" in o and "skipped" in o for o in res.omitted)


# ------------------------------------------------------------------------------ bandwidth

def test_bandwidth_curves_and_capacities(run_small, tmp_path):
    res = bandwidth.plot(run_small, tmp_path / "bw.png")
    assert_png(res.out_path, min_bytes=40_000)
    curves = load(run_small, "machine.json")["bandwidth"]["curves"]
    assert len(res.curves) == len(curves) == 7
    assert res.curves.n_points.sum() == sum(len(c["points"]) for c in curves)
    caps = res.capacities.set_index(["level", "kind"]).bytes
    assert caps[("L3", "measured")] == 32 * 2**20 and caps[("L3", "reported")] == 256 * 2**20
    assert caps[("L1", "measured")] == caps[("L1", "reported")] == 32 * 2**10


def test_human_bytes():
    assert fc.human_bytes(32768) == "32 KiB"
    assert fc.human_bytes(1.5 * 2**20) == "1.5 MiB"
    assert fc.human_bytes(100) == "100 B"


# --------------------------------------------------------------------------- cache misses

def test_cache_misses_per_backend(run_small, tmp_path):
    res = cache_misses.plot(run_small, tmp_path / "cm.png")
    assert_png(res.out_path)
    assert res.has_data
    rows = load(run_small, "counters.json")["rows"]
    assert len(res.data) == len(rows)
    first = res.data.iloc[0]
    ev = rows[0]["events"]
    assert first.L1_misses == ev["D1mr"] + ev["D1mw"]
    assert first.LL_misses == ev["DLmr"] + ev["DLmw"]
    assert first.L1_miss_rate == rows[0]["derived"]["L1_miss_rate"]
    assert dict(res.unavailable) == {"papi": "PAPI_TOT_CYC reads 0: no PMU in this VM",
                                     "perf": "perf_event_open: ENOENT (hardware events not supported in this VM)"}


def test_cache_misses_without_any_backend_says_why(run_copy, tmp_path):
    doc = load(run_copy, "counters.json")
    for b in doc["backends"]:
        b["available"], b["reason"] = False, b["reason"] or "valgrind not installed"
    doc["rows"] = []
    save(run_copy, "counters.json", doc)
    res = cache_misses.plot(run_copy, tmp_path / "cm.png")
    assert_png(res.out_path, min_bytes=5_000)
    assert not res.has_data and res.data.empty
    assert ("cachegrind", "valgrind not installed") in res.unavailable


# -------------------------------------------------------------------------- command line

@pytest.mark.parametrize("name", ["roofline", "attained_vs_predicted", "bandwidth", "cache_misses"])
def test_script_command_line(run_small, tmp_path, name):
    out = tmp_path / "sub" / f"{name}.png"
    p = run_script("figure.py", name, str(run_small), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == str(out)
    assert_png(out)


@pytest.mark.parametrize("name", ["roofline", "attained_vs_predicted", "bandwidth", "cache_misses"])
def test_script_bad_inputs(run_copy, tmp_path, name):
    p = run_script("figure.py", name, str(tmp_path / "missing"), "--out", str(tmp_path / "x.png"))
    assert p.returncode == 1 and "does not exist" in p.stderr and "Traceback" not in p.stderr
    for fname in ("machine.json", "model.json", "counters.json"):
        doc = load(run_copy, fname)
        doc["schema"] = doc["schema"].replace("/1", "/9")
        save(run_copy, fname, doc)
    p = run_script("figure.py", name, "--run", str(run_copy), "--out", str(tmp_path / "x.png"))  # --run: the old form
    assert p.returncode == 1 and "unsupported schema version" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x.png").exists()
