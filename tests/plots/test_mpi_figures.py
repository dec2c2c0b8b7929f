"""MPI figures and report section on tests/fixtures/mpi_run (a real `scripts/mpi_sweep.sh --quick`
run on a 2-CPU machine, P = 1..4, R = 1, 2; "timing" texts dropped): the series, bars and ratios
they draw are the sweep's numbers, oversubscribed runs are marked, bad input is a clear error."""
from __future__ import annotations

import json

import pytest
from conftest import REPO, assert_png

import mpi_breakdown
import mpi_data
import mpi_model
import mpi_report
import mpi_scaling
from rooflab_data import RooflabDataError

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


def test_model_ratios_and_oversubscription(tmp_path, sweep):
    res = mpi_model.plot(MPI_RUN, tmp_path / "m.png")
    assert_png(res.out_path)
    c = res.comm
    n_comm = sum(1 for r in sweep["runs"] if r["comm_only"] and (r.get("predicted_comm_s") or 0) > 0)
    assert len(c) == n_comm > 0
    assert (c.ratio == c.comm_time_per_iter_s / c.predicted_comm_s).all()
    assert (c.oversubscribed == (c.ranks > sweep["cpus"])).all()
    assert c.comm_only.all()


def test_report_section_lists_model_and_figures(tmp_path):
    html = mpi_report.section(MPI_RUN, tmp_path)
    for f, _, _ in mpi_report.FIGURES:
        assert f'src="{f}"' in html and (tmp_path / f).exists()
    assert "alpha (latency)" in html and "measured / predicted" in html
    assert "oversubscription" in html


def test_missing_or_wrong_file_is_a_clear_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RooflabDataError, match="mpi_sweep.sh"):
        mpi_scaling.plot(run, tmp_path / "x.png")
    assert "mpi_sweep.sh" in mpi_report.section(run, tmp_path)
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
