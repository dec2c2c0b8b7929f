"""MPI figures, model and report section on tests/fixtures/mpi_run (a real `scripts/mpi_sweep.sh
--quick` run on a 2-CPU machine, P = 1..4, R = 1, 2 plus one-node coffee, typical-kernel ring and
--wait yield runs; "timing" texts dropped, numbers rounded to 4 digits): the series, bars and
ratios they draw are the sweep's numbers, the model is the documented formula of the measured
constants, oversubscribed runs are marked, bad input is a clear error."""
from __future__ import annotations

import json
import math

import pytest
from conftest import REPO, assert_png

from rooflab.figures import mpi_breakdown
from rooflab.data import mpi as mpi_data
from rooflab.figures import mpi_model
from rooflab.report import sections as mpi_report
from rooflab.figures import mpi_scaling
from rooflab.data.run import RooflabDataError

MPI_RUN = REPO / "tests" / "fixtures" / "mpi_run"


@pytest.fixture
def sweep():
    return json.loads((MPI_RUN / "mpi_sweep.json").read_text())


def test_scaling_has_one_point_per_rank_count_and_design(tmp_path, sweep):
    res = mpi_scaling.plot(MPI_RUN, tmp_path / "s.png")
    assert_png(res.out_path)
    pmax = max(r["ranks"] for r in sweep["runs"])
    # mpich and ring ignore nodes: every P in every panel; salar/coffee only where R divides P.
    for R in (1, 2):
        assert list(res.series[(R, "mpich")].ranks) == list(range(1, pmax + 1))
        assert list(res.series[(R, "coffee")].ranks) == [P for P in range(1, pmax + 1) if P % R == 0]
    want = next(r for r in sweep["runs"] if r["design"] == "salar" and r["ranks"] == 4 and r["ranks_per_node"] == 2
                and not r["comm_only"])
    got = res.series[(2, "salar")].set_index("ranks").loc[4, "time_per_iter_s"]
    assert got == pytest.approx(want["time_per_iter_s"])


def test_breakdown_bars_are_the_coffee_ablations(tmp_path, sweep):
    res = mpi_breakdown.plot(MPI_RUN, tmp_path / "b.png")
    assert_png(res.out_path)
    b = res.bars
    assert set(zip(b.ranks, b.ranks_per_node)) == {(2, 2), (4, 2)}
    g = b[(b.ranks == 4) & (b.ranks_per_node == 2)]
    assert list(g.label) == mpi_breakdown.ORDER  # salar, then COFFEE with 0, 1, 1, 2 optimizations
    assert (g.compute_s + g.comm_s).to_numpy() == pytest.approx(g.time_per_iter_s.to_numpy())
    assert (g.compute_s >= 0).all() and (g.comm_s >= 0).all()
    raw = next(r for r in sweep["runs"] if r["design"] == "coffee" and r["ranks"] == 4 and r["ranks_per_node"] == 2
               and r["node_reduce"] == "mpi" and not r["overlap"])
    row = g[g.label == "coffee −balanced reduce −overlap"].iloc[0]
    assert row.comm_s == pytest.approx(min(raw["comm_time_per_iter_s"], raw["time_per_iter_s"]))
    assert bool(row.oversubscribed) == (4 > sweep["cpus"])


