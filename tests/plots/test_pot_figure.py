"""POT vs rooflab figure: speed-ups are POT's time over each variant's, in the same group;
a run without pot_compare.json (or with another schema) gives a clear error."""
from __future__ import annotations

import json

import pytest
from conftest import assert_png

from rooflab.figures import pot_compare
from rooflab.data.run import RooflabDataError


def test_speedups_are_pot_time_over_variant_time(run_families, tmp_path):
    res = pot_compare.plot(run_families, tmp_path / "pot.png")
    assert_png(res.out_path, min_bytes=10_000)
    r = res.rows.set_index(["N", "variant"])
    assert r.loc[(4096, "fused_uv"), "speedup_vs_pot"] == pytest.approx(0.0557 / 0.0116)
    assert r.loc[(4096, "mapuot"), "speedup_vs_pot"] == pytest.approx(0.0557 / 0.0231)
    assert r.loc[(1024, "fused_uv"), "speedup_vs_pot"] == pytest.approx(0.0030 / 0.0006)
    assert r.loc[(4096, "sinkhorn_knopp"), "speedup_vs_pot"] == pytest.approx(1.0)


def test_missing_or_wrong_file_is_a_clear_error(run_families, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RooflabDataError, match="pot_compare.py"):
        pot_compare.plot(run, tmp_path / "x.png")
    doc = json.loads((run_families / "pot_compare.json").read_text())
    doc["schema"] = "rooflab.pot_compare/9"
    (run / "pot_compare.json").write_text(json.dumps(doc))
    with pytest.raises(RooflabDataError, match="schema"):
        pot_compare.plot(run, tmp_path / "x.png")
