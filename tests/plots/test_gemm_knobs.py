"""plots/gemm_knobs.py: the knob-selection loss figure and report section from a synthetic
gemm_knobs.json whose losses are known."""
from __future__ import annotations

import json

import pytest
from conftest import assert_png, run_script

from rooflab.figures import gemm_knobs
from rooflab.report import sections
from rooflab.data.run import RooflabDataError


def knob(l, f):
    return {"k_layers": l, "kbf": f, "bk": 128}


def write_eval(run, n=12):
    shapes, an, nn = [], [], []
    for i in range(n):
        la, ln = 0.01 * i, 0.002 * (i % 4)  # analytic 0..11%, nn 0..0.6%
        an.append(la), nn.append(ln)
        shapes.append({"m": 256 + 64 * i, "n": 300 + i, "k": 512, "flops": 2.0 * (256 + 64 * i) * (300 + i) * 512,
                       "autotune": {"knob": knob(1, 2), "seconds": 1e-3, "retimed_seconds": 1.01e-3,
                                    "retimed_loss": 0.01},
                       "analytic": {"knob": knob(2, 1), "seconds": 1e-3 * (1 + la), "loss": la,
                                    "predicted_seconds": 9e-4},
                       "nn": {"knob": knob(1, 4), "seconds": 1e-3 * (1 + ln), "loss": ln,
                              "neighbour": {"m": 256, "n": 256, "k": 512}, "distance": 0.5}})
    summ = {m: {"shapes": n, "mean_loss": sum(v) / n, "median_loss": sorted(v)[n // 2], "max_loss": max(v),
                "within_3pct": sum(x <= 0.03 for x in v) / n, "within_7pct": sum(x <= 0.07 for x in v) / n}
            for m, v in (("analytic", an), ("nn", nn), ("autotune_retimed", [0.01] * n))}
    doc = {"schema": "rooflab.gemm_knobs/1", "kind": "evaluation", "dtype": "f64", "threads": 2, "isa": "avx2",
           "grid": "k_layers:1,2,4/kbf:1,2,4,8/bk:128", "reps": 3, "machine": "/x/machine.json",
           "nn_set": {"path": "/x/knobs_nn.json", "entries": 125},
           "sampling": {"seed": 1, "min": 256, "max": 2048, "shapes": n}, "shapes": shapes, "summary": summ,
           "entries": []}
    (run / "gemm_knobs.json").write_text(json.dumps(doc))
    return an, nn


def test_losses_are_the_files(tmp_path):
    an, nn = write_eval(tmp_path)
    res = gemm_knobs.plot(tmp_path, tmp_path / "k.png")
    assert_png(res.out_path)
    got = res.losses
    assert sorted(got[got.method == "analytic"].loss) == pytest.approx(sorted(an))
    assert sorted(got[got.method == "nn"].loss) == pytest.approx(sorted(nn))
    assert set(got.method) == {"analytic", "nn", "autotune_retimed"}  # no "default" in this file
    assert (got[got.method == "nn"].knob == "k_layers:1/kbf:4/bk:128").all()
    assert got.flops.iloc[0] == 2.0 * 256 * 300 * 512


def test_report_section_lists_the_summary(tmp_path):
    write_eval(tmp_path)
    sec = sections.gemm_knobs_section(tmp_path, tmp_path / "report")
    assert (tmp_path / "report" / "gemm_knobs.png").exists()
    assert "nearest neighbour" in sec and "analytic model" in sec
    assert "5.50%" in sec  # the analytic mean loss, 0..11% -> 5.5%
    assert "125 autotuned shapes" in sec


def test_missing_and_malformed(tmp_path):
    with pytest.raises(RooflabDataError, match="gemm-knobs evaluate"):
        gemm_knobs.plot(tmp_path, tmp_path / "k.png")
    assert "not drawn" in sections.gemm_knobs_section(tmp_path, tmp_path / "r")
    (tmp_path / "gemm_knobs.json").write_text(json.dumps({"schema": "rooflab.bench/1"}))
    with pytest.raises(RooflabDataError, match="schema"):
        gemm_knobs.plot(tmp_path, tmp_path / "k.png")
    (tmp_path / "gemm_knobs.json").write_text(json.dumps({"schema": "rooflab.gemm_knobs/1", "kind": "nn_set",
                                                         "entries": []}))
    with pytest.raises(RooflabDataError, match="no evaluation"):
        gemm_knobs.plot(tmp_path, tmp_path / "k.png")
    write_eval(tmp_path)
    doc = json.loads((tmp_path / "gemm_knobs.json").read_text())
    del doc["shapes"][3]["nn"]["loss"]
    (tmp_path / "gemm_knobs.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="malformed"):
        gemm_knobs.plot(tmp_path, tmp_path / "k.png")


def test_command_line(tmp_path):
    write_eval(tmp_path)
    r = run_script("figure.py", "gemm_knobs", str(tmp_path), "--out", str(tmp_path / "c.png"))
    assert r.returncode == 0, r.stderr
    assert_png(tmp_path / "c.png")
    r = run_script("figure.py", "gemm_knobs", str(tmp_path / "none"), "--out", str(tmp_path / "d.png"))
    assert r.returncode == 1 and "missing" in r.stderr
