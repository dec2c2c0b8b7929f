"""Measurements that stayed disturbed (`rooflab bench` marks them, `rooflab model` carries the
mark): the claims never use such a row as a good number and say so, the family figures leave it
out and list it under "not plotted", attained-vs-predicted draws it marked. Fixture: a copy of
tests/fixtures/run_small with marks added to its model.json."""
from __future__ import annotations

import shutil

import pytest
from conftest import REPO, load, save

from rooflab import claims
from rooflab.data import gemm as gd
from rooflab.data.run import load_run
from rooflab.figures import attained_vs_predicted, roofline
from rooflab.figures import common as fc

MAPUOT = "sinkhorn/mapuot/avx2/f64/4096x4096/threads:1"
C2R2 = "sinkhorn/c2r/f64/1024x1024/part:col/threads:2"


def mark(run, names, reason="load: 3 of 3 samples ran beside other tasks"):
    doc = load(run, "model.json")
    for r in doc["rows"]:
        if r["name"] in names:
            r["disturbed"], r["disturbed_reason"] = True, reason
    save(run, "model.json", doc)


def test_mark_read_and_absent_means_undisturbed(run_copy):
    mark(run_copy, {MAPUOT})
    m = load_run(run_copy).model_df.set_index("name")
    assert bool(m.loc[MAPUOT, "disturbed"]) and m.loc[MAPUOT, "disturbed_reason"].startswith("load:")
    assert not m.drop(index=MAPUOT).disturbed.any()  # rows without the key: undisturbed
    assert (m.drop(index=MAPUOT).disturbed_reason == "").all()


def test_claims_skip_disturbed_rows_and_say_so(run_copy):
    before = {r["id"]: r for r in claims.evaluate(run_copy, lenient=True)}
    used = {r["id"] for r in before.values() if MAPUOT in r["benchmarks"]}
    assert used, "the fixture's claims use the row: the test would prove nothing"
    mark(run_copy, {MAPUOT})
    after = {r["id"]: r for r in claims.evaluate(run_copy, lenient=True)}
    for cid in used:
        r = after[cid]
        assert MAPUOT not in r["benchmarks"], r           # never the measured number's source
        assert MAPUOT in r["disturbed_not_used"], r
        assert "disturbed measurement" in r["note"], r
    ctx = claims.Ctx(run_copy, lenient=True)
    assert ctx.rows(r"^sinkhorn/mapuot/").name.tolist() == ["sinkhorn/mapuot/avx2/f64/1024x1024/threads:1"]
    assert ctx.skipped == [MAPUOT]
    # An unmarked run reports nothing skipped.
    assert all(r["disturbed_not_used"] == [] for r in before.values())


def test_family_figures_leave_disturbed_rows_out_and_list_them(run_copy):
    mark(run_copy, {C2R2}, reason="outlier: a sample 3x the median")
    ok, omitted = fc.family_rows(load_run(run_copy).model_df, "sinkhorn")
    assert C2R2 not in ok.name.tolist()
    assert any(o.startswith(C2R2) and "disturbed measurement (outlier" in o for o in omitted), omitted


def test_attained_vs_predicted_draws_disturbed_rows_marked(run_copy, tmp_path):
    mark(run_copy, {MAPUOT})
    res = attained_vs_predicted.plot(run_copy, tmp_path / "avp.png")
    pts = res.points.set_index("name")
    if MAPUOT not in pts.index:
        pytest.skip("the fixture row has no prediction")
    assert bool(pts.loc[MAPUOT, "disturbed"])
    assert not pts.drop(index=MAPUOT).disturbed.any()


def test_report_results_table_marks_disturbed_rows(run_copy):
    from rooflab.report import tables
    mark(run_copy, {C2R2})
    rows = {r[0]: r for r in tables.results_rows(load_run(run_copy).model_df)}
    assert rows[C2R2][1] == "ok (disturbed)" and "disturbed: load:" in rows[C2R2][-1]
    assert rows[MAPUOT][1] == "ok" and "disturbed" not in rows[MAPUOT][-1]


def test_one_not_used_line_for_a_disturbed_row_everywhere(run_copy, tmp_path):
    # The family figures, the GEMM points and the roofline list a disturbed row with one line
    # (data.run.family_rows); a row marked without a reason gets no empty parentheses.
    mark(run_copy, {C2R2}, reason="")
    assert f"{C2R2}: disturbed measurement" in roofline.plot(run_copy, tmp_path / "roof.png").omitted
    assert f"{C2R2}: disturbed measurement" in fc.family_rows(load_run(run_copy).model_df, "sinkhorn")[1]
    gemm = tmp_path / "gemm_small"
    shutil.copytree(REPO / "tests" / "fixtures" / "gemm_small", gemm)
    g = next(r["name"] for r in load(gemm, "model.json")["rows"] if r["status"] == "ok" and r["family"] == "gemm")
    mark(gemm, {g}, reason="")
    pts, omitted = gd.gemm_points(load_run(gemm).model_df)
    assert g not in pts.name.tolist() and f"{g}: disturbed measurement" in omitted
