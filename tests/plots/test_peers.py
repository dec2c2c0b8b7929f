"""plots/peer_table.py (rooflab/peers.py): the per-CPU-class peer table rendered from a fixture run
of scripts/peer_table.sh (tests/fixtures/peers_zen3: hand-made JSON of an AVX2-only Zen 3, no
timing). Ratios, % of ceiling, the class name of two CPUs, failures shown as failures, other
classes' files left as they were, and bad input as one line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import PLOTS, REPO

from rooflab import peers

FIXTURE = REPO / "tests" / "fixtures" / "peers_zen3"


def table_rows(text: str, work: str) -> dict[str, list[str]]:
    """{implementation cell: cells} of the Markdown table rows of one work item."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == work:
            out[cells[1]] = cells
    return out


def render_edited(tmp_path, peer_run: dict | None = None, bench_top: dict | None = None, entry=None) -> str:
    """The fixture copied with peer_run.json / bench.json's top level updated and `entry(e)`
    applied to each benchmark entry, rendered; the class file's text."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    pr = json.loads((run / "peer_run.json").read_text())
    pr.update(peer_run or {})
    (run / "peer_run.json").write_text(json.dumps(pr))
    b = json.loads((run / "bench.json").read_text())
    b.update(bench_top or {})
    for e in b["benchmarks"] if entry else []:
        entry(e)
    (run / "bench.json").write_text(json.dumps(b))
    tables = tmp_path / "peers"
    assert peers.main([str(run), "--tables", str(tables)]) == 0
    return (tables / "amd-zen3-avx2.md").read_text()


@pytest.fixture
def rendered(tmp_path):
    tables = tmp_path / "peers"
    assert peers.main([str(FIXTURE), "--tables", str(tables)]) == 0
    return tables, (tables / "amd-zen3-avx2.md").read_text()


def test_gemm_ratios_ceiling_and_code_paths(rendered):
    _, text = rendered
    assert "above the measured ceiling" not in text and "compute warning" not in text
    rows = table_rows(text, "DGEMM 1024^3, 2 threads")
    best = rows["**blocked/avx2** (rooflab best)"]
    # median of 30, 31, 32 ms for 2 * 1024^3 flops; the avx2 fma_f64 ceiling at 2 threads is 100
    assert best[3] == f"{2 * 1024**3 / 31e-3 / 1e9:.1f}" and best[4] == "69%"
    ob, blis = rows["OpenBLAS"], rows["BLIS"]
    assert ob[2] == "OpenBLAS 0.3.21: core Zen" and "not its best" not in ob[2]
    assert ob[5] == f"{29 / 31:.2f}"  # speed ratio: OpenBLAS's median time over blocked's
    assert blis[5] == f"{40 / 31:.2f}"
    assert "**not its best** (best: config zen3" in blis[2]
    # a library is priced against the widest ISA's ceiling (avx2 here): 2 * 1024^3 / 29 ms
    assert ob[4] == f"{100 * 2 * 1024**3 / 29e-3 / 1e9 / 100:.0f}%"


def test_failed_verification_is_a_failure_not_a_number(rendered):
    _, text = rendered
    rows = table_rows(text, "DGEMM 1024^3, 2 threads")
    sfc = rows["sfc_ca/avx2 (k_layers:1/kbf:2)"]
    assert sfc[3].startswith("**FAILED**: verification failed") and sfc[4] == "—" and sfc[5] == "—"
    assert "step bench **failed**" in text
    # an absent case is said to be absent; a work item with no verified rooflab case says so
    sgemm = table_rows(text, "SGEMM 1024^3, 2 threads")
    assert sgemm["oneDNN"][3] == "— (not in bench.json)"
    assert "no rooflab case verified and timed" in sgemm["rooflab best"][3]


def test_failed_pot_step_is_shown_as_failure(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    pr = json.loads((run / "peer_run.json").read_text())
    pr["steps"][2] = {"id": "pot", "status": "failed", "exit_code": 1,
                      "message": "pot_compare.py exit 1: rooflab sinkhorn failed (exit 3): verification failed"}
    (run / "peer_run.json").write_text(json.dumps(pr))
    assert peers.main([str(run), "--tables", str(tmp_path / "t")]) == 0
    text = (tmp_path / "t" / "amd-zen3-avx2.md").read_text()
    sink = text.split("## Sinkhorn vs POT")[1]
    assert "**FAILED**: pot_compare.py exit 1" in sink and "ms / iteration" not in sink


def test_fw_without_peer_and_sinkhorn_ratio(rendered):
    _, text = rendered
    fw = table_rows(text, "FW f32 N=4096, 2 threads")
    row = fw["**regblock/avx2 (sched:rec/layout:bdl/bs:64/task:256)** (rooflab best)"]
    assert row[2] == "3.100" and row[5] == "none installed"
    assert row[4] == f"{100 * 2 * 4096**3 / 3.1 / 1e9 / 80:.0f}%"  # add+min avx2 ceiling 80 at 2 threads
    # the blocked schedule at 2 threads is a row of the same work item, not its best
    assert fw["regblock/avx2 (sched:blocked/layout:bdl/bs:64)"][2] == "3.400"
    # the 1-thread recursive row is its own work item (its own best), for the scaling line
    (one,) = table_rows(text, "FW f32 N=4096, 1 thread").values()
    assert one[2] == "6.000" and one[4] == f"{100 * 2 * 4096**3 / 6.0 / 1e9 / 40:.0f}%"  # 1-thread ceiling 40
    assert ("- regblock/avx2 f32 N=4096 bs:64: recursive, 1 → 2 threads 6.000 → 3.100 s, **1.94x**, "
            "recursive / blocked at 2 threads **0.91** in time") in text
    sk = table_rows(text, "Sinkhorn f64 4096x4096, 2 threads")
    assert sk["POT sinkhorn_knopp (NumPy/BLAS)"][4] == "2.50"  # 30 ms / fused_uv's 12 ms
    assert "**fused_uv/avx2** (rooflab best)" in sk
    # issue 17's Sinkhorn order from the fixture's blocked (18 ms) and c2r (20 ms) rows
    assert ("- Sinkhorn f64 4096x4096, 2 threads: blocked / c2r 18.00 / 20.00 ms, **0.90** in time") in text


def test_sinkhorn_order_line_needs_both_variants(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    doc = json.loads((run / "pot_compare.json").read_text())
    doc["rows"] = [r for r in doc["rows"] if r["variant"] != "blocked"]
    (run / "pot_compare.json").write_text(json.dumps(doc))
    assert peers.main([str(run), "--tables", str(tmp_path / "peers")]) == 0
    text = (tmp_path / "peers" / "amd-zen3-avx2.md").read_text()
    assert "Variant order" not in text and "blocked / c2r" not in text
    assert "| Sinkhorn f64 4096x4096, 2 threads | c2r | 20.00 |" in text


def test_sinkhorn_rows_name_a_calibrated_prefetch_target(tmp_path):
    # pot_compare.py's rows carry `rooflab sinkhorn`'s "prefetch": named like a case parameter,
    # only where it is not the default l2
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    doc = json.loads((run / "pot_compare.json").read_text())
    for r in doc["rows"]:
        if r["impl"] == "rooflab":
            r["prefetch"] = "l1" if r["variant"] == "fused_uv" else "l2" if r["variant"] == "mapuot" else None
    (run / "pot_compare.json").write_text(json.dumps(doc))
    assert peers.main([str(run), "--tables", str(tmp_path / "peers")]) == 0
    sk = table_rows((tmp_path / "peers" / "amd-zen3-avx2.md").read_text(), "Sinkhorn f64 4096x4096, 2 threads")
    assert "**fused_uv/avx2/pf:l1** (rooflab best)" in sk
    assert not any("pf:l2" in k for k in sk) and "c2r" in sk


def test_fw_scaling_pairs_rows_of_the_same_tile_size(tmp_path):
    # the fixture's FW rows again in tiles of 128, each 2x faster: the best is a bs:128 row, and
    # each tile size's scaling line uses its own 1-thread and blocked rows
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    doc = json.loads((run / "bench.json").read_text())
    extra = []
    for b in doc["benchmarks"]:
        if b["name"].startswith("floyd_warshall/"):
            c = json.loads(json.dumps(b))
            for k in ("name", "run_name"):
                c[k] = c[k].replace("bs:64", "bs:128")
            c["real_time"] = b["real_time"] / 2
            extra.append(c)
    assert len(extra) >= 3
    doc["benchmarks"] += extra
    (run / "bench.json").write_text(json.dumps(doc))
    pr = json.loads((run / "peer_run.json").read_text())
    pr["cases"] += [c.replace("bs:64", "bs:128") for c in pr["cases"] if c.startswith("floyd_warshall/")]
    (run / "peer_run.json").write_text(json.dumps(pr))
    assert peers.main([str(run), "--tables", str(tmp_path / "t")]) == 0
    text = (tmp_path / "t" / "amd-zen3-avx2.md").read_text()
    fw = table_rows(text, "FW f32 N=4096, 2 threads")
    assert "**regblock/avx2 (sched:rec/layout:bdl/bs:128/task:256)** (rooflab best)" in fw
    assert fw["**regblock/avx2 (sched:rec/layout:bdl/bs:128/task:256)** (rooflab best)"][2] == "1.550"
    assert ("- regblock/avx2 f32 N=4096 bs:64: recursive, 1 → 2 threads 6.000 → 3.100 s, **1.94x**, "
            "recursive / blocked at 2 threads **0.91** in time") in text
    assert ("- regblock/avx2 f32 N=4096 bs:128: recursive, 1 → 2 threads 3.000 → 1.550 s, **1.94x**, "
            "recursive / blocked at 2 threads **0.91** in time") in text


def test_header_facts(rendered):
    _, text = rendered
    assert text.startswith("<!-- rooflab peer table: class=amd-zen3-avx2 date=2026-11-22T08:00:00Z ")
    for s in ("AMD EPYC 7B13 64-Core Processor (AuthenticAMD family 25 model 1)", "L1d 32 KiB, L2 512 KiB, L3 32 MiB",
              "commit 0123456789ab", "`scripts/peer_table.sh --rooflab build/release/rooflab`",
              "OPENBLAS_CORETYPE and BLIS_ARCH_TYPE unset", "avx2 at 2 threads: fma_f32 200, fma_f64 100"):
        assert s in text


@pytest.mark.parametrize("cpu,isa,want", [
    ({"vendor": "AuthenticAMD", "family": 25, "model": 1, "model_name": "AMD EPYC 7B13 64-Core Processor"},
     ["scalar", "avx2"], "amd-zen3-avx2"),
    ({"vendor": "GenuineIntel", "family": 6, "model": 106, "model_name": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"},
     ["scalar", "avx2", "avx512"], "intel-xeon-avx512"),
    ({"vendor": "AuthenticAMD", "family": 26, "model": 2, "model_name": "AMD EPYC"},
     ["scalar", "avx2", "avx512"], "amd-zen5-avx512"),
    ({"vendor": "AuthenticAMD", "family": 25, "model": 0x11, "model_name": "AMD EPYC 9654"},
     ["scalar", "avx2", "avx512"], "amd-zen4-avx512"),
])
def test_class_name_is_derived(cpu, isa, want):
    assert peers.cpu_class(cpu, {"host": {"isa": isa}}) == want


def test_class_follows_machine_jsons_cpu_signature():
    # machine.json's host.cpu_signature is the one record; cpu.json only for older machine.json files
    m = {"host": {"isa": ["scalar", "avx2", "avx512"], "cpu": "AMD EPYC",
                  "cpu_signature": "AuthenticAMD family 26 model 2 stepping 1"}}
    assert peers.cpu_class(peers.cpu_facts(None, m), m) == "amd-zen5-avx512"
    zen3 = {"vendor": "AuthenticAMD", "family": 25, "model": 1, "model_name": "AMD EPYC 7B13"}
    facts = peers.cpu_facts(zen3, m)
    assert (facts["family"], facts["model"], facts["model_name"]) == (26, 2, "AMD EPYC 7B13")
    old = {"host": {"isa": ["scalar", "avx2"]}}
    assert peers.cpu_facts(zen3, old) is zen3 and peers.cpu_facts(None, old) is None
    assert peers.cpu_class(peers.cpu_facts(zen3, old), old) == "amd-zen3-avx2"


def test_class_of_a_second_cpu_and_other_classes_untouched(tmp_path):
    tables = tmp_path / "peers"
    tables.mkdir()
    other = tables / "intel-xeon-avx512.md"
    other.write_text("<!-- rooflab peer table: class=intel-xeon-avx512 date=2026-11-20T00:00:00Z cpu=Intel Xeon -->\nold\n")
    before = other.read_bytes()
    assert peers.main([str(FIXTURE), "--tables", str(tables)]) == 0
    assert other.read_bytes() == before
    index = (tables / "README.md").read_text()
    assert "- [amd-zen3-avx2](amd-zen3-avx2.md): 2026-11-22T08:00:00Z" in index
    assert "- [intel-xeon-avx512](intel-xeon-avx512.md): 2026-11-20T00:00:00Z, Intel Xeon" in index
    # the same run as seen on an AVX-512 Xeon: its own file, the Zen 3 one unchanged
    run = tmp_path / "xeon"
    shutil.copytree(FIXTURE, run)
    cpu = json.loads((run / "cpu.json").read_text())
    cpu.update(vendor="GenuineIntel", family=6, model=85, model_name="Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz")
    (run / "cpu.json").write_text(json.dumps(cpu))
    m = json.loads((run / "machine.json").read_text())
    m["host"]["isa"].append("avx512")
    m["compute"]["isa"] = "avx512"
    (run / "machine.json").write_text(json.dumps(m))
    zen3 = (tables / "amd-zen3-avx2.md").read_bytes()
    assert peers.main([str(run), "--tables", str(tables)]) == 0
    assert (tables / "amd-zen3-avx2.md").read_bytes() == zen3
    assert "Intel(R) Xeon(R) Gold 6148" in (tables / "intel-xeon-avx512.md").read_text()
    assert sorted(p.name for p in tables.iterdir()) == ["README.md", "amd-zen3-avx2.md", "intel-xeon-avx512.md"]


def test_class_override(tmp_path):
    assert peers.main([str(FIXTURE), "--tables", str(tmp_path), "--class", "ci-zen3"]) == 0
    assert (tmp_path / "ci-zen3.md").read_text().startswith("<!-- rooflab peer table: class=ci-zen3 ")


@pytest.mark.parametrize("args,code,msg", [
    (["{tmp}/nothing"], 1, "peer_run.json is missing"),
    (["{fix}", "--class", "Bad Name"], 2, "--class must be"),
    ([], 2, "the run directory is missing"),
])
def test_bad_input_is_one_line(tmp_path, args, code, msg):
    argv = [a.format(tmp=tmp_path, fix=FIXTURE) for a in args] + ["--tables", str(tmp_path / "t")]
    p = subprocess.run([sys.executable, str(PLOTS / "peer_table.py"), *argv], capture_output=True, text=True)
    assert p.returncode == code
    assert msg in p.stderr and len(p.stderr.strip().splitlines()) == 1 and p.stdout == ""
    assert not (tmp_path / "t" / "README.md").exists()


def test_malformed_bench_is_one_line(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "bench.json").write_text('{"schema": "rooflab.bench/1", "benchmarks": 3}')
    p = subprocess.run([sys.executable, str(PLOTS / "peer_table.py"), str(run), "--tables", str(tmp_path / "t")],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "bench.json" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t" / "amd-zen3-avx2.md").exists()


SCRIPT = REPO / "scripts" / "peer_table.sh"


@pytest.mark.parametrize("args,msg", [(["--reps", "x"], "--reps must be a positive integer"),
                                      (["--class", "A B"], "--class must be"), (["--bogus"], "unknown option"),
                                      (["--render-only"], "--render-only needs --out"), (["--out"], "--out needs a value"),
                                      (["--rounds", "10"], "--rounds must be 1..9")])
def test_script_usage_errors_are_one_line(args, msg):
    p = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1 and p.stdout == ""


def test_script_render_only_writes_the_table_without_timing(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    p = subprocess.run(["bash", str(SCRIPT), "--render-only", "--out", str(run), "--tables", str(tmp_path / "t")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "t" / "amd-zen3-avx2.md").read_text() == (
        peers.render(peers.load(run), "amd-zen3-avx2"))
    p = subprocess.run(["bash", str(SCRIPT), "--render-only", "--out", str(tmp_path / "none")], capture_output=True, text=True)
    assert p.returncode == 1 and "not a run of scripts/peer_table.sh" in p.stderr


def test_a_rate_above_its_measured_ceiling_is_flagged_not_printed_as_efficiency(tmp_path):
    # The Zen 4 KVM case: the 2-thread avx2 fma_f64 ceiling measured at the 1-thread rate (the
    # threads shared a core), so blocked/avx2's 69% becomes 138%: shown with the flag, the
    # compute warning repeated, and the GFLOP/s and speed ratios unchanged.
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    m = json.loads((run / "machine.json").read_text())
    m["compute"]["by_isa"]["avx2"]["ceilings"]["fma_f64"]["2"] = 50.0
    m["compute"]["ceilings"]["fma_f64"]["2"] = 50.0
    m["compute"]["warnings"] = ["avx2 fma_f64 at 2 threads: 50 GFLOP/s, 1x the 1-thread 50 after 3 re-measurements"]
    (run / "machine.json").write_text(json.dumps(m))
    tables = tmp_path / "peers"
    assert peers.main([str(run), "--tables", str(tables)]) == 0
    text = (tables / "amd-zen3-avx2.md").read_text()
    best = table_rows(text, "DGEMM 1024^3, 2 threads")["**blocked/avx2** (rooflab best)"]
    assert best[4].startswith("139%") and "above the measured ceiling" in best[4]
    assert best[3] == f"{2 * 1024**3 / 31e-3 / 1e9:.1f}"
    assert "compute warning: avx2 fma_f64 at 2 threads" in text
    assert "Some rows run above their measured ceiling" in text


def test_rounds_show_their_range_and_the_value_is_the_kept_rounds(tmp_path):
    # `peer_table.sh --rounds 3`: bench.json's rooflab.rounds per case (the kept round is the one
    # whose repetitions are in the file, 30-32 ms) and the top-level "rounds"; the cell keeps the
    # kept round's median and adds the range over the rounds, in the cell's unit.
    def entry(e):
        if e["name"].startswith("gemm/blocked/avx2/f64/1024x1024x1024/threads:2"):
            e["rooflab"]["rounds"] = [{"round": 1, "median_s": 0.040, "cv": 0.01, "disturbed": False},
                                      {"round": 2, "median_s": 0.031, "cv": 0.01, "disturbed": False},
                                      {"round": 3, "median_s": 0.035, "cv": 0.01, "disturbed": False}]
        if e["name"].startswith("gemm/openblas/f64/1024x1024x1024/threads:2"):
            # every round disturbed, a retry's rows kept (slower than the rounds: undisturbed wins)
            e["rooflab"]["rounds"] = [{"round": 1, "median_s": 0.020, "cv": 0.2, "disturbed": True},
                                      {"round": 2, "median_s": 0.021, "cv": 0.2, "disturbed": True}]
            e["rooflab"]["kept_retry"] = 1
    text = render_edited(tmp_path, bench_top={"rounds": {"n": 3, "spread_max": 1.15, "varied": []}}, entry=entry)
    rows = table_rows(text, "DGEMM 1024^3, 2 threads")
    g = lambda s: f"{2 * 1024**3 / s / 1e9:.1f}"
    assert rows["**blocked/avx2** (rooflab best)"][3] == f"{g(31e-3)} (rounds {g(40e-3)}–{g(31e-3)})"
    assert rows["OpenBLAS"][3] == f"{g(29e-3)} (rounds {g(21e-3)}–{g(20e-3)}, kept: a later re-measurement)"
    assert rows["OpenBLAS"][5] == f"{29 / 31:.2f}"  # the kept rows' median, as bench kept them
    assert rows["BLIS"][3] == g(40e-3)  # no rounds: as before
    assert "every case was timed in 3 rounds" in text
    plain = (FIXTURE / "bench.json").read_text()
    assert "rounds" not in plain  # the fixture itself has none: the line above is the change's


def test_interleaved_run_shows_each_cases_repetition_range_and_its_remeasured_rows(tmp_path):
    # `peer_table.sh` (interleaving on by default): peer_run.json "interleaved"; every cell adds
    # the range of its repetitions; a case whose kept rows are a re-measurement's
    # (rooflab.kept_retry > 0) says it was not timed among all the others. Ratios unchanged.
    def entry(e):
        if e["name"].startswith("gemm/blis/f64/1024x1024x1024/threads:2"):
            e["rooflab"]["kept_retry"] = 1
    text = render_edited(tmp_path, peer_run={"interleaved": True}, entry=entry)
    rows = table_rows(text, "DGEMM 1024^3, 2 threads")
    g = lambda ms: f"{2 * 1024**3 / (ms * 1e-3) / 1e9:.1f}"
    assert rows["**blocked/avx2** (rooflab best)"][3] == f"{g(31)} (reps {g(32)}–{g(30)})"
    assert rows["OpenBLAS"][3] == f"{g(29)} (reps {g(30)}–{g(28)})" and rows["OpenBLAS"][5] == f"{29 / 31:.2f}"
    assert rows["BLIS"][3] == f"{g(40)} (reps {g(41)}–{g(39)}, re-measured after the interleaved pass)"
    assert "- interleaved: every case's repetitions ran in random order" in text
    # the same run not interleaved (the fixture as it is): no ranges, no line
    plain = tmp_path / "plain"
    assert peers.main([str(FIXTURE), "--tables", str(plain)]) == 0
    ptext = (plain / "amd-zen3-avx2.md").read_text()
    assert "(reps " not in ptext and "- interleaved" not in ptext


def test_a_ratio_within_the_repetitions_noise_is_marked_not_significant(tmp_path):
    # Interleaved, 5 repetitions a side: OpenBLAS's overlap blocked's (U test p >= 0.05) and its
    # ratio says "n.s."; BLIS's are all slower (p = 0.008) and its ratio stands alone. With the
    # fixture's 3 repetitions no test is made (3 vs 3 cannot reach p < 0.05).
    reps = {"gemm/blocked/avx2/f64/1024x1024x1024/threads:2": [30.0, 31.0, 32.0, 31.5, 30.5],
            "gemm/openblas/f64/1024x1024x1024/threads:2": [29.5, 31.2, 32.5, 30.2, 30.8],
            "gemm/blis/f64/1024x1024x1024/threads:2": [39.0, 40.0, 41.0, 40.5, 39.5]}
    b = json.loads((FIXTURE / "bench.json").read_text())
    out = []
    for e in b["benchmarks"]:
        case = next((c for c in reps if e["run_name"].startswith(c + "/")), None)
        if case is None or e["run_type"] != "iteration":
            out.append(e)
        elif e["real_time"] == min(x["real_time"] for x in b["benchmarks"] if x["run_name"] == e["run_name"]
                                   and x["run_type"] == "iteration"):
            out += [{**e, "real_time": t, "cpu_time": t} for t in reps[case]]  # one entry becomes five
    text = render_edited(tmp_path, peer_run={"interleaved": True}, bench_top={"benchmarks": out})
    rows = table_rows(text, "DGEMM 1024^3, 2 threads")
    ob, blis = rows["OpenBLAS"][5], rows["BLIS"][5]
    assert ob.startswith(f"{30.8 / 31.0:.2f} (n.s., p ") and float(ob.split("p ")[1].rstrip(")")) >= 0.05, ob
    assert blis == f"{40.0 / 31.0:.2f}", blis
    assert "do not differ by a two-sided Mann-Whitney U test" in text
    plain = table_rows(render_edited(tmp_path / "3reps", peer_run={"interleaved": True}), "DGEMM 1024^3, 2 threads")
    assert "n.s." not in plain["OpenBLAS"][5] and "n.s." not in plain["BLIS"][5]


def test_each_kernels_share_of_the_runs_own_peak_beside_machine_jsons(tmp_path):
    # peer_table.sh times characterize's FMA loop among the kernels (the peak family): here at
    # 80 GFLOP/s (median of 9.5, 10, 10.5 ms for 0.8 GFLOP) where machine.json's avx2 fma_f64
    # ceiling at 2 threads is 100 (a host 20% slower during the run than at characterize's time).
    # blocked DGEMM 1024^3 (median 31 ms): 69% of machine.json's, 87% of the run's peak.
    peak = "peak/fma/avx2/f64/1048576/threads:2"
    b = json.loads((FIXTURE / "bench.json").read_text())
    rl = {"family": "peak", "variant": "fma", "isa": "avx2", "library": None, "dtype": "f64", "dims": [1048576],
          "params": {}, "threads": 2, "flops": 0.8e9, "compute_ceiling": "fma_f64", "disturbed": False}
    entries = [{"name": f"{peak}/repeats:3", "run_name": f"{peak}/repeats:3", "run_type": "iteration", "repetitions": 3,
                "real_time": t, "time_unit": "ms", "rooflab": rl} for t in (10.5, 9.5, 10.0)]
    cases = json.loads((FIXTURE / "peer_run.json").read_text())["cases"] + [peak]
    text = render_edited(tmp_path, peer_run={"cases": cases}, bench_top={"benchmarks": b["benchmarks"] + entries})
    gemm = 2 * 1024**3 / 31e-3 / 1e9
    best = table_rows(text, "DGEMM 1024^3, 2 threads")["**blocked/avx2** (rooflab best)"]
    assert best[4] == f"{gemm:.0f}% · run {100 * gemm / 80:.0f}%", best[4]
    # OpenBLAS (no ISA of its own) is set against the widest ISA's peak, as against its ceiling
    assert table_rows(text, "DGEMM 1024^3, 2 threads")["OpenBLAS"][4].endswith(f" · run {100 * 2 * 1024**3 / 29e-3 / 1e9 / 80:.0f}%")
    # no add+min peak in this run: Floyd-Warshall's rows keep machine.json's share only; no row for the peak itself
    assert table_rows(text, "FW f32 N=4096, 2 threads")["regblock/avx2 (sched:blocked/layout:bdl/bs:64)"][4] == "51%"
    assert "peak/" not in text.split("## GEMM")[1]
    assert "the run's peaks (GFLOP/s, median" in text and "avx2 fma_f64 at 2 threads 80 (80% of machine.json's)" in text
    # without peak cases the table is as before
    assert " · run " not in render_edited(tmp_path / "plain") and "the run's peaks" not in render_edited(tmp_path / "plain2")