def test_model_table_is_the_formula_of_the_measured_constants(tmp_path, sweep):
    res = mpi_model.plot(MPI_RUN, tmp_path / "m.png")
    assert_png(res.out_path)
    t = res.table
    full = [r for r in sweep["runs"] if not r["comm_only"] and r["ranks"] >= 2]
    assert len(t) == len(full) > 0
    cpus, k = sweep["cpus"], sweep["model"]["constants"]  # stored by `rooflab model --mpi-sweep`
    assert k["spin_gap_s"] == sweep["timeslice"]["spin_gap_s"] > 0
    # Regimes: one core per rank up to the CPU count; beyond, by how the ranks wait.
    for r in t.itertuples():
        want = "unshared" if r.ranks <= cpus else ("shared-yield" if r.wait == "yield" else "shared-spin")
        assert r.regime == want
    assert {"unshared", "shared-spin", "shared-yield"} <= set(t.regime)
    # A shared, busy-polling run: alpha-beta time + rounds x (ranks per core - 1) x the measured turn;
    # compute: the P = 1 run's compute x the largest slice x ranks per core.
    run = next(r for r in sweep["runs"] if r["id"] == "ring_p3")
    row = t[t.id == "ring_p3"].iloc[0]
    share = math.ceil(3 / cpus)
    twin = next(r for r in sweep["runs"] if r["id"] == "ring_p3_comm")
    assert row.predicted_comm_s == pytest.approx(twin["predicted_comm_s"] + twin["allreduce_rounds"] * (share - 1)
                                                 * k["spin_gap_s"], rel=1e-3)
    assert row.measured_comm_s == pytest.approx(twin["comm_time_per_iter_s"])
    c1 = min(r["compute_time_per_iter_s"] for r in sweep["runs"] if r["ranks"] == 1 and not r["comm_only"]
             and r["kernel"] == "microkernel")
    M = run["dims"][0]
    assert row.predicted_compute_s == pytest.approx(c1 * math.ceil(M / 3) / M * share, rel=1e-3)
    assert row.measured_iter_s == pytest.approx(run["time_per_iter_s"])
    # Ratios are measured / predicted (that the stored table is what the model computes from the
    # runs: tests/core/test_mpi_model.cpp).
    ok = t[t.comm_ratio.notna()]
    assert list(ok.comm_ratio) == pytest.approx(list(ok.measured_comm_s / ok.predicted_comm_s), rel=1e-3)
    # Ablations have no --comm-only twin: no comm ratio, but an iteration prediction.
    abl = t[t.id == "coffee_p4_r2_nooverlap"].iloc[0]
    assert math.isnan(abl.comm_ratio) and abl.predicted_iter_s > 0


def test_claim_rows_pair_runs_of_the_same_p(sweep):
    c = sweep["claims"]
    assert c["source"] == "runs"  # the fixture has no interleaved claim runs (--claim-reps 0)
    rows = c["coffee_cpu_vs_ring_one_node"]
    assert [r["ranks"] for r in rows] == list(range(1, 5))
    for r in rows:
        typ = next(x for x in sweep["runs"] if x["id"] == r["ids"][0][0])
        opt = next(x for x in sweep["runs"] if x["id"] == r["ids"][0][1])
        assert (typ["design"], typ["kernel"], opt["design"], opt["kernel"]) == ("ring", "typical", "ring", "microkernel")
        assert typ["ranks"] == opt["ranks"] == r["ranks"] and typ["dims"] == opt["dims"]
        assert r["speedup"] == pytest.approx(typ["time_per_iter_s"] / opt["time_per_iter_s"], rel=1e-3)
    mpi = c["coffee_mpi_vs_ring_one_node"]
    assert [r["ranks"] for r in mpi] == [2, 3, 4]
    for r in mpi:
        cof = next(x for x in sweep["runs"] if x["id"] == r["ids"][0][1])
        assert cof["ranks_per_node"] == cof["ranks"] and cof["nodes"] == 1 and cof["wait"] == "spin"


def test_report_section_lists_model_and_figures(tmp_path):
    html = mpi_report.mpi_section(MPI_RUN, tmp_path)
    for f, _, _ in mpi_report.FIGURES:
        assert f'src="{f}"' in html and (tmp_path / f).exists()
    assert "alpha (latency)" in html and "measured / predicted" in html
    assert "oversubscription" in html


