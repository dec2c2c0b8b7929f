"""Every bad JSON input is one clear error (issue 15): each file a run directory can hold, broken
in each way a user meets (valid JSON of the wrong shape, not UTF-8, truncated, empty, a
directory in its place, NaN / infinity where a number belongs, an unknown Google Benchmark
time unit), read by each command that reads it. Each must exit 1 with exactly one line on
stderr, `<prog>: error: ...`, naming the file; nothing on stdout; no traceback; nothing
written. The commands run in-process (their main(), as the entry files run them); a few run
as the `rooflab` binary runs them, to see the process' own stderr."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_script

from rooflab import claims, figures, gate
from rooflab.data import gemm
from rooflab.report import build as report

FIX = REPO / "tests" / "fixtures"


def knobs_doc() -> dict:
    """A small `gemm-knobs evaluate` file (the shape test_gemm_knobs.py builds)."""
    knob = {"k_layers": 1, "kbf": 2, "bk": 128}
    shapes = [{"m": 256 + 64 * i, "n": 300, "k": 512, "flops": 2.0 * (256 + 64 * i) * 300 * 512,
               "autotune": {"knob": knob, "seconds": 1e-3, "retimed_seconds": 1.01e-3, "retimed_loss": 0.01},
               "analytic": {"knob": knob, "seconds": 1.02e-3, "loss": 0.02},
               "nn": {"knob": knob, "seconds": 1.0e-3, "loss": 0.0}} for i in range(4)]
    summ = {m: {"shapes": 4, "mean_loss": v, "median_loss": v, "max_loss": v, "within_3pct": 1.0, "within_7pct": 1.0}
            for m, v in (("analytic", 0.02), ("nn", 0.0), ("autotune_retimed", 0.01))}
    return {"schema": "rooflab.gemm_knobs/1", "kind": "evaluation", "dtype": "f64", "threads": 2, "grid": "g",
            "reps": 3, "machine": "/x/machine.json", "nn_set": {"entries": 1}, "sampling": {"min": 256, "max": 512},
            "shapes": shapes, "summary": summ}


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> Path:
    """Every file kind in one run directory: run_small's core files, run_failed's steps.json,
    the MPI sweep, the POT comparison, RTAMM, the GEMM knobs, the L2 counters (the tight roofline
    is in model.json: tests/gemm/test_gemm_roofline.py covers a malformed one)."""
    run = tmp_path_factory.mktemp("full") / "run"
    shutil.copytree(FIX / "run_small", run)
    shutil.copy(FIX / "run_failed" / "steps.json", run)
    shutil.copy(FIX / "mpi_run" / "mpi_sweep.json", run)
    shutil.copy(FIX / "run_families" / "pot_compare.json", run)
    shutil.copy(FIX / "rtamm" / "run" / "rtamm.json", run)
    shutil.copytree(FIX / "gemm_small" / "gemm_l2", run / "gemm_l2")
    (run / "gemm_knobs.json").write_text(json.dumps(knobs_doc()))
    return run


# file -> (a key path to an array, a key path to a number), both read by the commands below
PATHS = {
    "machine.json": ("bandwidth.curves", "bandwidth.levels.DRAM.read.2"),
    "bench.json": ("benchmarks", "benchmarks.0.real_time"),
    "model.json": ("rows", "rows.0.median_s"),
    "counters.json": ("rows", "rows.0.events.D1mr"),
    "steps.json": ("steps", "steps.0.elapsed_s"),
    "mpi_sweep.json": ("runs", "runs.0.time_per_iter_s"),
    "pot_compare.json": ("rows", "rows.0.seconds_per_iteration"),
    "gemm_knobs.json": ("shapes", "summary.nn.mean_loss"),
    "rtamm.json": ("plans", "summary.decision_accuracy"),
    "gemm_l2/counters.json": ("backends", "rows.0.events.DLmr"),
}
# file -> the commands that read it: ("report" | "claims" | "compare" | "gemm_summary" | figure name)
READERS = {
    "machine.json": ("report", "bandwidth"),
    "bench.json": ("report", "compare"),
    "model.json": ("report", "claims", "roofline"),
    "counters.json": ("report", "claims", "cache_misses"),
    "steps.json": ("report", "claims"),
    "mpi_sweep.json": ("report", "claims", "mpi_scaling"),
    "pot_compare.json": ("report", "claims", "pot_compare"),
    "gemm_knobs.json": ("report", "claims", "gemm_knobs"),
    "rtamm.json": ("report", "claims", "rtamm"),
    "gemm_l2/counters.json": ("report", "gemm_l2_misses"),
}
PROGS = {"report": "rooflab report", "claims": "rooflab claims", "compare": "rooflab compare",
         "gemm_summary": "plots/gemm_summary.py"}


def run_command(cmd: str, run: Path, out: Path) -> int:
    if cmd == "report":
        return report.main([str(run), "--out", str(out)])
    if cmd == "claims":
        return claims.main([str(run), "--no-figures"])
    if cmd == "compare":
        return gate.main([str(FIX / "run_small"), str(run)])
    if cmd == "gemm_summary":
        return gemm.main([str(run), "--out", str(out / "s.json")])
    return figures.main([cmd, str(run), "--out", str(out / "f.png")])


def set_path(doc, path: str, value):
    *head, last = path.split(".")
    node = doc
    for k in head:
        node = node[int(k)] if isinstance(node, list) else node[k]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def breakage(kind: str, fname: str):
    """(write(path): breaks the file in place, what the message says)."""
    lst, num = PATHS[fname]

    def mutate(at, value, raw=None):
        def write(p: Path):
            doc = json.loads(p.read_text())
            set_path(doc, at, value)
            text = json.dumps(doc)  # NaN / Infinity: Python writes them, JSON has none
            p.write_text(text.replace('"__RAW__"', raw) if raw else text)
        return write

    def raw(data: bytes):
        return lambda p: p.write_bytes(data)

    def truncate(p: Path):
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])

    def not_utf8(p: Path):  # a Latin-1 byte inside a string, as an editor saving in Latin-1 leaves it
        data = p.read_bytes()
        i = data.index(b'"', data.index(b'"schema"') + 8) + 1
        p.write_bytes(data[:i] + b"\xe9" + data[i:])

    def directory(p: Path):
        p.unlink()
        p.mkdir()

    return {
        "null_list": (mutate(lst, None), "got null"),
        "object_list": (mutate(lst, {}), "got object"),
        "string_number": (mutate(num, "fast"), "got 'fast'"),
        "not_utf8": (not_utf8, "not UTF-8"),
        "truncated": (truncate, "truncated"),
        "empty": (raw(b""), "empty"),
        "directory": (directory, "is a directory"),
        "nan": (mutate(num, float("nan")), "NaN"),
        "infinity": (mutate(num, float("inf")), "Infinity"),
        "overflow": (mutate(num, "__RAW__", raw="1e999"), "out of the range"),
    }[kind]


CLASSES = ("null_list", "object_list", "string_number", "not_utf8", "truncated", "empty", "directory", "nan",
           "infinity", "overflow")
CASES = [(c, f, r) for c in CLASSES for f in PATHS for r in READERS[f]]


def expect_one_error(rc: int, out: str, err: str, prog: str, path: Path, says: str) -> None:
    lines = err.splitlines()
    assert rc == 1, (rc, err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog}: error: "), err
    assert str(path) in lines[0] and says in lines[0], err
    assert "internal error" not in lines[0] and "Traceback" not in err
    assert out == "", out


@pytest.mark.parametrize("kind,fname,reader", CASES, ids=[f"{c}-{f}-{r}" for c, f, r in CASES])
def test_bad_file_is_one_clear_error(full_run, tmp_path, capsys, kind, fname, reader):
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    write, says = breakage(kind, fname)
    write(run / fname)
    out = tmp_path / "out"
    rc = run_command(reader, run, out)
    got = capsys.readouterr()
    prog = PROGS.get(reader, "plots/figure.py")
    expect_one_error(rc, got.out, got.err, prog, run / fname, says)
    assert not (out / "index.html").exists() and not (run / "claims.json").exists()
    assert not (out / "f.png").exists() and not (out / "s.json").exists()


# --------------------------------------------------------------- Google Benchmark time units

BAD_UNITS = ["min", "sec", "ps", "", "MS", None]


def bench_with_unit(src: Path, dst: Path, unit) -> Path:
    doc = json.loads((src / "bench.json").read_text())
    it = next(b for b in doc["benchmarks"] if b.get("run_type") == "iteration" and not b.get("error_occurred"))
    if unit is None:
        del it["time_unit"]
    else:
        it["time_unit"] = unit
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "bench.json").write_text(json.dumps(doc))
    return dst / "bench.json"


@pytest.mark.parametrize("unit", BAD_UNITS)
@pytest.mark.parametrize("side", ["base", "new"])
def test_unknown_time_unit_is_an_error_naming_file_benchmark_and_unit(tmp_path, capsys, unit, side):
    """Read as seconds before: a silently wrong result. Now: the file, the benchmark, the unit."""
    bad = bench_with_unit(FIX / "run_small", tmp_path / "bad", unit)
    good = FIX / "run_small" / "bench.json"
    rc = gate.main([str(bad), str(good)] if side == "base" else [str(good), str(bad)])
    got = capsys.readouterr()
    name = next(b["name"] for b in json.loads(bad.read_text())["benchmarks"] if b.get("run_type") == "iteration")
    says = "missing key \"time_unit\"" if unit is None else f'unknown time unit "{unit}"'
    expect_one_error(rc, got.out, got.err, "rooflab compare", bad, says)
    if unit is not None:
        assert f"benchmark {name.split('/repeats:')[0]}" in got.err or name in got.err


@pytest.mark.parametrize("unit", BAD_UNITS)
def test_unknown_time_unit_in_the_run_and_in_the_baseline_of_report(full_run, tmp_path, capsys, unit):
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    bench_with_unit(full_run, run, unit)
    assert report.main([str(run), "--out", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(run / "bench.json") in err and "time_unit" in err
    base = bench_with_unit(full_run, tmp_path / "base", unit)
    assert report.main([str(full_run), "--baseline", str(base), "--markdown"]) == 1
    got = capsys.readouterr()
    assert got.out == "" and len(got.err.splitlines()) == 1 and str(base) in got.err and "time_unit" in got.err


@pytest.mark.parametrize("unit,scale", [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)])
def test_known_time_units_are_converted(tmp_path, unit, scale):
    doc = json.loads((FIX / "run_small" / "bench.json").read_text())
    for b in doc["benchmarks"]:
        if "time_unit" in b:
            b["time_unit"] = unit
    (tmp_path / "bench.json").write_text(json.dumps(doc))
    _, sides = gate.load_bench(tmp_path)
    want = [b["real_time"] * scale for b in doc["benchmarks"]
            if b.get("run_type") == "iteration" and not b.get("error_occurred")]
    assert sorted(t for s in sides.values() for t in s.times) == pytest.approx(sorted(want))


# --------------------------------------------------------------- as the binary runs them

@pytest.mark.parametrize("script,args", [
    ("report.py", ["RUN"]), ("claims.py", ["RUN", "--no-figures"]), ("compare.py", ["RUN", "RUN"]),
    ("figure.py", ["roofline", "RUN"]), ("gemm_summary.py", ["RUN"])])
def test_entry_files_answer_one_line(full_run, tmp_path, script, args):
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    (run / "model.json").write_bytes(b'{"schema": "rooflab.model/1", "rows": [{"name": NaN')
    bench = run / "bench.json"
    if script == "compare.py":
        bench.write_text(bench.read_text().replace('"time_unit": "ms"', '"time_unit": "fortnights"', 1))
    p = run_script(script, *[str(run) if a == "RUN" else a for a in args])
    assert p.returncode == 1, p.stderr
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert (str(bench) if script == "compare.py" else str(run / "model.json")) in p.stderr
    assert "error:" in p.stderr and p.stdout == ""
