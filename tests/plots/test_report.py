"""report.py: the HTML report of the fixture run, its notes for missing parts, its errors."""
from __future__ import annotations

import html
import re
import shutil

import pytest
from conftest import assert_png, load, run_script, save


def make_report(run, out):
    p = run_script("report.py", "--run", str(run), "--out", str(out))
    assert p.returncode == 0, p.stderr
    index = out / "index.html"
    assert p.stdout.strip().splitlines()[-1] == str(index)  # the path is the last line
    return index.read_text(encoding="utf-8")


def row_of(page: str, name: str) -> str:
    """The <tr> of the results table whose first cell is `name` (escaped)."""
    m = re.search(r'<tr( class="\w+")?><td>' + re.escape(html.escape(name)) + r"</td>.*?</tr>", page, re.S)
    assert m, f"no table row for {name}"
    return m.group(0)


def test_report_of_fixture_run(run_small, tmp_path):
    out = tmp_path / "report"
    page = make_report(run_small, out)
    assert page.startswith("<!DOCTYPE html>")
    for fig in ("roofline.png", "attained_vs_predicted.png", "bandwidth.png", "cache_misses.png"):
        assert f'<img src="{fig}"' in page
        assert_png(out / fig)
    # every model row is in the results table with its status
    for r in load(run_small, "model.json")["rows"]:
        assert f"<td>{r['status']}</td>" in row_of(page, r["name"])
    failed = row_of(page, "sinkhorn/blocked/f64/1000x777/threads:1")
    assert failed.startswith('<tr class="failed">')
    # the failed row's message, escaped (it holds <, > and &)
    assert "max_err 3.2e-03 &gt; tol 1e-11 at &lt;row 999, col 776&gt; &amp; 14 more" in failed
    assert "<row 999" not in page
    ok = row_of(page, "sinkhorn/c2r/f64/1024x1024/part:col/threads:2")
    assert "431 µs" in ok and "276 µs" in ok and "memory/L3" in ok and "0.64" in ok
    # machine summary: host, ISA, VM, capacity warning, bandwidth and compute tables
    assert "bench-vm-01" in page and "scalar, avx2" in page and "yes (KVM)" in page
    assert "warning: L3: reported 256 MiB, measured 32 MiB" in page
    assert "<th>read 2T</th>" in page and '<td class="num">18.92</td>' in page
    assert "<td>addmin_f32</td>" in page and '<td class="num">188.4</td>' in page
    # counters: back ends with their reasons and the cachegrind rows
    assert "PAPI_TOT_CYC reads 0: no PMU in this VM" in page
    assert "<th>D1mr</th>" in page and "<td>floyd_warshall/blocked/f32/512/threads:1</td><td>cachegrind</td>" in page
    # provenance
    assert "<code>rooflab bench</code>" in page and "profile: quick" in page


def test_strings_from_json_are_escaped(run_copy, tmp_path):
    doc = load(run_copy, "machine.json")
    doc["host"]["hostname"] = '<script>alert("x")</script>'
    doc["caches"]["warnings"] = ["L2 & L3 <differ>"]
    save(run_copy, "machine.json", doc)
    page = make_report(run_copy, tmp_path / "r")
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "L2 &amp; L3 &lt;differ&gt;" in page


def test_missing_optional_parts_get_visible_notes(run_copy, tmp_path):
    (run_copy / "counters.json").unlink()
    (run_copy / "machine.json").unlink()
    page = make_report(run_copy, tmp_path / "r")
    assert "run `rooflab counters` to produce it" in page
    assert "run `rooflab characterize` to produce it" in page
    assert '<img src="cache_misses.png"' not in page and '<img src="roofline.png"' not in page
    assert '<img src="attained_vs_predicted.png"' in page  # needs model.json only
    assert not (tmp_path / "r" / "roofline.png").exists()


def test_report_without_counter_backends(run_copy, tmp_path):
    doc = load(run_copy, "counters.json")
    doc["backends"] = [{"name": "papi", "available": False, "reason": "no PMU"}]
    doc["rows"] = []
    save(run_copy, "counters.json", doc)
    page = make_report(run_copy, tmp_path / "r")
    assert "no counter rows: no back end was available" in page
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
    assert p.returncode == 2
    assert expect in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "out" / "index.html").exists()


