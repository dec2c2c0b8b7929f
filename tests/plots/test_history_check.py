"""`rooflab history check` (plots/rooflab/history/check.py): change points of synthetic series
with known steps, drifts, outliers and disturbed runs; its exit status, table, Markdown and JUnit."""
from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytest.importorskip("signal_processing_algorithms",
                    reason="signal-processing-algorithms (plots/requirements-optional.txt) is not installed")

from rooflab.history import changepoints, check, synth  # noqa: E402
from rooflab.history.output import describe  # noqa: E402
from rooflab.history.series import Series  # noqa: E402


def args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    check.add_arguments(p)
    return p.parse_args(list(argv))


def step_series(metric="time", size=0.10, at=60, n=100, seed=7, **kw) -> Series:
    return synth.series(synth.values(n, seed=seed, cv=0.02, steps=((at, size),)), metric=metric, **kw)


def test_step_is_found_with_its_commit_range_size_and_pvalue():
    r = changepoints.analyse(step_series())
    assert len(r.changes) == 1
    c = r.changes[0]
    assert (c.before.commit, c.after.commit) == (synth.commit_of(59), synth.commit_of(60))
    assert c.ratio == pytest.approx(1.10, abs=0.02)
    assert c.pvalue <= changepoints.Settings().pvalue
    assert c.kind == "regression"


def test_direction_follows_the_metric():
    # Time going down and efficiency going up are improvements; efficiency going down is not.
    assert [c.kind for c in changepoints.analyse(step_series("time", -0.10)).changes] == ["improvement"]
    assert [c.kind for c in changepoints.analyse(step_series("efficiency", 0.10)).changes] == ["improvement"]
    assert [c.kind for c in changepoints.analyse(step_series("efficiency", -0.10)).changes] == ["regression"]


@pytest.mark.parametrize("at", [10, 50, 97, 99])
@pytest.mark.parametrize("factor", [1.6, 0.6])
def test_one_noisy_run_is_not_a_change_point(at, factor):
    for seed in range(3):
        s = synth.series(synth.values(100, seed=seed, cv=0.02, outliers=((at, factor),)))
        assert changepoints.analyse(s).changes == [], (seed, at, factor)


def test_flat_series_give_no_change_points():
    for seed in range(8):
        s = synth.series(synth.values(120, seed=100 + seed, cv=0.03))
        assert changepoints.analyse(s).changes == [], seed


def test_slow_drift_is_caught_that_a_pairwise_gate_misses():
    n, seed = 120, 11
    flat = synth.values(n, seed=seed, cv=0.02)
    drift = synth.values(n, seed=seed, cv=0.02, drift=(30, 90, 0.10))
    # A pairwise gate (this run against the one before) tuned not to alarm on the flat series
    # stays silent on the drift too: each step of it (0.17%) hides in the runs' noise.
    threshold = np.max(np.abs(flat[1:] / flat[:-1] - 1))
    assert np.all(np.abs(drift[1:] / drift[:-1] - 1) <= threshold * 1.05)
    changes = changepoints.analyse(synth.series(drift)).changes
    assert changes and all(c.kind == "regression" for c in changes)
    assert np.prod([c.ratio for c in changes]) > 1.05
    assert all(30 <= c.index <= 95 for c in changes)


def test_same_series_same_answer():
    s = synth.series(synth.values(150, seed=5, cv=0.03, steps=((50, 0.04), (100, -0.03))))
    first = changepoints.analyse(s).changes
    assert first
    for _ in range(2):
        np.random.seed(None)  # whatever the global state, the seeded tests give the same answer
        assert changepoints.analyse(s).changes == first


def test_disturbed_runs_are_left_out():
    vals = synth.values(100, seed=3, cv=0.02)
    vals[70:80] *= 1.5
    s = synth.series(vals, disturbed=tuple(range(70, 80)))
    r = changepoints.analyse(s)
    assert (r.changes, r.used, r.disturbed) == ([], 90, 10)
    # The same values without the mark are a change (two, up and back down).
    assert changepoints.analyse(synth.series(vals)).changes


def test_too_short_a_series_has_no_change_points():
    s = synth.series([1.0, 1.0, 2.0, 2.0])
    assert changepoints.analyse(s).changes == []


# ----------------------------------------------------------------------------- run()

def world():
    return [step_series("time", 0.10, benchmark="gemm/blocked/256x256x256"),
            step_series("efficiency", -0.10, benchmark="gemm/blocked/256x256x256"),
            step_series("time", -0.10, benchmark="floyd_warshall/simd/512"),
            synth.series(synth.values(100, seed=2, cv=0.02), benchmark="sinkhorn/mapuot/4096x4096")]


def test_since_gates_only_regressions_after_the_commit(capsys):
    assert check.run(world(), args("--since", synth.commit_of(40))) == 4
    out = capsys.readouterr().out
    assert "regression" in out and synth.commit_of(59)[:10] in out and synth.commit_of(60)[:10] in out
    # After the change: nothing new. An abbreviated sha works too.
    assert check.run(world(), args("--since", synth.commit_of(60)[:8])) == 0


