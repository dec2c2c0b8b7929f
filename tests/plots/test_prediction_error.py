"""The prediction error distribution figure (figures/prediction_error.py) on the fixture run:
measured / predicted per row for the ECM prediction and the roofline bound, and the shares within
10% / 20% per family and overall, worked out by hand from the fixture's rows."""
from __future__ import annotations

import pytest
from conftest import assert_png, load, save

from rooflab.figures import prediction_error


def share(res, prediction, family, key):
    s = res.shares
    return s[(s.prediction == prediction) & (s.family == family)].iloc[0][key]


def test_roofline_only_run_draws_the_roofline_and_says_ecm_is_missing(run_small, tmp_path):
    res = prediction_error.plot(run_small, tmp_path / "pe.png")
    assert_png(res.out_path)
    # The fixture has 7 ok rows (measured / roofline: 2.44, 2.63, 1.41, 1.56, 1.205, 1.087 for
    # sinkhorn, 1.75 for floyd_warshall) and no ECM.
    assert (res.ratios.prediction == "ecm_s").sum() == 0
    roof = res.ratios[res.ratios.prediction == "predicted_s"]
    assert len(roof) == 7
    assert share(res, "predicted_s", "sinkhorn", "within_10") == pytest.approx(1 / 6)
    assert share(res, "predicted_s", "sinkhorn", "within_20") == pytest.approx(1 / 6)
    assert share(res, "predicted_s", "floyd_warshall", "within_20") == 0
    assert share(res, "predicted_s", "all", "cases") == 7
    assert any("skipped" in o for o in res.omitted) and any("failed" in o for o in res.omitted)


def test_ecm_shares_per_family_and_overall(run_copy, tmp_path):
    doc = load(run_copy, "model.json")
    q = iter([1.0, 1.05, 1.15, 0.85, 1.3, 0.5, 1.1])  # measured / ECM per ok row, in file order
    for r in doc["rows"]:
        if r["status"] == "ok":
            r["ecm"] = {"time_s": r["median_s"] / next(q), "fallback": False}
    save(run_copy, "model.json", doc)
    res = prediction_error.plot(run_copy, tmp_path / "pe.png")
    assert_png(res.out_path)
    ecm = res.ratios[res.ratios.prediction == "ecm_s"]
    assert sorted(ecm.ratio.round(6)) == [0.5, 0.85, 1.0, 1.05, 1.1, 1.15, 1.3]
    # sinkhorn: 1.0, 1.05 within 10%; + 1.15, 0.85 within 20%; floyd_warshall: 1.1.
    assert share(res, "ecm_s", "sinkhorn", "within_10") == pytest.approx(2 / 6)
    assert share(res, "ecm_s", "sinkhorn", "within_20") == pytest.approx(4 / 6)
    assert share(res, "ecm_s", "floyd_warshall", "within_10") == 1
    assert share(res, "ecm_s", "all", "within_10") == pytest.approx(3 / 7)
    assert share(res, "ecm_s", "all", "within_20") == pytest.approx(5 / 7)


def test_a_malformed_ecm_is_an_error_naming_the_row(run_copy, tmp_path):
    from rooflab.data.run import RooflabDataError
    doc = load(run_copy, "model.json")
    doc["rows"][0]["ecm"] = {"fallback": False}
    save(run_copy, "model.json", doc)
    with pytest.raises(RooflabDataError, match=r"rows\[0\]\.ecm"):
        prediction_error.plot(run_copy, tmp_path / "pe.png")
    assert not (tmp_path / "pe.png").exists()