# ------------------------------------------------------------------- per-family sections

def test_family_sections_with_figures_tables_and_failed_rows(run_families, tmp_path):
    out = tmp_path / "r"
    page = make_report(run_families, out)
    # after the general figures, before the results table
    assert page.index("<h2>Figures</h2>") < page.index("<h2>Sinkhorn</h2>") < \
        page.index("<h2>Floyd-Warshall</h2>") < page.index("<h2>Results</h2>")
    for fig in ("sinkhorn_breakdown.png", "sinkhorn_iteration.png", "fw_performance.png"):
        assert f'<img src="{fig}"' in page
        assert_png(out / fig, min_bytes=30_000)
    sk = page[page.index("<h2>Sinkhorn</h2>"):page.index("<h2>Floyd-Warshall</h2>")]
    fw = page[page.index("<h2>Floyd-Warshall</h2>"):page.index("<h2>Results</h2>")]
    # compact tables: one column per dtype/size/threads, the cell of a known row
    assert "<th>f64 4096x4096 1T</th>" in sk and "<th>f32 1024x1024 2T</th>" in fw
    assert re.search(r"<td>microkernel/avx2/part:col</td>(<td[^>]*>[^<]*(<span[^>]*>[^<]*</span>)?</td>)*?"
                     r'<td class="num">13.8 ms <span class="meta">\(1.00\)</span></td>', sk)
    assert re.search(r"<td>regblock/avx2/sched:rec/layout:bdl/bs:64/task:256</td>.*?45.2", fw, re.S)
    # failed / skipped rows of each family are listed in that family's section
    assert '<tr class="failed"><td>sinkhorn/c2r/f32/1023x517/part:col/threads:1</td>' in sk
    assert '<tr class="skipped"><td>sinkhorn/microkernel/avx512/f64/4096x4096/part:col/threads:1</td>' in sk
    assert "floyd_warshall/regblock/avx2/f32/777x777/sched:blocked/layout:bdl/bs:64/threads:2" in fw
    assert "no sinkhorn benchmarks" not in page and "no floyd_warshall benchmarks" not in page


def test_family_section_of_a_run_without_the_family(run_small, tmp_path):
    doc = load(run_small, "model.json")
    out = tmp_path / "r"
    run = tmp_path / "run"
    shutil.copytree(run_small, run)
    doc["rows"] = [r for r in doc["rows"] if r["family"] != "floyd_warshall"]
    save(run, "model.json", doc)
    page = make_report(run, out)
    fw = page[page.index("<h2>Floyd-Warshall</h2>"):page.index("<h2>Results</h2>")]
    assert "no floyd_warshall benchmarks in this run" in fw
    assert '<img src="fw_performance.png"' not in page and not (out / "fw_performance.png").exists()
    assert '<img src="sinkhorn_breakdown.png"' in page  # run_small still has Sinkhorn rows


def test_family_sections_without_model_json(run_copy, tmp_path):
    (run_copy / "model.json").unlink()
    page = make_report(run_copy, tmp_path / "r")
    sk = page[page.index("<h2>Sinkhorn</h2>"):page.index("<h2>Floyd-Warshall</h2>")]
    assert "not drawn:" in sk and "run `rooflab model`" in sk


def test_self_diagnosis_from_characterize_and_bench_is_shown(run_copy, tmp_path):
    bench = load(run_copy, "bench.json")
    bench["diagnostics"] = ["2 of 50 benchmarks are unstable (coefficient of variation above 5%): a <b> (7.1%)"]
    save(run_copy, "bench.json", bench)
    machine = load(run_copy, "machine.json")
    machine["diagnostics"] = ["turbo/boost state cannot be read"]
    save(run_copy, "machine.json", machine)
    page = make_report(run_copy, tmp_path / "report")
    assert "<h2>Self-diagnosis</h2>" in page
    assert "characterize: turbo/boost state cannot be read" in page
    assert "bench: 2 of 50 benchmarks are unstable" in page and "a &lt;b&gt; (7.1%)" in page
