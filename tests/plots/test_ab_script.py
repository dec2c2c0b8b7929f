"""scripts/ab.py: the builds' order per round (every build in every position equally often), the
ratios it prints and writes, the rounds it drops (a side left disturbed), a failed verification,
a bench.json it cannot read, and its usage errors. The builds are a stand-in rooflab whose `bench` writes a bench.json with a
fixed time per build (its file name), so nothing depends on this machine's timing."""
from __future__ import annotations

import importlib.util
import json
import stat
import sys

import pytest
from conftest import REPO

FAKE = """#!{py}
import json, os, sys
a = sys.argv[1:]
assert a[0] == "bench", a
me = os.path.basename(sys.argv[0])
out = a[a.index("--out") + 1]
cases = [a[i + 1] for i, x in enumerate(a) if x == "--case"]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(os.path.basename(out) + "\\n")
if os.environ.get("FAKE_FAIL") == os.path.basename(out):
    sys.exit(3)
t = json.loads(os.environ["FAKE_TIMES"])[me]
dist = os.environ.get("FAKE_DISTURBED") == os.path.basename(out)
if os.environ.get("FAKE_NO_CAL") == me and "--calibration" in a:
    print("rooflab bench: unknown option '--calibration'")
    sys.exit(2)
if os.environ.get("FAKE_LACKS") == me:
    cases = [c + "/renamed" for c in cases]
rows = [{{"name": c, "run_name": c, "run_type": "iteration", "real_time": t * (1 + 0.01 * k), "time_unit": os.environ.get("FAKE_UNIT", "ms"),
          "rooflab": {{"name": c, "disturbed": dist and os.environ.get("FAKE_DISTURBED_CASE", c) == c}}}} for c in cases for k in range(3)]
rows.append({{"name": "other", "run_type": "iteration", "real_time": 1.0, "time_unit": "ms"}})  # not a rooflab row: ignored
os.makedirs(out, exist_ok=True)
json.dump({{"schema": "rooflab.bench/1", "benchmarks": rows}}, open(os.path.join(out, "bench.json"), "w"))
"""


@pytest.fixture
def ab():
    spec = importlib.util.spec_from_file_location("ab_script", REPO / "scripts" / "ab.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    paths = {}
    for name in ("old", "new", "other"):
        p = tmp_path / name
        p.write_text(FAKE.format(py=sys.executable))
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
        paths[name] = str(p)
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "order.log"))
    monkeypatch.setenv("FAKE_TIMES", json.dumps({"old": 2.0, "new": 1.0, "other": 4.0}))
    return paths


def test_every_build_takes_every_position_equally_often(ab):
    assert [ab.order(2, r) for r in range(1, 5)] == [[0, 1], [1, 0], [1, 0], [0, 1]]
    for nb in (2, 3, 4):
        rounds = 2 * nb
        for pos in range(nb):
            seen = [ab.order(nb, r)[pos] for r in range(1, rounds + 1)]
            assert sorted(seen) == sorted(list(range(nb)) * 2), (nb, pos, seen)


