"""scripts/pot_compare.py: its bad options and a failing or lying solver are one line each (no
traceback); what it writes is read back by plots' loader. Run in-process with a stand-in POT
(whose solve advances a stand-in clock by a fixed time per iteration) and a stand-in solver
printing the solve's JSON, so nothing depends on this machine's timing."""
from __future__ import annotations

import importlib.util
import sys
import types

import pytest
from conftest import REPO

from rooflab.data import pot

FAKE = """import json, sys
a = sys.argv[1:]
v = a[a.index("--variant") + 1]
print(json.dumps({{"schema": "rooflab.sinkhorn_solve/1", "variant": v, "isa": "avx2", "dtype": "f64",
                  "seconds_per_iteration": {t}{extra}}}))
"""


@pytest.fixture
def script(monkeypatch):
    spec = importlib.util.spec_from_file_location("pot_compare_script", REPO / "scripts" / "pot_compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    clock = [0.0]  # the stand-in POT's solve advances the script's clock by 2e-4 s per iteration

    def sinkhorn(a, b, C, reg, numItermax, stopThr):
        clock[0] += 1e-3 + 2e-4 * numItermax  # + a fixed cost per call, which the 2K - K difference cancels

    monkeypatch.setitem(sys.modules, "ot", types.SimpleNamespace(__version__="0.0-test", sinkhorn=sinkhorn))
    monkeypatch.setattr(mod, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    return mod


def call(mod, tmp_path, *args, fake: str | None = None, t: str = "2e-4", extra: str = ""):
    solver = tmp_path / "solver.py"
    solver.write_text(fake if fake is not None else FAKE.format(t=t, extra=extra))
    return mod.run(["--rooflab", f"{sys.executable} {solver}", *args])


@pytest.mark.parametrize("args,msg", [(["--iters", "15"], "multiple of 10"), (["--iters", "0"], "must be positive"),
                                      (["--sizes", "64,x"], "not an integer"), (["--reg", "nan"], "finite"),
                                      (["--reg", "-1"], "positive"), (["--bogus"], "unrecognized arguments")])
def test_bad_options_are_one_line(script, tmp_path, capsys, args, msg):
    with pytest.raises(SystemExit) as e:
        call(script, tmp_path, *args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and msg in err, err


def test_writes_what_the_loader_reads(script, tmp_path, capsys):
    out = tmp_path / "pot_compare.json"
    rc = call(script, tmp_path, "--sizes", "16", "--iters", "10", "--reps", "1", "--variants", "mapuot,fused_uv",
              "--out", str(out), extra=', "bytes_per_iteration": 65536.0, "prefetch": "l1"')
    assert rc == 0, capsys.readouterr().err
    doc = pot.load_doc(tmp_path)
    rows = {r["variant"]: r for r in doc["rows"]}
    assert rows["mapuot"]["seconds_per_iteration"] == 2e-4 and rows["mapuot"]["isa"] == "avx2"
    assert rows["mapuot"]["bytes_per_iteration"] == 65536.0  # the solver's own traffic, when it reports one
    assert rows["fused_uv"]["prefetch"] == "l1" and "fused_uv/avx2/pf:l1:" in capsys.readouterr().out
    # (2K - K iterations) / K of the stand-in POT: its time per iteration, the per-call cost cancelled
    assert rows["sinkhorn_knopp"]["seconds_per_iteration"] == pytest.approx(2e-4)
    assert set(pot.load(tmp_path).variant) == {"sinkhorn_knopp", "mapuot", "fused_uv"}


@pytest.mark.parametrize("fake,t,says", [
    ("import sys; sys.exit('solver: out of memory')", "", "failed (exit 1): solver: out of memory"),
    (None, "NaN", "NaN"), (None, "0", "seconds_per_iteration is 0"), ("print('not json')", "", "not valid JSON"),
    ("pass", "", "no output")])
def test_a_failing_or_lying_solver_is_one_line(script, tmp_path, capsys, fake, t, says):
    rc = call(script, tmp_path, "--sizes", "16", "--iters", "10", "--reps", "1", "--variants", "mapuot",
              "--out", str(tmp_path / "o.json"), fake=fake, t=t)
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and says in err, err
    assert err.startswith("scripts/pot_compare.py: error: ") and not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("extra,says", [("", "bytes_per_iteration is None"),
                                        (', "bytes_per_iteration": 0', "bytes_per_iteration is 0"),
                                        (', "bytes_per_iteration": "many"', "bytes_per_iteration is 'many'")])
def test_a_solver_without_its_traffic_is_one_line(script, tmp_path, capsys, extra, says):
    # The bytes an iteration moves come from the solve (the family model), never from a table here.
    rc = call(script, tmp_path, "--sizes", "16", "--iters", "10", "--reps", "1", "--variants", "mapuot",
              "--out", str(tmp_path / "o.json"), extra=extra)
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "o.json").exists()
