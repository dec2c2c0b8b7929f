"""ReFrame (the venv's reframe-hpc) runs rooflab_characterize and rooflab_bench with the local
scheduler and launcher on this machine (smoke profile, a few tiny kernels):
  - without references: PASSED, every performance variable in ReFrame's report and perflog with
    the value of the test's own machine.json / model.json;
  - with references.py's file from that run (rates may fall to 1/10, times grow 10x: only a
    collapse fails): PASSED, each variable compared with a non-zero reference;
  - with that file made impossible for rooflab_bench (+1000%, tolerance 1%): FAILED in the
    performance stage, every variable 'fail' — so the references are really compared; in the
    same session, with a reference to a ceiling the run did not measure: rooflab_characterize
    FAILED in the sanity stage.
Skipped (77, by run_pytest.py) when reframe is not importable from this Python."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RF = REPO / "integrations" / "reframe"
REFRAME = Path(sys.executable).parent / "reframe"
ROOFLAB = str(Path(os.environ.get("ROOFLAB_BIN", REPO / "build" / "release" / "rooflab")).resolve())
# Tiny smoke-profile kernels every x86-64 build registers (each ISA the CPU has), one thread:
# a 2-thread case of microseconds runs several times slower whenever anything else holds a core.
FILTER = "^(gemm/blocked|sinkhorn/fused_uv)/[^/]+/f64/.*threads:1$"
SYSTEM = "local:default"


def reframe(workdir: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [str(REFRAME), "-C", str(RF / "settings.py"), "-c", str(RF / "rooflab_checks.py"),
           "--prefix", str(workdir), "--perflogdir", str(workdir / "perflogs"),
           "--report-file", str(workdir / "report.json"),
           "-S", f"rooflab={ROOFLAB}", "-S", "profile=smoke",
           "-S", "rooflab_bench.machine_profile=smoke",
           "-S", f"rooflab_bench.bench_filter={FILTER}", *extra, "-r"]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=600)
    report = json.loads((workdir / "report.json").read_text())
    return r, {tc["name"]: tc for tc in report["runs"][0]["testcases"]}


def output_dir(workdir: Path, test: str) -> Path:
    return workdir / "output" / "local" / "default" / "builtin" / test


def perfvalues(case: dict) -> dict[str, list]:
    """{variable: [value, ref, lower, upper, unit, result]} of one test case of the report."""
    return {k[len(SYSTEM) + 1:]: v for k, v in case["perfvalues"].items()}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    if not REFRAME.exists():
        pytest.skip(f"no {REFRAME}")
    if not os.access(ROOFLAB, os.X_OK):
        pytest.skip(f"no rooflab binary at {ROOFLAB} (ROOFLAB_BIN)")
    work = tmp_path_factory.mktemp("rf") / "plain"
    r, cases = reframe(work)
    return work, r, cases


def test_passes_with_every_variable_reported(first_run):
    work, r, cases = first_run
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert re.search(r"PASSED .*Ran 2/2 test case", r.stdout), r.stdout[-2000:]
    assert {n: c["result"] for n, c in cases.items()} == {"rooflab_characterize": "pass",
                                                          "rooflab_bench": "pass"}

    # The ceilings: the values of the test's own machine.json (kept in its output directory).
    machine = json.loads((output_dir(work, "rooflab_characterize") / "machine.json").read_text())
    pv = perfvalues(cases["rooflab_characterize"])
    allt = str(max(int(t) for t in machine["bandwidth"]["levels"]["DRAM"]["read"]))
    assert int(allt) == len(os.sched_getaffinity(0))   # characterize used every CPU
    for level in ("DRAM", "L1"):
        for t in sorted({"1", allt}):
            value, ref, lower, upper, unit, result = pv[f"bw_{level}_read_t{t}"]
            assert value == machine["bandwidth"]["levels"][level]["read"][t] and value > 0
            assert unit == "GB/s" and result == "pass" and ref == 0   # no reference given
    by_isa = machine["compute"].get("by_isa") or {machine["compute"]["isa"]: machine["compute"]}
    assert set(machine["host"]["isa"]) <= set(by_isa)
    for isa, entry in by_isa.items():
        for op in ("fma_f64", "fma_f32", "addmin_f64", "addmin_f32"):
            for t in sorted({"1", allt}):
                assert pv[f"{op}_{isa}_t{t}"][0] == entry["ceilings"][op][t] > 0
                assert pv[f"{op}_{isa}_t{t}"][4] == "GFLOP/s"

    # The kernels: each measured row of the test's model.json, efficiency and time.
    model = json.loads((output_dir(work, "rooflab_bench") / "model.json").read_text())
    pb = perfvalues(cases["rooflab_bench"])
    rows = [row for row in model["rows"] if row["status"] == "ok"]
    assert len(rows) >= 2 and all(re.search(FILTER, row["name"]) for row in rows)
    for row in rows:
        key = row["name"].replace(":", "=")
        assert pb[f"{key}/efficiency"][0] == row["efficiency"] > 0
        assert pb[f"{key}/time"][0] == row["median_s"] > 0
        assert pb[f"{key}/gflops"][0] == row["gflops"] > 0

    # The perflog: one line per test, each variable with a finite value.
    for test, vars_ in (("rooflab_characterize", pv), ("rooflab_bench", pb)):
        log = (work / "perflogs" / "local" / "default" / f"{test}.log").read_text().splitlines()
        line = log[-1]
        assert "|pass|" + test + "|" in line
        for name in vars_:
            m = re.search(re.escape(name) + r"=([^|]+)\|", line)
            assert m and math.isfinite(float(m.group(1))), (name, line[:300])


def _reference_file(work: Path, out: Path, tolerance: str) -> dict:
    # The bench test's output is a whole rooflab run: machine.json + bench.json + model.json.
    r = subprocess.run([sys.executable, str(RF / "references.py"),
                        str(output_dir(work, "rooflab_bench")), "--system", "local",
                        "--out", str(out), "--tolerance", tolerance],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def _same_machine(work: Path) -> tuple[str, ...]:
    # rooflab_bench prices its kernels against the first run's machine.json (its `machine`
    # variable) instead of characterizing again: a minute less per session, the same predictions.
    return "-S", f"rooflab_bench.machine={output_dir(work, 'rooflab_bench') / 'machine.json'}"


def test_met_references_pass(first_run):
    work, _, _ = first_run
    refs = work.parent / "refs.json"
    doc = _reference_file(work, refs, "0.9")
    # Only a collapse fails: rates down to 1/10 (tolerance 0.9), times up to 10x, as a test
    # beside other jobs on a small machine must allow.
    for name, ref in doc["systems"]["local"]["rooflab_bench"]["references"].items():
        if name.endswith("/time"):
            ref[2] = 9.0
    refs.write_text(json.dumps(doc))
    r, cases = reframe(work.parent / "met", "-S", f"references={refs}", *_same_machine(work))
    assert r.returncode == 0, r.stdout[-3000:]
    for name in ("rooflab_characterize", "rooflab_bench"):
        assert cases[name]["result"] == "pass"
        compared = [v for v in perfvalues(cases[name]).values() if v[1] != 0]
        assert compared and all(v[5] == "pass" for v in compared)
    # rooflab_bench ran the referenced kernels (the file's cases), no more.
    bench = perfvalues(cases["rooflab_bench"])
    ref_doc = json.loads(refs.read_text())["systems"]["local"]["rooflab_bench"]
    assert set(bench) == set(ref_doc["references"])


def test_impossible_and_unmeasured_references_fail(first_run):
    # One session (a smoke characterize less than two): rooflab_bench's references +1000%
    # (GFLOP/s and efficiency 11x what was measured, times 11x shorter) fail in the performance
    # stage, every variable 'fail', so the references are really compared; rooflab_characterize's
    # name a ceiling the run did not measure (an ISA gone, a thread count not reached), a
    # failure in the sanity stage, not a variable silently left out.
    work, _, _ = first_run
    refs = work.parent / "impossible.json"
    doc = _reference_file(work, refs, "0.01")
    for name, ref in doc["systems"]["local"]["rooflab_bench"]["references"].items():
        ref[0] = ref[0] / 11 if name.endswith("/time") else ref[0] * 11
    doc["systems"]["local"]["rooflab_characterize"]["references"]["fma_f64_avx1024_t1"] = \
        [1.0, -0.1, None, "GFLOP/s"]
    refs.write_text(json.dumps(doc))
    r, cases = reframe(work.parent / "impossible", "-S", f"references={refs}", *_same_machine(work))
    assert r.returncode != 0
    assert re.search(r"FAILED .*2 failure", r.stdout), r.stdout[-2000:]
    case = cases["rooflab_bench"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    pv = perfvalues(case)
    assert pv and all(v[5] == "fail" for v in pv.values())
    assert "failed to meet reference" in r.stdout
    case = cases["rooflab_characterize"]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "fma_f64_avx1024_t1" in case["fail_reason"], case["fail_reason"]
