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
from rooflab import mpi_predict
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
    cpus, k = sweep["cpus"], mpi_predict.constants(sweep)
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
    # Ratios are measured / predicted, and the stored table is what mpi_predict computes.
    ok = t[t.comm_ratio.notna()]
    assert list(ok.comm_ratio) == pytest.approx(list(ok.measured_comm_s / ok.predicted_comm_s), rel=1e-3)
    stored = {r["id"]: r for r in sweep["model_table"]}
    for r in mpi_predict.table(sweep):
        assert r["predicted_iter_s"] == pytest.approx(stored[r["id"]]["predicted_iter_s"], rel=1e-3)
    # Ablations have no --comm-only twin: no comm ratio, but an iteration prediction.
    abl = t[t.id == "coffee_p4_r2_nooverlap"].iloc[0]
    assert math.isnan(abl.comm_ratio) and abl.predicted_iter_s > 0


def test_predict_terms_on_a_synthetic_sweep():
    doc = {"cpus": 2, "pingpong": {"alpha_s": 1e-6, "beta_bytes_per_s": 1e9, "gamma_s_per_byte": 0},
           "timeslice": {"spin_gap_s": 4e-3, "yield_round_s": 5e-6},
           "runs": [{"id": "one", "design": "mpich", "ranks": 1, "ranks_per_node": 1, "comm_only": False,
                     "dims": [100, 64], "dtype": "f64", "kernel": "microkernel", "compute_time_per_iter_s": 0.010,
                     "time_per_iter_s": 0.010, "predicted_comm_s": 0.0, "allreduce_rounds": 0}]}
    base = {"ranks_per_node": 8, "chunks": 4, "dims": [100, 64], "dtype": "f64", "kernel": "microkernel",
            "predicted_comm_s": 1e-4, "allreduce_rounds": 10, "time_per_iter_s": 1.0, "comm_only": False}
    k = mpi_predict.constants(doc)
    spin = mpi_predict.predict(base | {"design": "ring", "ranks": 8, "wait": "spin"}, k)
    assert spin["regime"] == "shared-spin" and spin["ranks_per_core"] == 4
    assert spin["predicted_comm_s"] == pytest.approx(1e-4 + 10 * 3 * 4e-3)
    assert spin["predicted_compute_s"] == pytest.approx(0.010 * 13 / 100 * 4)  # ceil(100 / 8) rows
    yld = mpi_predict.predict(base | {"design": "ring", "ranks": 8, "wait": "yield"}, k)
    assert yld["predicted_comm_s"] == pytest.approx(1e-4 + 10 * 3 * 5e-6)
    # Two ranks on two CPUs: alpha-beta only; coffee's overlap hides chunks 2..C under the column scale.
    cof = mpi_predict.predict(base | {"design": "coffee", "ranks": 2, "overlap": True}, k)
    assert cof["regime"] == "unshared" and cof["sharing_comm_s"] == 0
    assert cof["hidden_by_overlap_s"] == pytest.approx(min(1e-4, 0.005 / 3) * 3 / 4)
    assert cof["predicted_iter_s"] == pytest.approx(0.005 + 1e-4 - cof["hidden_by_overlap_s"])
    # Without the time-slice calibration a shared run has no prediction (never a made-up one).
    del doc["timeslice"]
    assert mpi_predict.predict(base | {"design": "ring", "ranks": 8}, mpi_predict.constants(doc))["predicted_comm_s"] is None


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
    again = mpi_predict.claims(sweep)["coffee_mpi_vs_ring_one_node"]
    assert [x["speedup"] for x in again] == pytest.approx([x["speedup"] for x in mpi], rel=1e-3)


def test_claims_prefer_the_interleaved_repetitions():
    def run(what, P, rep, t):
        kernel = "typical" if what == "ringtypical" else "microkernel"
        return {"id": f"claim_{what}_p{P}_rep{rep}", "design": "coffee" if what == "coffee" else "ring", "ranks": P,
                "ranks_per_node": P, "kernel": kernel, "dims": [64, 64], "dtype": "f64", "oversubscribed": False,
                "chunks": 4, "time_per_iter_s": t, "comm_only": False}
    # Per repetition: typical, ring, coffee; the machine is 2x slower in repetition 2.
    times = {1: (10.0, 2.0, 2.5), 2: (20.0, 4.0, 5.0), 3: (12.0, 2.0, 2.0)}
    claim_runs = [run(w, 2, k, t) for k, ts in times.items() for w, t in zip(("ringtypical", "ring", "coffee"), ts)]
    # A sweep run that disagrees must not be used when claim runs exist.
    doc = {"runs": [run("ring", 2, 9, 100.0) | {"id": "ring_p2"}], "claim_runs": claim_runs}
    c = mpi_predict.claims(doc)
    assert c["source"] == "claim_runs"
    cpu, = c["coffee_cpu_vs_ring_one_node"]
    assert cpu["repetitions"] == 3 and cpu["speedup"] == pytest.approx(5.0)  # ratios 5, 5, 6
    assert cpu["speedup_range"] == pytest.approx([5.0, 6.0]) and cpu["ring_microkernel_s"] == pytest.approx(2.0)
    mpi, = c["coffee_mpi_vs_ring_one_node"]
    assert mpi["speedup"] == pytest.approx(0.8) and mpi["speedup_range"] == pytest.approx([0.8, 1.0])


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
