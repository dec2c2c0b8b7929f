"""report.py: the index page (self-diagnosis, machine summary, roofline, claims ledger, family
links, commands), the per-family and details pages, the Markdown summary, the comparison with a
baseline, notes for missing parts, clear errors."""
from __future__ import annotations

import copy
import html
import random
import re
import shutil

import pytest
from conftest import REPO, assert_png, load, run_script, save

from rooflab import claims

PAGES = ("sinkhorn", "floyd_warshall", "gemm", "rtamm", "mpi", "gpu")


def make_report(run, out, *extra):
    p = run_script("report.py", str(run), "--out", str(out), *extra)
    assert p.returncode == 0, p.stderr
    index = out / "index.html"
    assert p.stdout.strip().splitlines()[-1] == str(index)  # the path is the last line
    return index.read_text(encoding="utf-8")


def read(out, name):
    return (out / name).read_text(encoding="utf-8")


def row_of(page: str, name: str) -> str:
    """The <tr> of a results table whose first cell is `name` (escaped)."""
    m = re.search(r'<tr( class="\w+")?><td>' + re.escape(html.escape(name)) + r"</td>.*?</tr>", page, re.S)
    assert m, f"no table row for {name}"
    return m.group(0)


def section(page: str, start: str, end: str | None = None) -> str:
    i = page.index(start)
    return page[i:page.index(end, i)] if end else page[i:]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """run_families plus the MPI sweep and RTAMM fixtures: four families with data."""
    run = tmp_path_factory.mktemp("full") / "run"
    shutil.copytree(REPO / "tests/fixtures/run_families", run)
    shutil.copy(REPO / "tests/fixtures/mpi_run/mpi_sweep.json", run / "mpi_sweep.json")
    shutil.copy(REPO / "tests/fixtures/rtamm/run/rtamm.json", run / "rtamm.json")
    return run


# Built once per module (each build draws a dozen figures): (output directory, index.html text).
@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("small") / "report"
    return out, make_report(REPO / "tests/fixtures/run_small", out)


@pytest.fixture(scope="module")
def full_report(full_run):
    out = full_run.parent / "report"
    return out, make_report(full_run, out)


# ------------------------------------------------------------------------ index page

def test_index_of_fixture_run(run_small, small_report):
    out, page = small_report
    assert page.startswith("<!DOCTYPE html>")
    # order: self-diagnosis, machine summary, roofline, claims, families, commands
    heads = ["<h2>Self-diagnosis</h2>", "<h2>Machine</h2>", "<h2>Roofline, every family</h2>", "<h2>Claims ledger</h2>",
             "<h2>Families</h2>", "<h2>Commands to reproduce every number</h2>"]
    assert [page.index(h) for h in heads] == sorted(page.index(h) for h in heads)
    assert '<img src="roofline.png"' in page
    assert_png(out / "roofline.png")
    # machine summary: host, ISA, VM, reported vs measured capacities, ceilings
    assert "bench-vm-01" in page and "scalar, avx2" in page and "yes (KVM)" in page
    assert "caches: L3: reported 256 MiB, measured 32 MiB" in section(page, "<h2>Self-diagnosis</h2>", "<h2>Machine")
    assert "<th>read 2T</th>" in page and '<td class="num">18.92</td>' in page
    assert "<td>addmin_f32</td>" in page and '<td class="num">188.4</td>' in page
    # commands, from what the files record
    cmds = section(page, "<h2>Commands to reproduce")
    assert "rooflab bench --profile quick --filter" in cmds and f"--out {run_small}" in cmds
    assert "rooflab counters --case sinkhorn/typical/f64/128x128/threads:1 --case" in cmds
    assert "--case floyd_warshall/blocked/f32/512/threads:1 --backend cachegrind" in cmds
    assert f"rooflab model --run {run_small}" in cmds


