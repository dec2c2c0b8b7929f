"""Failed and skipped rows in every reader of rooflab's JSON (issue 14: `rooflab counters` stored
an AVX-512 row as failed, without events, and `rooflab claims` and `rooflab report` stopped on
it). Fixture: tests/fixtures/run_failed (its README says how it was made). Each reader must
accept the rows and show them as failed / skipped with their message, never as numbers, never
crash; the report puts ./run_all.sh's failed and skipped steps (steps.json) at the top."""
from __future__ import annotations

import html
import json
import math
import os
import shutil
import subprocess

import pytest
from conftest import REPO, load, run_script, save

from rooflab import claims, figures
from rooflab import gate as compare
from rooflab.report import build as report
from rooflab.report import tables as rd
from rooflab.data.run import RooflabDataError, load_run

FIXTURE = REPO / "tests" / "fixtures" / "run_failed"
ISSUE_ROW = "sinkhorn/microkernel/avx512/f32/4096x4096/part:col/threads:1"  # failed, no "events"
SIBLING_ROW = "sinkhorn/microkernel/avx512/f64/256x256/part:col/threads:1"  # simulated as avx2
NULL_ROW = "gemm/openblas/f64/128x128x128/threads:1"                        # failed, null fields
FAILED_STEPS = ("cache-miss counters", "RTAMM units, calibration, evaluation")
SKIPPED_STEPS = ("POT comparison", "Sinkhorn on MPI", "GPU ceilings and tile sweep")


