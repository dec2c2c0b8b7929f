"""`rooflab compare` (plots/compare.py): a synthetic 20% slowdown is caught, identical
distributions are not flagged, the efficiency metric cancels a uniformly faster machine,
failed verification and bad input are reported with their exit codes."""
from __future__ import annotations

import json
import random

import pytest

from rooflab import gate as compare

NAME = "gemm/blocked/avx2/f64/512x512x512/threads:1"


def bench_doc(times_ms: dict[str, list[float]], predicted_s: float | None = 1e-3, errors=(),
              disturbed: dict[str, str] | None = None) -> dict:
    """A bench.json (measurements only) and, under "_model", the model.json beside it carrying
    each benchmark's predicted_s (write() splits them into a run directory). `disturbed`:
    {name: reason} of the measurements `rooflab bench` marked disturbed."""
    benchmarks = []
    for name, times in times_ms.items():
        rl = {"name": name, "family": name.split("/")[0], "variant": name.split("/")[1]}
        if disturbed is not None:
            rl |= {"disturbed": name in disturbed, "disturbed_reason": disturbed.get(name, "")}
        if name in errors:
            benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "error_occurred": True,
                               "error_message": "verification failed: max_err 1 > tol 0", "rooflab": rl})
            continue
        for i, t in enumerate(times):
            benchmarks.append({"name": name, "run_name": name, "run_type": "iteration", "repetition_index": i,
                               "real_time": t, "time_unit": "ms", "rooflab": rl})
        benchmarks.append({"name": name + "_median", "run_name": name, "run_type": "aggregate",
                           "aggregate_name": "median", "real_time": sorted(times)[len(times) // 2],
                           "time_unit": "ms", "rooflab": rl})
    model = {"schema": "rooflab.model/1", "rows": [{"name": n, "predicted_s": predicted_s} for n in times_ms]}
    return {"schema": "rooflab.bench/1", "context": {}, "benchmarks": benchmarks, "_model": model}


def noisy(seed: int, scale: float = 1.0, n: int = 12) -> list[float]:
    """Times like this VM's: ~3% log-normal noise around `scale` ms plus rare 15% outliers."""
    rng = random.Random(seed)
    return [scale * rng.lognormvariate(0, 0.03) * (1.15 if rng.random() < 0.08 else 1.0) for _ in range(n)]


def write(tmp_path, label, doc):
    """DIR/bench.json (+ DIR/model.json when doc carries one); returns the bench.json path."""
    d = tmp_path / label
    d.mkdir()
    doc = dict(doc)
    if "_model" in doc:
        (d / "model.json").write_text(json.dumps(doc.pop("_model")))
    p = d / "bench.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_twenty_percent_slowdown_is_caught(tmp_path, capsys):
    base = write(tmp_path, "base", bench_doc({NAME: noisy(1)}))
    new = write(tmp_path, "new", bench_doc({NAME: noisy(2, scale=1.2)}))
    out = tmp_path / "cmp.json"
    assert compare.main([base, new, "--json-out", str(out)]) == 4
    row = json.loads(out.read_text())["rows"][0]
    assert row["status"] == "slower"
    assert row["ratio"] == pytest.approx(1.2, rel=0.05)
    assert row["p_value"] < 0.01
    assert "slower" in capsys.readouterr().out


def test_identical_distributions_are_not_flagged():
    # 200 pairs of runs from the same distribution: none may trip the gate (alpha 0.01 and a
    # 10% threshold together make a false alarm practically impossible at 3% noise).
    flagged = 0
    for seed in range(200):
        rows = compare.compare({NAME: compare.Side(noisy(2 * seed), 1e-3, "")},
                               {NAME: compare.Side(noisy(2 * seed + 1), 1e-3, "")},
                               "time", 0.10, 0.01, 9)
        flagged += rows[0].status == "slower"
    assert flagged == 0


def test_small_significant_change_below_threshold_is_same(tmp_path):
    base = write(tmp_path, "base", bench_doc({NAME: [1.0 + 0.001 * i for i in range(12)]}))
    new = write(tmp_path, "new", bench_doc({NAME: [1.05 + 0.001 * i for i in range(12)]}))
    assert compare.main([base, new]) == 0  # 5% slower, significant, but under the 10% threshold
    assert compare.main([base, new, "--threshold", "0.03"]) == 4


def test_efficiency_metric_cancels_a_uniformly_faster_machine(tmp_path):
    # NEW runs on a machine 30% slower everywhere: its own ceilings predict 30% more time.
    base = write(tmp_path, "base", bench_doc({NAME: noisy(3)}, predicted_s=1e-3))
    new = write(tmp_path, "new", bench_doc({NAME: noisy(4, scale=1.3)}, predicted_s=1.3e-3))
    assert compare.main([base, new, "--metric", "time"]) == 4
    assert compare.main([base, new, "--metric", "efficiency"]) == 0
    nopred = write(tmp_path, "nopred", bench_doc({NAME: noisy(4)}, predicted_s=None))
    assert compare.main([base, nopred, "--metric", "efficiency"]) == 1  # nothing comparable


def test_efficiency_reads_predictions_from_model_json_only(tmp_path, capsys):
    # bench.json holds measurements only: a stray "prediction" there is not read, and without
    # the model.json beside it the efficiency metric is a clear error naming the file.
    base = write(tmp_path, "base", bench_doc({NAME: noisy(3)}, predicted_s=1e-3))
    doc = bench_doc({NAME: noisy(4, scale=1.3)}, predicted_s=1.3e-3)
    doc.pop("_model")
    for b in doc["benchmarks"]:
        b["rooflab"]["prediction"] = {"time_s": 1.3e-3}
    nomodel = write(tmp_path, "nomodel", doc)
    assert compare.main([base, nomodel, "--metric", "time"]) == 4  # time needs no model.json
    capsys.readouterr()
    assert compare.main([base, nomodel, "--metric", "efficiency"]) == 1
    err = capsys.readouterr().err
    assert "nomodel/model.json not found" in err and "rooflab model --run" in err


def test_failed_verification_in_new_is_exit_3(tmp_path):
    base = write(tmp_path, "base", bench_doc({NAME: noisy(5)}))
    new = write(tmp_path, "new", bench_doc({NAME: []}, errors={NAME}))
    assert compare.main([base, new]) == 3


def test_too_few_repetitions_are_reported_not_gated(tmp_path, capsys):
    other = "sinkhorn/c2r/f64/512x512/threads:1"
    base = write(tmp_path, "base", bench_doc({NAME: noisy(6), other: noisy(7, n=3)}))
    new = write(tmp_path, "new", bench_doc({NAME: noisy(8), other: noisy(9, scale=2.0, n=3)}))
    assert compare.main([base, new]) == 0
    assert "too few" in capsys.readouterr().out
    only3 = write(tmp_path, "only3", bench_doc({other: noisy(9, n=3)}))
    assert compare.main([base, only3, "--filter", "sinkhorn"]) == 1


def test_a_disturbed_measurement_is_shown_not_gated(tmp_path, capsys):
    # NEW is 30% slower, significantly: exit 4 when the measurement is good, but a measurement
    # `rooflab bench` marked disturbed on either side is shown with its reason and never gates.
    other = "sinkhorn/c2r/f64/512x512/threads:1"
    base = write(tmp_path, "base", bench_doc({NAME: noisy(21), other: noisy(22)}, disturbed={}))
    slow = {NAME: noisy(23, scale=1.3), other: noisy(24)}
    good = write(tmp_path, "good", bench_doc(slow, disturbed={}))
    assert compare.main([base, good]) == 4
    capsys.readouterr()
    why = "load: 3 of 12 samples quiet"
    bad = write(tmp_path, "bad", bench_doc(slow, disturbed={NAME: why}))
    out_json = tmp_path / "cmp.json"
    assert compare.main([base, bad, "--json-out", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert f"disturbed (NEW: {why})" in out and "1 disturbed, 1 same" in out
    rows = {r["name"]: r for r in json.loads(out_json.read_text())["rows"]}
    assert rows[NAME]["status"] == "disturbed" and rows[NAME]["note"] == f"NEW: {why}"
    assert rows[NAME]["ratio"] == pytest.approx(1.3, rel=0.05)  # shown, not gated
    assert rows[other]["status"] == "same"
    # A disturbed baseline is no good number either.
    bad_base = write(tmp_path, "bad_base", bench_doc({NAME: noisy(21), other: noisy(22)}, disturbed={NAME: "cv 14% > 10%"}))
    assert compare.main([bad_base, good, "--markdown"]) == 0
    assert "disturbed (BASE: cv 14% > 10%)" in capsys.readouterr().out
    # Only disturbed rows left: nothing was gated, which is an error, not a pass.
    assert compare.main([base, bad, "--filter", "floyd|gemm"]) == 1
    err = capsys.readouterr().err
    assert "nothing gated" in err and why in err


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    good = write(tmp_path, "good", bench_doc({NAME: noisy(1)}))
    assert compare.main([str(tmp_path / "missing.json"), good]) == 1
    assert "rooflab bench" in capsys.readouterr().err
    wrong = write(tmp_path, "wrong", {"schema": "rooflab.model/1", "rows": []})
    assert compare.main([wrong, good]) == 1
    assert "rooflab.bench/1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        compare.main([good, good, "--threshold", "2"])


def cpu_run(tmp_path, label, times_ms: dict[str, list[float]], predicted_s: dict[str, float]):
    """A gate run directory from one CPU: bench.json and model.json (that CPU's per-ISA
    predictions); returns the directory."""
    doc = bench_doc(times_ms)
    doc["_model"]["rows"] = [{"name": n, "predicted_s": predicted_s[n], "compute_isa": "avx2"} for n in times_ms]
    write(tmp_path, label, doc)
    return str(tmp_path / label)


def test_efficiency_cancels_the_cpu_difference(tmp_path, capsys):
    # Baseline from an AVX2 Zen 3, runs on an AVX-512 Zen 5 whose own ceilings predict each
    # kernel faster (the AVX2 kernel priced at the avx2 ceiling there): equal efficiency is
    # "same", a 40% efficiency loss of one kernel is "slower" (exit 4). Whether a baseline
    # from another CPU fails the gate is scripts/perf_gate.sh's (tests/perf_gate/cross_cpu.sh).
    dram = "sinkhorn/fused_uv/avx2/f64/4096x4096/threads:1"
    base = cpu_run(tmp_path, "zen3", {NAME: noisy(11, 6.3), dram: noisy(12, 6.5)}, {NAME: 4.8e-3, dram: 5.6e-3})
    same = cpu_run(tmp_path, "zen5", {NAME: noisy(13, 6.3 * 4.06 / 4.8), dram: noisy(14, 6.5 * 3.3 / 5.6)},
                   {NAME: 4.06e-3, dram: 3.3e-3})
    assert compare.main([base, same, "--metric", "efficiency", "--threshold", "0.25"]) == 0
    assert "2 same" in capsys.readouterr().out
    slow = cpu_run(tmp_path, "zen5slow", {NAME: noisy(15, 6.3 * 4.06 / 4.8), dram: noisy(16, 1.4 * 6.5 * 3.3 / 5.6)},
                   {NAME: 4.06e-3, dram: 3.3e-3})
    out_json = tmp_path / "cmp.json"
    assert compare.main([base, slow, "--metric", "efficiency", "--threshold", "0.25", "--json-out", str(out_json)]) == 4
    rows = {r["name"]: r for r in json.loads(out_json.read_text())["rows"]}
    assert rows[dram]["status"] == "slower" and rows[dram]["ratio"] == pytest.approx(1.4, rel=0.05)
    assert rows[NAME]["status"] == "same"
    # The other way round (a Zen 5 baseline, a Zen 3 run) cancels too.
    assert compare.main([same, base, "--metric", "efficiency", "--threshold", "0.25"]) == 0
    assert "2 same" in capsys.readouterr().out


def test_ecm_metric_divides_by_the_ecm_prediction_and_skips_a_fallback(tmp_path, capsys):
    # The roofline predicts both machines alike, the ECM (L1 traffic priced) predicts NEW's
    # machine 1.5x slower for this kernel: NEW, 1.5x slower in time, is "slower" by the roofline
    # efficiency and "same" by the ECM's. A row whose ECM fell back to the roofline on a side is
    # not compared under --metric ecm (two models), so a file of only such rows is an error.
    def run(label, scale, ecm_s, fallback=False):
        doc = bench_doc({NAME: noisy(31, scale)}, predicted_s=1e-3)
        doc["_model"]["rows"][0]["ecm"] = {"time_s": ecm_s, "fallback": fallback}
        return write(tmp_path, label, doc)
    base, new = run("base", 1.0, 1e-3), run("new", 1.5, 1.5e-3)
    assert compare.main([base, new, "--metric", "efficiency"]) == 4
    assert compare.main([base, new, "--metric", "ecm"]) == 0
    assert "1 same" in capsys.readouterr().out
    fell_back = run("fell_back", 1.5, 1e-3, fallback=True)
    assert compare.main([base, fell_back, "--metric", "ecm"]) == 1
    assert "nothing comparable" in capsys.readouterr().err