def test_family_links_only_for_families_with_data(small_report, full_report):
    out, page = small_report
    fams = section(page, "<h2>Families</h2>", "<h2>Commands")
    for key in PAGES:
        has = key in ("sinkhorn", "floyd_warshall")
        assert (f'href="{key}.html"' in page) == has, key
        assert (out / f"{key}.html").exists() == has, key
    assert "No data in this run: GEMM (SFC-CA), RTAMM, Sinkhorn on MPI, Sinkhorn on a CUDA device" in fams
    out, page = full_report
    for key in PAGES:
        assert (f'href="{key}.html"' in page) == (key not in ("gemm", "gpu")), key
    assert '<img src="mpi_scaling.png"' in read(out, "mpi.html") and "rooflab rtamm evaluate" in read(out, "rtamm.html")
    # every page carries the same navigation bar
    for key in ("sinkhorn", "floyd_warshall", "rtamm", "mpi", "details"):
        assert '<a href="index.html">Summary</a>' in read(out, f"{key}.html")


def test_gpu_page_from_the_machine_gpu_section(tmp_path):
    run = tmp_path / "gpu"
    shutil.copytree(REPO / "tests/fixtures/gpu_run", run)
    out = tmp_path / "r"
    page = make_report(run, out)
    assert 'href="gpu.html"' in page and 'href="sinkhorn.html"' not in page
    assert '<img src="gpu_roofline.png"' in read(out, "gpu.html")


def test_gpu_page_from_the_machine_gpu_section_file(tmp_path):
    """`rooflab gpu-characterize` writes machine.gpu.json beside machine.json (joined when read)."""
    run = tmp_path / "gpu"
    shutil.copytree(REPO / "tests/fixtures/gpu_run", run)
    machine = load(run, "machine.json")
    gpu = machine.pop("gpu")
    save(run, "machine.json", machine)
    save(run, "machine.gpu.json", {"schema": "rooflab.machine_section/1", "section": "gpu",
                                   "machine_created": machine["created"], "created": "x", "value": gpu})
    out = tmp_path / "r"
    page = make_report(run, out)
    assert 'href="gpu.html"' in page and '<img src="gpu_roofline.png"' in read(out, "gpu.html")
    assert "<td>machine.gpu.json</td>" in read(out, "gpu.html")


def test_claims_ledger_rows_and_thumbnails(full_report):
    out, page = full_report
    ledger = section(page, "<h2>Claims ledger</h2>", "<h2>Families</h2>")
    assert ledger.count("<tr><td><b>") == len(claims.CLAIMS)
    for c in claims.CLAIMS:
        assert html.escape(c.statement) in ledger
    # a measured claim links its headline figure, drawn in the report directory
    row = ledger[ledger.index("typical&#x27;s column rescaling"):]
    row = row[:row.index("</tr>")]
    assert '<a href="sinkhorn_breakdown.png"><img class="thumb" src="sinkhorn_breakdown.png"' in row
    assert 'class="v-holds"' in row
    # the one-node MPI claim is measured from mpi_sweep.json; an unmeasured claim says why, no thumbnail
    mpi = ledger[ledger.index("COFFEE-CPU over MPICH-Ring on one node"):]
    assert '<img class="thumb" src="mpi_scaling.png"' in mpi[:mpi.index("</tr>")]
    knobs = ledger[ledger.index("knob prediction vs autotuned"):]
    knobs = knobs[:knobs.index("</tr>")]
    assert "gemm-knobs evaluate" in knobs and "<img" not in knobs and "not drawn" in knobs
    for img in re.findall(r'<img class="thumb" src="([^"]+)"', ledger):
        assert_png(out / img)


def test_strings_from_json_are_escaped(run_copy, tmp_path):
    doc = load(run_copy, "machine.json")
    doc["host"]["hostname"] = '<script>alert("x")</script>'
    doc["caches"]["warnings"] = ["L2 & L3 <differ>"]
    save(run_copy, "machine.json", doc)
    out = tmp_path / "r"
    page = make_report(run_copy, out)
    for name in ("index.html", "sinkhorn.html", "details.html"):
        assert "<script>" not in read(out, name)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "L2 &amp; L3 &lt;differ&gt;" in page