@pytest.fixture
def failed_run(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    shutil.copy(REPO / "tests/fixtures/run_families/machine.json", run / "machine.json")
    return run


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The report of the fixture run, built once: (run, out, index.html, report.md)."""
    run = tmp_path_factory.mktemp("failed") / "run"
    shutil.copytree(FIXTURE, run)
    shutil.copy(REPO / "tests/fixtures/run_families/machine.json", run / "machine.json")
    out = run / "report"
    p = run_script("report.py", str(run))
    assert p.returncode == 0, p.stderr
    return run, out, (out / "index.html").read_text(encoding="utf-8"), (out / "report.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- rooflab_data

def test_counters_rows_keep_status_message_and_no_numbers(failed_run):
    rows = load_run(failed_run).counters_df["rows"]
    by = {r["name"]: r for _, r in rows.iterrows()}
    bad = by[ISSUE_ROW]
    assert bad.status == "failed" and "AVX-512" in bad.message
    ev = [c for c in rows.columns if isinstance(c, tuple)]
    assert ev and all(math.isnan(bad[c]) for c in ev)  # NaN, never zeros
    assert by["sinkhorn/c2r/f64/4096x4096/part:col/threads:1"].status == "skipped"
    sib = by[SIBLING_ROW]
    assert sib.status == "ok" and sib.simulated_as == SIBLING_ROW.replace("avx512", "avx2")
    assert sib[("derived", "L1_miss_rate")] > 0


def test_counters_row_without_status_is_ok_and_failed_row_without_message_is_kept(failed_run):
    doc = load(failed_run, "counters.json")
    ok = next(r for r in doc["rows"] if r["status"] == "ok")
    del ok["status"]  # files written before the key existed
    doc["rows"].append({"name": "sinkhorn/typical/f64/64x64/threads:1", "backend": "cachegrind", "status": "failed"})
    save(failed_run, "counters.json", doc)
    rows = load_run(failed_run).counters_df["rows"]
    assert rows.loc[rows.name == ok["name"], "status"].iloc[0] == "ok"
    assert "no reason" in rows.loc[rows.name == "sinkhorn/typical/f64/64x64/threads:1", "message"].iloc[0]


def test_unavailable_backend_still_cannot_give_numbers(failed_run):
    doc = load(failed_run, "counters.json")
    doc["rows"].append({"name": "x/y/f64/8x8/threads:1", "backend": "papi", "status": "ok", "runs": 1,
                        "events": {"PAPI_L1_DCM": 0}, "derived": {}})
    save(failed_run, "counters.json", doc)
    with pytest.raises(RooflabDataError, match="not listed as available"):
        load_run(failed_run)


def test_model_rows_failed_with_null_fields_and_skipped(failed_run):
    m = load_run(failed_run).model_df
    by = {r["name"]: r for _, r in m.iterrows()}
    null = by[NULL_ROW]
    assert null.status == "failed" and null.family == "gemm" and null.variant == "openblas"
    assert null.dims == [128, 128, 128] and null["dtype"] == "f64" and null.threads == 1  # from the name
    assert null.params == {} and math.isnan(null.flops) and math.isnan(null.median_s)
    sk = by["sinkhorn/mapuot/f64/256x256/threads:1"]
    assert sk.status == "skipped" and math.isnan(sk.median_s) and math.isnan(sk.efficiency)
    # an ok row still needs its fields
    doc = load(failed_run, "model.json")
    next(r for r in doc["rows"] if r["status"] == "ok")["dims"] = None
    save(failed_run, "model.json", doc)
    with pytest.raises(RooflabDataError, match="dims"):
        load_run(failed_run)


def test_lenient_load_keeps_going_past_a_malformed_file(failed_run):
    doc = load(failed_run, "counters.json")
    doc["rows"][0]["events"] = {"Dr": "many"}
    save(failed_run, "counters.json", doc)
    with pytest.raises(RooflabDataError, match="Dr"):
        load_run(failed_run)
    run = load_run(failed_run, lenient=True)
    assert run.counters is None and "Dr" in run.invalid["counters"] and run.model_df is not None


# ----------------------------------------------------------------------------- claims

def test_claims_accept_failed_rows_and_name_the_simulated_sibling(failed_run):
    rows = {r["id"]: r for r in claims.evaluate(failed_run)}
    l1 = rows["coffee.l1"]
    assert l1["measured"] and SIBLING_ROW in l1["benchmarks"], l1
    assert "simulated as" in l1["note"] and "avx2" in l1["note"], l1
    assert not any("could not evaluate" in r["note"] for r in rows.values()), rows
    p = run_script("claims.py", str(failed_run))
    assert p.returncode == 0, p.stderr
    assert (failed_run / "claims.json").is_file()


def test_claims_say_why_when_only_failed_counter_rows_remain(failed_run):
    doc = load(failed_run, "counters.json")
    for r in doc["rows"]:
        if "microkernel" in r["name"]:
            r.pop("events", None), r.pop("derived", None)
            r["status"], r["message"] = "failed", "valgrind child killed by signal 11"
    save(failed_run, "counters.json", doc)
    l1 = {r["id"]: r for r in claims.evaluate(failed_run)}["coffee.l1"]
    assert l1["verdict"] == claims.NOT_MEASURED and "signal 11" in l1["note"], l1


# ----------------------------------------------------------------------------- figures

@pytest.mark.parametrize("module", figures.NAMES)
def test_every_figure_draws_or_says_why(failed_run, tmp_path, module):
    """A figure either draws the ok rows or raises RooflabDataError (a note in the report);
    any other exception is a crash on failed / skipped rows."""
    mod = figures.module(module)
    try:
        mod.plot(failed_run, tmp_path / f"{module}.png")
    except RooflabDataError:
        return
    assert (tmp_path / f"{module}.png").is_file()


def test_cache_misses_lists_failed_rows_instead_of_bars(failed_run, tmp_path):
    from rooflab.figures import cache_misses
    res = cache_misses.plot(failed_run, tmp_path / "c.png")
    assert res.has_data
    assert ISSUE_ROW not in set(res.data.name)
    assert any(ISSUE_ROW in x and "AVX-512" in x for x in res.not_counted), res.not_counted
    assert any("skipped" in x for x in res.not_counted)
    assert any("simulated as avx2" in x for x in res.data.label), list(res.data.label)


def test_attained_vs_predicted_omits_failed_and_skipped(failed_run, tmp_path):
    from rooflab.figures import attained_vs_predicted
    res = attained_vs_predicted.plot(failed_run, tmp_path / "a.png")
    text = " ".join(res.omitted)
    for name in (NULL_ROW, "sinkhorn/mapuot/f64/256x256/threads:1", "floyd_warshall/naive/f32/128x128/graph:negcycle/threads:1"):
        assert name in text, (name, res.omitted)


# ----------------------------------------------------------------------------- report

def test_report_lists_failed_and_skipped_steps_at_the_top(built):
    _, _, index, md = built
    top = index[:index.index("<h2>Self-diagnosis</h2>")]
    assert "Steps of this run: 2 failed, 3 skipped" in top
    for t in FAILED_STEPS + SKIPPED_STEPS:
        assert html.escape(t) in top, t
    assert "valgrind child timed out" in top and "POT is not installed" in top
    assert top.index("failed: cache-miss") < top.index("skipped: POT")  # failed first
    assert '<a href="../logs/counters.log">logs/counters.log</a>' not in top  # the fixture has no logs/
    head = md[:md.index("## Self-diagnosis")]
    assert "## Failed and skipped steps" in head
    for t in FAILED_STEPS + SKIPPED_STEPS:
        assert t in head, t


def test_report_counters_table_shows_failed_rows_with_their_message(built):
    _, out, _, _ = built
    details = (out / "details.html").read_text(encoding="utf-8")
    row = details[details.index(f"<td>{html.escape(ISSUE_ROW)}</td>"):]
    row = row[:row.index("</tr>")]
    assert "<td>failed</td>" in row and "cannot run AVX-512" in row
    assert not any(ch.isdigit() for cell in row.split('class="num">')[2:] for ch in cell.split("<")[0])  # no numbers
    assert f'<tr class="failed"><td>{html.escape(ISSUE_ROW)}' in details
    assert "simulated as " + html.escape(SIBLING_ROW.replace("avx512", "avx2")) in details


def test_report_family_pages_mark_failed_and_skipped_rows(built):
    _, out, _, _ = built
    gemm = (out / "gemm.html").read_text(encoding="utf-8")
    assert f'<tr class="failed"><td>{html.escape(NULL_ROW)}</td><td>failed</td>' in gemm
    sk = (out / "sinkhorn.html").read_text(encoding="utf-8")
    assert '<tr class="skipped"><td>sinkhorn/mapuot/f64/256x256/threads:1</td><td>skipped</td>' in sk
    assert "gpu.html" in (out / "index.html").read_text(encoding="utf-8")


def test_report_without_steps_has_no_steps_section(failed_run, tmp_path):
    (failed_run / "steps.json").unlink()
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr
    assert "Steps of this run" not in (tmp_path / "r" / "index.html").read_text(encoding="utf-8")


def test_keep_going_writes_the_report_past_a_malformed_file(failed_run, tmp_path):
    doc = load(failed_run, "counters.json")
    doc["schema"] = "rooflab.counters/9"
    save(failed_run, "counters.json", doc)
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "strict"))
    assert p.returncode == 1 and "counters.json" in p.stderr
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "r"), "--keep-going")
    assert p.returncode == 0, p.stderr  # a malformed input file is a note, not a failed part
    index = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert 'class="warn">' in index and "rooflab.counters/9" in index
    assert "Steps of this run" in index and (tmp_path / "r" / "report.md").is_file()


def test_keep_going_turns_a_crashing_part_into_a_warning(failed_run, tmp_path, monkeypatch):
    def boom(*_):
        raise KeyError("a reader's bug")
    monkeypatch.setattr(report, "machine_summary", boom)
    with pytest.raises(KeyError):
        report.build(failed_run, tmp_path / "strict")
    problems: list[str] = []
    index = report.build(failed_run, tmp_path / "r", keep_going=True, problems=problems)
    assert problems and "a reader's bug" in problems[0]
    text = index.read_text(encoding="utf-8")
    assert "could not be built" in text and "Claims ledger" in text
    assert "a reader&#x27;s bug" in text or "a reader's bug" in text
    assert "a reader's bug" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


def test_report_of_a_run_whose_build_failed(tmp_path):
    """Only steps.json: ./run_all.sh still gets a report naming what failed."""
    run = tmp_path / "run"
    run.mkdir()
    doc = json.loads((FIXTURE / "steps.json").read_text())
    doc["steps"] = doc["steps"][:2]
    doc["steps"][1].update(status="failed", reason="exit 2: cmake configure failed (see logs/build.log)")
    doc["steps"].append({"id": "characterize", "title": "characterize the machine", "status": "skipped",
                         "reason": "needs the build, which failed", "elapsed_s": 0, "log": ""})
    (run / "steps.json").write_text(json.dumps(doc))
    p = run_script("report.py", str(run), "--keep-going")
    assert p.returncode == 0, p.stderr
    index = (run / "report" / "index.html").read_text(encoding="utf-8")
    assert "cmake configure failed" in index and "needs the build" in index


def test_malformed_steps_file(failed_run, tmp_path):
    (failed_run / "steps.json").write_text('{"schema": "rooflab.steps/1", "steps": [{"id": "x"}]}')
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "a"))
    assert p.returncode == 1 and "steps.json" in p.stderr
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "b"), "--keep-going")
    assert p.returncode == 1 and "steps.json" in p.stderr  # a part replaced by a warning
    assert "steps.json" in (tmp_path / "b" / "index.html").read_text(encoding="utf-8")


def test_step_helpers():
    doc = json.loads((FIXTURE / "steps.json").read_text())
    probs = rd.step_problems(doc)
    assert [s for s, _ in probs] == ["failed"] * 2 + ["skipped"] * 3
    head, rows = rd.step_table(doc)
    assert len(rows) == len(doc["steps"]) and head[1] == "status"


# ----------------------------------------------------------------------------- compare, model

def test_compare_reports_failed_rows(failed_run, tmp_path):
    js = tmp_path / "c.json"
    rc = compare.main([str(failed_run), str(failed_run), "--json-out", str(js)])
    assert rc == 3  # a failed verification in NEW
    rows = {r["name"]: r for r in json.loads(js.read_text())["rows"]}
    neg = rows["floyd_warshall/naive/f32/128x128/graph:negcycle/threads:1"]
    assert neg["status"] == "failed" and "verification failed" in neg["note"] and neg["ratio"] is None


def test_gemm_summary_ignores_failed_rows(failed_run):
    from rooflab.data import gemm as gemm_data
    path = gemm_data.write_summary(failed_run)
    doc = json.loads(path.read_text())
    assert any(NULL_ROW in x and "failed" in x and "OpenBLAS" in x for x in doc["not_used"]), doc["not_used"]
    assert NULL_ROW not in json.dumps(doc["groups"])


@pytest.mark.skipif(not os.environ.get("ROOFLAB_BIN"), reason="ROOFLAB_BIN (the rooflab binary) not set")
def test_rooflab_model_reads_failed_bench_entries(failed_run):
    """`rooflab model` (C++) on a bench.json with a failed entry, without machine.json: every row,
    the failed one as failed, and the Python reader accepts the result."""
    (failed_run / "machine.json").unlink()
    p = subprocess.run([os.environ["ROOFLAB_BIN"], "model", "--bench", str(failed_run / "bench.json"),
                        "--out", str(failed_run)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    m = load_run(failed_run).model_df
    neg = m[m.name == "floyd_warshall/naive/f32/128x128/graph:negcycle/threads:1"].iloc[0]
    assert neg.status == "failed" and "negative" in neg.message and math.isnan(neg.median_s)
    assert (m.status == "ok").sum() == 5 and m.predicted_s.isna().all()


# ----------------------------------------------------------------------------- MPI sweep

def _sweep_with_failures(run, drop_model: bool):
    """tests/fixtures/mpi_run's sweep in which two runs failed (mpi_sweep.sh goes on past them)."""
    doc = json.loads((REPO / "tests/fixtures/mpi_run/mpi_sweep.json").read_text())
    gone = [r["id"] for r in doc["runs"] if r["design"] == "salar"][:2]
    doc["runs"] = [r for r in doc["runs"] if r["id"] not in gone]
    doc["failed_runs"] = [{"id": i, "args": "2 --design salar", "message": "exit 139: --design salar | "
                           "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"} for i in gone]
    if drop_model:
        doc.update(model=None, model_table=[], model_summary={}, claims={},
                   model_error="not computed (2 runs failed): KeyError: 'mpich_p1'")
    (run / "mpi_sweep.json").write_text(json.dumps(doc))
    return gone


@pytest.mark.parametrize("drop_model", [False, True])
def test_mpi_sweep_with_failed_runs(failed_run, tmp_path, drop_model):
    from rooflab.figures import mpi_breakdown
    from rooflab.figures import mpi_model
    from rooflab.report import sections as mpi_report
    from rooflab.figures import mpi_scaling
    gone = _sweep_with_failures(failed_run, drop_model)
    html_ = mpi_report.mpi_section(failed_run, tmp_path)
    assert "2 run(s) failed and are missing below" in html_ and all(g in html_ for g in gone)
    assert ("not computed (2 runs failed)" in html_) == drop_model
    for mod in (mpi_scaling, mpi_breakdown, mpi_model):
        mod.plot(failed_run, tmp_path / f"{mod.__name__}.png")
    rows = {r["id"]: r for r in claims.evaluate(failed_run)}
    assert not any("could not evaluate" in r["note"] for r in rows.values())


def test_mpi_sweep_where_every_run_failed(failed_run):
    from rooflab.data import mpi as mpi_data
    (failed_run / "mpi_sweep.json").write_text(json.dumps({
        "schema": "rooflab.mpi_sweep/1", "runs": [], "pingpong": {},
        "failed_runs": [{"id": "mpich_p1", "args": "1 --design mpich", "message": "exit 1: --design mpich | no mpiexec"}]}))
    with pytest.raises(RooflabDataError, match="every run failed: mpich_p1"):
        mpi_data.load(failed_run)
    p = run_script("report.py", str(failed_run))
    assert p.returncode == 0, p.stderr
    assert "every run failed" in (failed_run / "report" / "mpi.html").read_text(encoding="utf-8")


def test_keep_going_names_an_unusable_family_file_at_the_top(failed_run, tmp_path):
    (failed_run / "rtamm.json").write_text('{"schema": "rooflab.rtamm/1", "shapes": [')
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "strict"))
    assert p.returncode == 1 and "rtamm.json: not valid JSON" in p.stderr and "truncated" in p.stderr
    assert not (tmp_path / "strict" / "index.html").exists()
    p = run_script("report.py", str(failed_run), "--out", str(tmp_path / "r"), "--keep-going")
    assert p.returncode == 0, p.stderr  # like a malformed core file: a warning, not a failed part
    index = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    top = index[:index.index("<h2>Self-diagnosis</h2>")]
    assert 'class="warn">' in top and "rtamm.json: not valid JSON" in top
    assert "rtamm.json: not valid JSON" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
