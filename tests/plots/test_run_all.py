"""./run_all.sh's main job never loses its report (issue 14): a failing step is recorded in
RUN/steps.json, the steps that need its output are skipped with the reason, the report is
written with the failed and skipped steps at the top, and the exit status names the failed
steps. The failure here is a configure that fails (a `cmake` on PATH that exits 1), so nothing
is built or timed and the test takes seconds; the steps that do run are claims and report."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

RUN_ALL = REPO / "run_all.sh"


def run_all(tmp_path, *args, python=sys.executable):
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "cmake").write_text('#!/bin/sh\necho "CMake Error: configure failed on purpose (test)" >&2\nexit 1\n')
    (fake / "cmake").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("ROOFLAB_BUILD_DIR",)}
    env.update(PATH=f"{fake}:{env['PATH']}", ROOFLAB_PYTHON=python, MPLBACKEND="Agg")
    return subprocess.run(["bash", str(RUN_ALL), "--profile", "smoke", "--skip-deps", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=600)


def steps_of(out):
    doc = json.loads((out / "steps.json").read_text())
    assert doc["schema"] == "rooflab.steps/1"
    return doc, {s["id"]: s for s in doc["steps"]}


def test_failed_build_still_ends_with_a_report(tmp_path):
    out = tmp_path / "run"
    p = run_all(tmp_path, "--out", str(out))
    assert p.returncode == 1, p.stderr
    doc, st = steps_of(out)
    assert doc["exit_code"] == 1 and doc["profile"] == "smoke"
    assert list(st) == ["deps", "build", "characterize", "isa", "bench", "model", "pot", "counters", "gemm", "rtamm", "mpi",
                        "gpu", "claims", "report"]
    assert st["deps"]["status"] == "skipped" and st["deps"]["reason"] == "--skip-deps"
    assert st["build"]["status"] == "failed" and "configure failed on purpose" in st["build"]["reason"]
    assert st["build"]["log"] == "logs/build.log" and (out / "logs" / "build.log").is_file()
    for k in ("characterize", "isa", "bench", "pot", "counters", "gemm", "rtamm", "mpi", "gpu"):
        assert st[k]["status"] == "skipped" and "build" in st[k]["reason"], st[k]
    assert st["model"]["status"] == "skipped" and "bench.json" in st["model"]["reason"]
    assert st["claims"]["status"] == "ok" and st["report"]["status"] == "ok", (st["claims"], st["report"])
    assert all(isinstance(s["elapsed_s"], int) for s in doc["steps"])
    # the report: failed and skipped steps with their reasons at the top
    index = (out / "report" / "index.html").read_text(encoding="utf-8")
    top = index[:index.index("Self-diagnosis")]
    assert "1 failed, 11 skipped" in top and "configure failed on purpose" in top and "needs the build" in top
    assert '<a href="../logs/build.log">logs/build.log</a>' in top
    assert "configure failed on purpose" in (out / "report" / "report.md").read_text(encoding="utf-8")
    # the exit names the failed steps; the last line is the report's path
    assert "1 step(s) failed: build" in p.stderr
    assert p.stdout.strip().splitlines()[-1] == f"report: {out}/report/index.html"


def test_without_python_the_report_is_the_steps(tmp_path):
    """The last resort: plots/ cannot run at all (no usable Python), run_all.sh writes the steps."""
    out = tmp_path / "run"
    p = run_all(tmp_path, "--out", str(out), python="/bin/false")
    assert p.returncode == 1
    _, st = steps_of(out)
    assert [k for k, s in st.items() if s["status"] == "failed"] == ["build", "claims", "report"]
    md = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "steps only" in md and "configure failed on purpose" in md and "**failed** claims ledger" in md
    assert "configure failed on purpose" in (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "3 step(s) failed: build claims report" in p.stderr


def test_usage():
    h = subprocess.run(["bash", str(RUN_ALL), "--help"], capture_output=True, text=True, timeout=60)
    assert h.returncode == 0
    for s in ("smoke", "steps.json", "Exit status", "3 every step ok but some variant failed verification"):
        assert s in h.stdout, s
    bad = subprocess.run(["bash", str(RUN_ALL), "--profile", "nope"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "smoke, quick or paper" in bad.stderr


@pytest.mark.parametrize("text", ['quo"te\\back', "tab\tnew\nline", "ctl\x01\x1b[0m"])
def test_reasons_are_valid_json(tmp_path, text):
    """Whatever a failing command prints becomes a valid JSON string in steps.json."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (tmp_path / "said.txt").write_text(text + "\n")
    (fake / "cmake").write_text(f"#!/bin/sh\ncat '{tmp_path / 'said.txt'}' >&2\nexit 1\n")
    out = tmp_path / "run"
    (fake / "cmake").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", ROOFLAB_PYTHON="/bin/false")
    env.pop("ROOFLAB_BUILD_DIR", None)
    subprocess.run(["bash", str(RUN_ALL), "--skip-deps", "--out", str(out)], capture_output=True, env=env,
                   cwd=REPO, timeout=600)
    _, st = steps_of(out)  # parses
    assert st["build"]["status"] == "failed"
    last = [x for x in text.split("\n") if x.strip()][-1]  # the last line printed, control characters dropped
    assert "".join(c for c in last if c >= " ") in st["build"]["reason"], st["build"]["reason"]