def test_missing_optional_parts_get_visible_notes(run_copy, tmp_path):
    (run_copy / "counters.json").unlink()
    (run_copy / "machine.json").unlink()
    out = tmp_path / "r"
    page = make_report(run_copy, out)
    assert "run `rooflab counters` to produce it" in page
    assert "run `rooflab characterize` to produce it" in page
    assert '<img src="roofline.png"' not in page and not (out / "roofline.png").exists()
    details = read(out, "details.html")
    assert '<img src="cache_misses.png"' not in details
    assert '<img src="attained_vs_predicted.png"' in details  # needs model.json only


def test_report_without_counter_backends(run_copy, tmp_path):
    doc = load(run_copy, "counters.json")
    doc["backends"] = [{"name": "papi", "available": False, "reason": "no PMU"}]
    doc["rows"] = []
    save(run_copy, "counters.json", doc)
    make_report(run_copy, tmp_path / "r")
    assert "no counter rows: no back end was available" in read(tmp_path / "r", "details.html")
    assert_png(tmp_path / "r" / "cache_misses.png", min_bytes=5_000)


@pytest.mark.parametrize("case", ["missing_dir", "wrong_schema", "empty_dir", "broken_json"])
def test_report_bad_input_fails_clearly(run_copy, tmp_path, case):
    run = run_copy
    expect = {"missing_dir": "does not exist", "wrong_schema": "unsupported schema version",
              "empty_dir": "holds none of", "broken_json": "not valid JSON"}[case]
    if case == "missing_dir":
        run = tmp_path / "nope"
    elif case == "empty_dir":
        run = tmp_path / "empty"
        run.mkdir()
    elif case == "wrong_schema":
        doc = load(run, "bench.json")
        doc["schema"] = "rooflab.bench/2"
        save(run, "bench.json", doc)
    else:
        (run / "model.json").write_text('{"schema": "rooflab.model/1", "rows": [')
    p = run_script("report.py", "--run", str(run), "--out", str(tmp_path / "out"))
    assert p.returncode == 1
    assert expect in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out" / "index.html").exists()


@pytest.mark.parametrize("args,msg", [([], "the run directory is missing"),
                                      (["RUN", "--metric", "time"], "give --baseline BASE"),
                                      (["RUN", "--run", "/elsewhere"], "two run directories given"),
                                      (["RUN", "--markdown", "--out", "x"], "--markdown prints to stdout"),
                                      (["RUN", "--bogus"], "unrecognized arguments: --bogus")])
def test_usage_errors_are_clear(run_small, args, msg):
    p = run_script("report.py", *[str(run_small) if a == "RUN" else a for a in args])
    assert p.returncode == 2 and msg in p.stderr and "usage: rooflab report" in p.stderr


# ------------------------------------------------------------------- per-family pages