def test_without_since_the_latest_segment_decides(capsys):
    assert check.run(world(), args()) == 4
    # The improvements alone do not fail.
    assert check.run(world(), args("--filter", "floyd")) == 0
    assert check.run(world(), args("--filter", "sinkhorn")) == 0
    out = capsys.readouterr().out
    assert "1 series, 0 change points" in out


def test_metric_filter_and_machine_select_series(capsys):
    assert check.run(world(), args("--metric", "efficiency")) == 4
    assert "history check: 1 series," in capsys.readouterr().out
    assert check.run(world(), args("--machine", "other")) == 0
    assert "history check: 0 series," in capsys.readouterr().out
    assert check.run(world(), args("--metric", "time,efficiency", "--filter", "^gemm")) == 4
    assert "history check: 2 series," in capsys.readouterr().out


def test_markdown_and_junit(tmp_path, capsys):
    md, xml = tmp_path / "summary.md", tmp_path / "check.xml"
    assert check.run(world(), args("--since", synth.commit_of(40), "--markdown", str(md),
                                   "--junit", str(xml))) == 4
    text = md.read_text()
    assert text.startswith("## rooflab history check: 2 regression(s)")
    assert f"`{synth.commit_of(59)[:10]}..{synth.commit_of(60)[:10]}`" in text
    for s in world():
        for c in changepoints.analyse(s).changes:
            kind, commits, size, p = describe(c)
            assert f"| {kind} | `{commits}` | {size} | {p} |" in text
    assert "| improvement |" in text and "| <0.010 |" in text
    rows = [l for l in text.splitlines() if l.startswith("| :")]
    assert [r.startswith("| :x: |") for r in rows] == [True, True, False]
    suite = ET.parse(xml).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 4 == int(suite.get("tests"))
    failed = {c.get("classname") + " " + c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {"rooflab.history.time gemm/blocked/256x256x256 @synthetic",
                      "rooflab.history.efficiency gemm/blocked/256x256x256 @synthetic"}
    assert suite.get("failures") == "2"
    rng = f"{synth.commit_of(59)[:10]}..{synth.commit_of(60)[:10]}"
    assert all(rng in c.find("failure").get("message") for c in cases if c.find("failure") is not None)
    assert check.run(world(), args("--since", synth.commit_of(60), "--junit", str(xml))) == 0
    assert ET.parse(xml).getroot().find("testsuite").get("failures") == "0"


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    md = tmp_path / "summary.md"
    assert check.run(world(), args("--since", "deadbeef", "--markdown", str(md))) == 2
    assert check.run(world(), args("--filter", "(", "--markdown", str(md))) == 2
    assert check.run(world(), args("--markdown", str(tmp_path / "no" / "such.md"))) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 3
    assert not md.exists() and not (tmp_path / "no").exists()
    with pytest.raises(SystemExit) as e:
        args("--metric", "speed")
    assert e.value.code == 2


def test_missing_package_is_an_error_not_a_pass(monkeypatch, capsys):
    def absent():
        raise changepoints.DetectorMissing("the change-point detector needs signal-processing-algorithms")
    monkeypatch.setattr(changepoints, "_package", absent)
    assert check.run(world(), args()) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "signal-processing-algorithms" in captured.err


def test_last_window_and_since_reaching_back(capsys):
    old = [step_series("time", 0.10, at=50, n=300)]
    # The step is older than the default window of 200 runs: nothing to report now.
    assert check.run(old, args()) == 0
    assert "1 series, 0 change points" in capsys.readouterr().out
    # The whole series shows it; it is the latest change and a regression.
    assert check.run(old, args("--last", "0")) == 4
    # --since an older commit widens the window to reach it.
    assert check.run(old, args("--since", synth.commit_of(40))) == 4
    assert check.run(old, args("--since", synth.commit_of(60))) == 0


def test_deterministic_counts_report_any_change():
    # cachegrind's counts do not vary run to run: a 0.2% change is real and reported; the same
    # change in a time series is below the default size that counts.
    vals = [1e6] * 50 + [1.002e6] * 50
    s = synth.series(vals, metric="instructions")
    assert check.run([s], args("--metric", "instructions")) == 4
    assert check.run([synth.series(vals, metric="time")], args()) == 0
    assert check.run([s], args("--metric", "instructions", "--min-change", "0.01")) == 0
    assert check.run([synth.series([1e6] * 100, metric="instructions")], args("--metric", "instructions")) == 0


@pytest.mark.parametrize("argv", [["--last", "-1"], ["--pvalue", "1.5"], ["--min-change", "x"],
                                  ["--permutations", "0"], ["--metric", "time,speed"]])
def test_bad_knobs_are_usage_errors(argv):
    with pytest.raises(SystemExit) as e:
        args(*argv)
    assert e.value.code == 2