def test_missing_or_wrong_file_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RooflabDataError, match="mpi_sweep.sh"):
        mpi_scaling.plot(run, tmp_path / "x.png")
    assert "mpi_sweep.sh" in mpi_report.mpi_section(run, tmp_path)
    doc = json.loads((MPI_RUN / "mpi_sweep.json").read_text())
    doc["schema"] = "rooflab.mpi_sweep/9"
    (run / "mpi_sweep.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="schema"):
        mpi_breakdown.plot(run, tmp_path / "x.png")
    doc["schema"] = mpi_data.SCHEMA
    doc["runs"] = [{"design": "mpich"}]
    (run / "mpi_sweep.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="runs need the keys"):
        mpi_model.plot(run, tmp_path / "x.png")


def test_no_ablation_runs_draw_a_note(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    doc = json.loads((MPI_RUN / "mpi_sweep.json").read_text())
    doc["runs"] = [r for r in doc["runs"] if r["design"] != "coffee" or (r["overlap"] and r["node_reduce"] == "balanced")]
    (run / "mpi_sweep.json").write_text(json.dumps(doc))
    res = mpi_breakdown.plot(run, tmp_path / "b.png")
    assert res.bars.empty and res.out_path.exists()


def test_without_a_stored_model_table_nothing_is_recomputed(tmp_path):
    """plots/ draws the model scripts/mpi_sweep.sh stored; a file without it says how to store it."""
    run = tmp_path / "run"
    run.mkdir()
    doc = json.loads((MPI_RUN / "mpi_sweep.json").read_text())
    del doc["model_table"]
    (run / "mpi_sweep.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="no model_table.*--collect-only"):
        mpi_model.plot(run, tmp_path / "m.png")
    html = mpi_report.mpi_section(run, tmp_path)
    assert "--collect-only" in html and 'src="mpi_scaling.png"' in html  # the other figures still drawn
    assert "Predicted vs measured" not in html


# ----------------------------------------------------------------- emulated hosts and SMPI

def witness_run(tmp_path):
    """tests/fixtures/witness/witness.json (a real scripts/witness.py run, links dropped) and the
    hand-written 64-node simulation fixture, as a run directory."""
    import shutil
    fx = REPO / "tests" / "fixtures" / "witness"
    shutil.copy(fx / "witness.json", tmp_path)
    sim = tmp_path / mpi_data.SMPI_SWEEP_FILE
    sim.parent.mkdir(parents=True)
    shutil.copy(fx / "smpi_sweep-leaders-allreduce.json", sim)
    return json.loads((fx / "witness.json").read_text()), json.loads(sim.read_text())


def test_witness_figure_puts_real_and_simulated_side_by_side(tmp_path):
    from rooflab.figures import mpi_witness
    doc, sim = witness_run(tmp_path)
    res = mpi_witness.plot(tmp_path, tmp_path / "w.png")
    assert_png(tmp_path / "w.png")
    panels = {k[0] for k in res.series}
    assert panels == {"emulated hosts, 1 rank(s) per host", "emulated hosts, 2 rank(s) per host",
                      "simulated tianhe1a-distributed, 23040x23040"}
    r = next(x for x in doc["rows"] if x["cell"] == "3x1/coffee")
    assert (3, r["real"]["time_s"]) in res.series[("emulated hosts, 1 rank(s) per host", "coffee", "real")]
    assert (3, r["smpi"]["time_s"]) in res.series[("emulated hosts, 1 rank(s) per host", "coffee", "SMPI")]
    ring = res.series[("simulated tianhe1a-distributed, 23040x23040", "ring", "SMPI")]
    assert [p for p, _ in ring] == [288, 576]
    assert mpi_witness.efficiency([(2, 1.0), (4, 1.0), (8, 0.25)]) == [(2, 1.0), (4, 0.5), (8, 1.0)]


def test_report_shows_the_witness_summary_and_says_what_is_missing(tmp_path):
    doc, _ = witness_run(tmp_path)
    html = mpi_report.mpi_section(tmp_path, tmp_path)
    s = doc["summary"]["smpi_vs_real"]
    assert f"<td>smpi vs real</td><td class=\"num\">{s['cells']}</td><td class=\"num\">{s['median_abs'] * 100:.0f}%" \
        in html
    assert "not in the errors above" in html and (tmp_path / "mpi_witness.png").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "scripts/witness.py" in mpi_report.mpi_section(empty, empty)