def test_family_pages_with_figures_tables_and_failed_rows(full_report):
    out, _ = full_report
    sk, fw = read(out, "sinkhorn.html"), read(out, "floyd_warshall.html")
    for fig, pg in (("sinkhorn_breakdown.png", sk), ("sinkhorn_iteration.png", sk), ("fw_performance.png", fw)):
        assert f'<img src="{fig}"' in pg
        assert_png(out / fig, min_bytes=30_000)
    # summary per variant, compact tables: one column per dtype/size/threads, the cell of a known row
    assert "<h2>Benchmarks per variant</h2>" in sk and "<td>microkernel/avx2</td>" in sk
    assert "<th>f64 4096x4096 1T</th>" in sk and "<th>f32 1024x1024 2T</th>" in fw
    assert re.search(r"<td>microkernel/avx2/part:col</td>(<td[^>]*>[^<]*(<span[^>]*>[^<]*</span>)?</td>)*?"
                     r'<td class="num">13.8 ms <span class="meta">\(1.00\)</span></td>', sk)
    assert re.search(r"<td>regblock/avx2/sched:rec/layout:bdl/bs:64/task:256</td>.*?45.2", fw, re.S)
    # results with failed / skipped rows, on the family's own page only
    assert row_of(sk, "sinkhorn/c2r/f32/1023x517/part:col/threads:1").startswith('<tr class="failed">')
    assert row_of(sk, "sinkhorn/microkernel/avx512/f64/4096x4096/part:col/threads:1").startswith('<tr class="skipped">')
    assert "floyd_warshall/regblock/avx2/f32/777x777/sched:blocked/layout:bdl/bs:64/threads:2" in fw
    assert "floyd_warshall/" not in sk.split("<h2>Results</h2>")[1]
    # the command that re-times each ok row
    assert ("rooflab bench --case sinkhorn/microkernel/avx2/f64/4096x4096/part:col/threads:1 "
            "--benchmark_repetitions=3 --machine") in sk


def test_results_rows_and_escaped_messages(run_small, small_report):
    out, _ = small_report
    sk = read(out, "sinkhorn.html")
    for r in load(run_small, "model.json")["rows"]:
        pg = sk if r["family"] == "sinkhorn" else read(out, "floyd_warshall.html")
        assert f"<td>{r['status']}</td>" in row_of(pg, r["name"])
    failed = row_of(sk, "sinkhorn/blocked/f64/1000x777/threads:1")
    assert failed.startswith('<tr class="failed">')
    assert "max_err 3.2e-03 &gt; tol 1e-11 at &lt;row 999, col 776&gt; &amp; 14 more" in failed
    assert "<row 999" not in sk
    ok = row_of(sk, "sinkhorn/c2r/f64/1024x1024/part:col/threads:2")
    assert "431 µs" in ok and "276 µs" in ok and "memory/L3" in ok and "0.64" in ok


def test_self_diagnosis_from_characterize_and_bench_is_shown(run_copy, tmp_path):
    bench = load(run_copy, "bench.json")
    bench["diagnostics"] = ["2 of 50 benchmarks are unstable (coefficient of variation above 5%): a <b> (7.1%)"]
    save(run_copy, "bench.json", bench)
    machine = load(run_copy, "machine.json")
    machine["diagnostics"] = ["turbo/boost state cannot be read"]
    save(run_copy, "machine.json", machine)
    page = make_report(run_copy, tmp_path / "report")
    diag = section(page, "<h2>Self-diagnosis</h2>", "<h2>Machine</h2>")
    assert "characterize: turbo/boost state cannot be read" in diag
    assert "bench: 2 of 50 benchmarks are unstable" in diag and "a &lt;b&gt; (7.1%)" in diag


def l1_row(sec):
    return re.search(r'<tr class="disagrees"><td>L1</td>.*?</tr>', sec, re.S).group(0)