def test_ratios_order_and_json(ab, fakes, tmp_path, capsys):
    out = tmp_path / "run"
    rc = ab.run([f"A={fakes['old']}", f"B={fakes['new']}", f"C={fakes['other']}", "--case", "k/x", "--case", "k/y",
                 "--rounds", "2", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "A / B: 2.000 (2.000-2.000, 2 rounds)  k/x" in printed
    assert "A / C: 0.500 (0.500-0.500, 2 rounds)  k/y" in printed
    assert (tmp_path / "order.log").read_text().split() == ["A-1", "B-1", "C-1", "C-2", "B-2", "A-2"]
    doc = json.loads((out / "ab.json").read_text())
    assert doc["reference"] == "A" and doc["order"] == [["A", "B", "C"], ["C", "B", "A"]]
    assert doc["cases"]["k/x"]["B"]["ratios"] == pytest.approx([2.0, 2.0])


def test_a_round_left_disturbed_is_dropped(ab, fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_DISTURBED", "n-2")
    rc = ab.run([fakes["old"], f"n={fakes['new']}", "--case", "k/x", "--rounds", "3", "--out", str(tmp_path / "run")])
    assert rc == 0
    assert "b0 / n: 2.000 (2.000-2.000, 2 rounds), dropped (disturbed) [2]  k/x" in capsys.readouterr().out


def test_every_round_disturbed_compares_nothing_exit_4(ab, fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_DISTURBED", "b1-1")
    rc = ab.run([fakes["old"], fakes["new"], "--case", "k/x", "--rounds", "1", "--out", str(tmp_path / "run")])
    assert rc == 4
    got = capsys.readouterr()
    assert "b0 / b1: no round, dropped (disturbed) [1]  k/x" in got.out
    assert "every round of every case left disturbed on a side" in got.err


def test_a_case_one_build_lacks_is_exit_1(ab, fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_LACKS", "new")  # it names its case otherwise: not the host's doing
    rc = ab.run([f"old={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--rounds", "2", "--out", str(tmp_path / "run")])
    assert rc == 1
    got = capsys.readouterr()
    assert "old / new: no round, not timed by a build in rounds [1, 2]  k/x" in got.out
    assert "a case has no times in a build's runs" in got.err


def test_pool_keeps_each_cases_undisturbed_rounds(ab, fakes, tmp_path, monkeypatch):
    """--pool (the CI gate's A/B): per case the repetitions of the rounds neither build left it disturbed
    in; a case disturbed in every round keeps all, so that `rooflab compare` shows it disturbed."""
    monkeypatch.setenv("FAKE_DISTURBED", "new-2")
    monkeypatch.setenv("FAKE_DISTURBED_CASE", "k/x")
    out = tmp_path / "run"
    rc = ab.run([f"ref={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--case", "k/y", "--rounds", "3",
                 "--out", str(out), "--pool"])
    assert rc == 0
    for side, t in (("ref", 2.0), ("new", 1.0)):
        rows = json.loads((out / side / "bench.json").read_text())["benchmarks"]
        x = [b for b in rows if b["name"] == "k/x"]
        assert len(x) == 2 * 3 and not any(b["rooflab"]["disturbed"] for b in x)  # rounds 1 and 3, 3 reps each
        assert len([b for b in rows if b["name"] == "k/y"]) == 3 * 3
        assert min(b["real_time"] for b in x) == pytest.approx(t)
    monkeypatch.setenv("FAKE_DISTURBED", "new-1")
    rc = ab.run([f"ref={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--case", "k/y", "--rounds", "1",
                 "--out", str(out), "--pool"])
    assert rc == 0
    rows = json.loads((out / "new" / "bench.json").read_text())["benchmarks"]
    assert [b["rooflab"]["disturbed"] for b in rows if b["name"] == "k/x"] == [True] * 3


def test_failed_verification_stops_with_exit_3(ab, fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "new-1")
    rc = ab.run([f"old={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--out", str(tmp_path / "run")])
    assert rc == 3
    assert "new (round 1): a case failed verification" in capsys.readouterr().err


def test_a_malformed_bench_json_is_one_line_exit_1(ab, fakes, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_UNIT", "fortnights")  # read as `rooflab compare` reads it: refused, not guessed
    rc = ab.run([f"old={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--out", str(tmp_path / "run")])
    assert rc == 1
    assert 'old (round 1): ' in capsys.readouterr().err


@pytest.mark.parametrize("args,msg", [
    (["--case", "k/x"], "at least two builds"),
    (["--case", "k/x", "--rounds", "0", "SECOND"], "--rounds must be 1..99"),
    (["--case", "k/x", "--min-time", "0", "SECOND"], "--min-time must be > 0"),
    (["--case", "k/x", "x=/nonexistent/rooflab"], "/nonexistent/rooflab is not an executable"),
    (["--case", "k/x", "old=SECOND"], "two builds have the same label"),
    (["SECOND"], "required: --case"),
])
def test_usage_errors_exit_2_in_one_line(ab, fakes, capsys, args, msg):
    args = [a.replace("SECOND", fakes["new"]) for a in args]
    with pytest.raises(SystemExit) as e:
        ab.run([f"old={fakes['old']}", *args])
    assert e.value.code == 2
    assert msg in capsys.readouterr().err


def test_a_build_older_than_calibration_is_benched_too(ab, fakes, tmp_path, capsys, monkeypatch):
    """A baseline's commit from before `bench --calibration` (the CI gate's A/B builds such commits,
    e.g. the Zen 3 baseline's 025ea7b) rejects that option: ab.py's command does without it."""
    monkeypatch.setenv("FAKE_NO_CAL", "old")
    rc = ab.run([f"old={fakes['old']}", f"new={fakes['new']}", "--case", "k/x", "--rounds", "2", "--out", str(tmp_path / "run")])
    assert rc == 0
    got = capsys.readouterr()
    assert "old / new: 2.000 (2.000-2.000, 2 rounds)  k/x" in got.out