def test_machine_section_shows_ceilings_next_to_likwid_bench_and_flags_a_disagreement(run_copy, tmp_path):
    machine = load(run_copy, "machine.json")
    pt = {"kernel": "load", "test": "load_avx512", "bytes": 24000, "threads": 1, "command": "likwid-bench ..."}
    dis = "likwid-bench load_avx512 23.4 KiB 1 thread: 335 GB/s, rooflab L1 read ceiling 187 GB/s (ratio 0.558) differ by more than 10%"
    machine["likwid_bench"] = {
        "available": True, "version": "5.2", "tolerance": 0.1, "disagreements": [dis],
        "points": [dict(pt, level="L1", gbps=335.0, rooflab_ceiling_gbps=187.0, ratio=0.558, agrees=False,
                        rooflab_gbps=283.0, rooflab_now_gbps=271.5),
                   dict(pt, level="L2", bytes=512000, gbps=101.0, rooflab_ceiling_gbps=97.5, ratio=0.965,
                        agrees=True, rooflab_gbps=96.0),
                   dict(pt, level="DRAM", bytes=1 << 28, gbps=20.0, rooflab_gbps=19.0),
                   # issue 16's quick run: likwid-bench's runs 23.7, 20.8, 22.8 spread as much as the ratio
                   dict(pt, kernel="copy", test="copy_avx512", level="DRAM", bytes=1 << 28, gbps=23.66,
                        runs_gbps=[23.66, 20.84, 22.85], runs_spread=1.136, rooflab_ceiling_gbps=26.96,
                        ratio=1.139, agrees=False, within_run_spread=True, rooflab_gbps=26.96)]}
    machine["bandwidth"]["warnings"] = ["read 1 thread: 5.69 KiB at 88 GB/s is more than 10% below both neighbours"]
    save(run_copy, "machine.json", machine)
    out = tmp_path / "r"
    page = make_report(run_copy, out)
    sec = section(page, "Bandwidth ceilings vs likwid-bench", "<h3>Compute ceilings")
    assert ("2 of 4 likwid-bench comparisons disagree with rooflab&#x27;s ceiling by more than 10% (1 of them "
            "within the spread of likwid-bench&#x27;s own runs: no evidence of a difference)") in sec
    dram_copy = re.search(r'<tr class="disagrees"><td>DRAM</td><td>copy_avx512</td>.*?</tr>', sec, re.S).group(0)
    assert "<td>1.14</td>" in dram_copy and "within likwid-bench&#x27;s run spread, 1.14x" in dram_copy
    assert "run spread" not in l1_row(sec)
    l1 = l1_row(sec)
    assert "335" in l1 and "187" in l1 and "283" in l1 and "0.558" in l1 and "DISAGREES" in l1
    assert "271.5" in l1  # rooflab's kernel re-timed after likwid-bench
    l2 = re.search(r"<tr><td>L2</td>.*?</tr>", sec, re.S).group(0)
    assert "101" in l2 and "97.5" in l2 and "<td>yes</td>" in l2
    assert re.search(r">96</td><td[^>]*>—</td><td[^>]*>0.965<", l2)  # an older point without a re-timing
    assert re.search(r"<tr><td>DRAM</td><td>load_avx512</td>.*?<td>—</td></tr>", sec, re.S)  # no ceiling: no verdict
    diag = section(page, "<h2>Self-diagnosis</h2>", "<h2>Machine</h2>")
    assert "likwid-bench: likwid-bench load_avx512" in diag and "bandwidth: read 1 thread: 5.69 KiB" in diag
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "Bandwidth ceilings vs likwid-bench:" in md and "⚠ DISAGREES" in md


def test_machine_facts_say_when_characterize_had_fewer_cores_than_the_machine(run_copy):
    machine = load(run_copy, "machine.json")
    machine["host"].update(cores=1, threads=1, machine_cores=4, cpus=[3])
    save(run_copy, "machine.json", machine)
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "1 / 1 of the machine's 4 cores (this process's CPUs 3)" in md
    machine["host"].update(cores=4, threads=8, machine_cores=4, cpus=[0, 1, 2, 3])
    save(run_copy, "machine.json", machine)
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "| 4 / 8 |" in md and "of the machine's" not in md


# ------------------------------------------------------------------------ Markdown

def test_markdown_has_the_claims_table_and_summaries(full_run, full_report):
    p = run_script("report.py", str(full_run), "--markdown")
    assert p.returncode == 0, p.stderr
    md = p.stdout
    assert md.startswith("# rooflab report — ")
    assert not (full_run / "report").exists() and not (full_run / "report.md").exists()  # --markdown writes nothing
    ledger = section(md, "## Claims ledger", "## Families")
    assert "| paper | where | claim | paper's number | measured here | verdict | figure |" in ledger
    assert ledger.count("\n| ") == len(claims.CLAIMS) + 1  # header + one row per claim
    for heading in ("## Self-diagnosis", "## Machine", "### Sinkhorn (COFFEE, MAP-UOT)", "### Sinkhorn on MPI",
                    "## Commands to reproduce"):
        assert heading in md
    assert "| L3 | 32 MiB | 5.7 MiB |" in md  # reported vs measured
    assert "| microkernel/avx2 | 11 | 0 | 0 |" in md  # per-family summary
    # the HTML build writes the summary beside index.html, with the figures it drew
    written = read(full_report[0], "report.md")
    assert written.split("## Claims ledger")[0] == md.split("## Claims ledger")[0]
    assert "| **holds** | sinkhorn_breakdown.png |" in written and "not drawn: no data for this claim" in written


# ------------------------------------------------------------------------ baseline

def with_reps(doc: dict, scale: float, seed: int, n: int = 10, keep: int = 2) -> dict:
    """The first `keep` benchmarks of a bench.json with n repetitions each: the fixture's time x
    scale with 2% log-normal noise."""
    rng = random.Random(seed)
    out, names = copy.deepcopy(doc), []
    benches = []
    for b in doc["benchmarks"]:
        if b.get("run_type") != "iteration" or b["run_name"] in names:
            continue
        names.append(b["run_name"])
        if len(names) > keep:
            break
        for i in range(n):
            benches.append(dict(copy.deepcopy(b), repetition_index=i, repetitions=n,
                                real_time=b["real_time"] * scale * rng.lognormvariate(0, 0.02)))
    out["benchmarks"] = benches
    return out


@pytest.mark.parametrize("scale", [1.2, 1.0])
def test_baseline_comparison_flags_a_twenty_percent_slowdown(run_copy, tmp_path, scale):
    doc = load(run_copy, "bench.json")
    base = tmp_path / "base"
    base.mkdir()
    save(base, "bench.json", with_reps(doc, 1.0, seed=1))
    save(run_copy, "bench.json", with_reps(doc, scale, seed=2))
    name = doc["benchmarks"][0]["run_name"]
    page = make_report(run_copy, tmp_path / "r", "--baseline", str(base))
    sec = section(page, "<h2>Regression comparison", "<h2>Claims ledger</h2>")
    row = row_of(sec, name)
    if scale > 1:
        assert row.startswith('<tr class="slower">') and "a benchmark is significantly slower" in sec
        assert re.search(r'<td class="num">1\.(1[6-9]|2[0-4])\d</td>', row)  # the ratio of medians, ~1.2
    else:
        assert "<td>same</td>" in row and "no significant regression" in sec
    md = run_script("report.py", str(run_copy), "--markdown", "--baseline", str(base / "bench.json")).stdout
    assert f"## Regression comparison against `{base / 'bench.json'}`" in md
    assert ("| slower |" in md) == (scale > 1)


def test_baseline_errors_are_clear(run_copy, tmp_path):
    p = run_script("report.py", str(run_copy), "--baseline", str(tmp_path / "none.json"))
    assert p.returncode == 1 and "not found (produce it with `rooflab bench" in p.stderr
    # 3 repetitions: nothing reaches the U test's 9
    save(run_copy, "bench.json", with_reps(load(run_copy, "bench.json"), 1.0, seed=1, n=3))
    p = run_script("report.py", str(run_copy), "--baseline", str(run_copy))
    assert p.returncode == 1 and "nothing comparable" in p.stderr
    assert not (run_copy / "report").exists()  # checked before anything is drawn


def test_compute_ceilings_listed_per_isa(run_copy, tmp_path):
    machine = load(run_copy, "machine.json")
    ceil = machine["compute"]["ceilings"]
    machine["compute"]["by_isa"] = {"scalar": {"ceilings": {k: {t: v / 4 for t, v in per_t.items()} for k, per_t in ceil.items()}},
                                    machine["compute"]["isa"]: {"ceilings": ceil}}
    machine["compute"]["ceilings"]["fma_f64"]["1"] = 123.456  # widest ISA: compute.ceilings is its table
    machine["compute"]["by_isa"]["scalar"]["ceilings"]["fma_f64"]["1"] = 7.891
    save(run_copy, "machine.json", machine)
    page = make_report(run_copy, tmp_path / "r")
    sec = section(page, "<h3>Compute ceilings", "More:")
    widest = machine["compute"]["isa"]
    assert re.search(r'<tr><td>scalar</td><td>fma_f64</td><td class="num">7\.891</td>', sec)
    assert re.search(rf'<tr><td>{widest}</td><td>fma_f64</td><td class="num">123\.5</td>', sec)
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "| scalar | fma_f64 | 7.891" in md


def test_in_cache_bandwidth_listed_per_isa(run_copy, tmp_path):
    machine = load(run_copy, "machine.json")
    page = make_report(run_copy, tmp_path / "old")  # a file from before bandwidth.by_isa: said so
    sec = section(page, "In-cache bandwidth ceilings per ISA", "<h3>")
    assert "no bandwidth.by_isa" in sec and "<table" not in sec
    machine["bandwidth"]["by_isa"] = {"scalar": {"levels": {"L1": {"read": {"1": 61.25, "2": 122.5}}}},
                                      "avx2": {"levels": {"L1": {"read": {"1": 118.75}}, "L2": {"copy": {"1": 47.5}}}}}
    save(run_copy, "machine.json", machine)
    page = make_report(run_copy, tmp_path / "new")
    sec = section(page, "In-cache bandwidth ceilings per ISA", "<h3>")
    assert re.search(r'<tr><td>scalar</td><td>L1</td><td class="num">61\.25</td><td class="num">122\.5</td>', sec)
    assert re.search(r'<tr><td>avx2</td><td>L1</td><td class="num">118\.8</td><td class="num">—</td>', sec)
    assert re.search(r'<tr><td>avx2</td><td>L2</td>.*<td class="num">47\.5</td></tr>', sec)
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "In-cache bandwidth ceilings per ISA" in md and "| scalar | L1 | 61.25 | 122.5 |" in md


def test_isa_choice_table_shows_each_isa_at_its_knob_setting(run_copy, tmp_path):
    machine = load(run_copy, "machine.json")
    t = lambda ms, **kw: {"case": "c", "median_s": ms / 1e3, "min_s": ms / 1e3, "cv": None, "quiet_fraction": 1.0,
                          "disturbed": "", **kw}
    l1, l2 = t(2.66, knobs={"pf": "l1"}), t(2.86, knobs={"pf": "l2"})
    entry = {"family": "sinkhorn", "variant": "fused_uv", "dtype": "f32", "dims": "4096x4096", "threads": 1,
             "isas": {"scalar": t(4.9), "avx2": dict(l1, settings=[l2, l1])}, "chosen": "avx2", "widest": "avx2",
             "widest_over_chosen": 1.0}
    save(run_copy, "machine.isa_choice.json",
         {"schema": "rooflab.machine_section/1", "section": "isa_choice", "machine_created": machine.get("created", ""),
          "created": "2026-12-02T00:00:00Z", "value": {"entries": [entry], "failed": []}})
    page = make_report(run_copy, tmp_path / "r")
    sec = section(page, "<h3>Default ISA of each per-ISA variant", "More:")
    assert re.search(r'<tr><td>sinkhorn/fused_uv</td><td>f32</td><td>4096x4096</td><td>1</td>'
                     r'<td class="num">4\.9</td><td class="num">2\.66 with pf:l1 \(pf:l2 2\.86\)</td><td>avx2</td>', sec), sec
    md = run_script("report.py", str(run_copy), "--markdown").stdout
    assert "| 4.9 | 2.66 with pf:l1 (pf:l2 2.86) | avx2 |" in md
