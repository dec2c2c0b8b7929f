"""rooflab.data.registry: the variant facts figures use (variant order, own kernel vs library
baseline, ISAs) come from DIR/list.json or `rooflab list --json`, never from a list in plots/;
an absent or malformed families block is one clear error."""
from __future__ import annotations

import json
import os
import shutil
import stat

import pytest
from conftest import REPO

from rooflab.data import gemm as gd
from rooflab.data import registry as reg
from rooflab.data.jsonfile import MalformedInput, RooflabDataError
from rooflab.figures import sinkhorn_breakdown

GEMM_SMALL = REPO / "tests" / "fixtures" / "gemm_small"
RUN_FAMILIES = REPO / "tests" / "fixtures" / "run_families"


def doc_of(run) -> dict:
    return json.loads((run / reg.REGISTRY_FILE).read_text())


@pytest.fixture
def no_binary(monkeypatch):
    monkeypatch.setattr(reg, "rooflab_binary", lambda: None)


@pytest.fixture
def old_run(tmp_path):
    """A run directory written before list.json existed."""
    dst = tmp_path / "old"
    shutil.copytree(GEMM_SMALL, dst)
    (dst / reg.REGISTRY_FILE).unlink()
    return dst


def test_the_run_registry_is_the_list_json_of_the_run():
    r = reg.load_registry(GEMM_SMALL)
    d = doc_of(GEMM_SMALL)
    gemm = next(f for f in d["families"] if f["name"] == "gemm")
    assert r.isa_order == tuple(d["isa_order"])
    assert r.variant_order("gemm") == [v["name"] for v in gemm["variants"]]
    assert r.baselines("gemm") == tuple(v["name"] for v in gemm["variants"] if v["kind"] == "baseline")
    assert r.baselines("gemm") and "sfc_ca" not in r.baselines("gemm")
    assert all(v.library for v in r.variants("gemm") if v.kind == "baseline")


def test_gemm_summary_takes_its_baselines_from_the_registry(tmp_path):
    run = tmp_path / "g"
    shutil.copytree(GEMM_SMALL, run)
    doc = doc_of(run)
    gemm = next(f for f in doc["families"] if f["name"] == "gemm")
    for v in gemm["variants"]:  # the registry says blis is an own kernel: the summary follows it
        if v["name"] == "blis":
            v["kind"], v["library"] = "own", None
    (run / reg.REGISTRY_FILE).write_text(json.dumps(doc))
    s = gd.summary(run)
    assert "blis" not in s["baselines"] and "openblas" in s["baselines"]
    impls = [v for g in s["groups"] for v in g["implementations"]]
    assert any(v["impl"] == "blis" and v["baseline"] is False for v in impls)
    assert any(v["impl"] == "openblas" and v["baseline"] is True for v in impls)


def test_breakdown_order_follows_the_table(tmp_path):
    run = tmp_path / "f"
    shutil.copytree(RUN_FAMILIES, run)
    res = sinkhorn_breakdown.plot(run, tmp_path / "a.png")
    order = reg.load_registry(run).variant_order("sinkhorn")
    for _, g in res.bars.groupby("group"):
        idx = [order.index(v) for v in g.variant]
        assert idx == sorted(idx)
    # reversed table order in the registry: the bars follow it
    doc = doc_of(run)
    for f in doc["families"]:
        if f["name"] == "sinkhorn":
            f["variants"].reverse()
    (run / reg.REGISTRY_FILE).write_text(json.dumps(doc))
    res2 = sinkhorn_breakdown.plot(run, tmp_path / "b.png")
    order2 = reg.load_registry(run).variant_order("sinkhorn")
    assert order2 == order[::-1]
    for _, g in res2.bars.groupby("group"):
        idx = [order2.index(v) for v in g.variant]
        assert idx == sorted(idx) and len(set(g.variant)) > 1


def test_absent_registry_without_a_binary_is_a_clear_error(old_run, no_binary):
    with pytest.raises(RooflabDataError) as e:
        gd.summary(old_run)
    msg = str(e.value)
    assert "list.json not found" in msg and "ROOFLAB_BIN" in msg and "rooflab list --json" in msg


@pytest.mark.parametrize("edit,says", [
    (lambda d: d.pop("families"), 'no "families"'),
    (lambda d: d.pop("isa_order"), 'no "families" / "isa_order"'),
    (lambda d: d.update(families=None), "$.families: expected array, got null"),
    (lambda d: d.update(families={"gemm": []}), "$.families: expected array"),
    (lambda d: d["families"][0]["variants"][0].update(kind="vendor"), "kind: expected one of own, baseline"),
    (lambda d: d["families"][0]["variants"][0].update(kind="baseline", library=None), "needs a library"),
    (lambda d: d["families"][0]["variants"][0].update(library="mkl"), "has no library"),
    (lambda d: d["families"][0]["variants"][0].update(isas=["sse9"]), "'sse9' is not in $.isa_order"),
    (lambda d: d["families"][0]["variants"][0].pop("name"), 'missing key "name"'),
    (lambda d: d.update(schema="rooflab.list/9"), 'unsupported schema version "rooflab.list/9"'),
])
def test_malformed_families_block_is_a_clear_error(old_run, edit, says):
    doc = doc_of(GEMM_SMALL)
    if doc["families"][0]["variants"][0]["kind"] != "own":
        pytest.skip("the fixture's first variant is expected to be an own kernel")
    edit(doc)
    (old_run / reg.REGISTRY_FILE).write_text(json.dumps(doc))
    with pytest.raises(MalformedInput) as e:
        reg.load_registry(old_run)
    assert says in str(e.value) and str(old_run / reg.REGISTRY_FILE) in str(e.value), str(e.value)


def test_not_json_registry_is_a_clear_error(old_run):
    (old_run / reg.REGISTRY_FILE).write_text('{"schema": "rooflab.list/1", "families": [')
    with pytest.raises(MalformedInput, match="list.json"):
        reg.load_registry(old_run)


def fake_binary(tmp_path, body: str) -> str:
    p = tmp_path / "fake_rooflab"
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def test_a_failing_binary_is_a_clear_error(old_run, tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLAB_BIN", fake_binary(tmp_path, "echo 'rooflab: broken' >&2; exit 1"))
    with pytest.raises(RooflabDataError, match=r"list --json --profile smoke failed \(exit 1\): rooflab: broken"):
        reg.load_registry(old_run)


def test_an_older_binary_without_the_block_is_a_clear_error(old_run, tmp_path, monkeypatch):
    old = json.dumps({"schema": "rooflab.list/1", "profile": "smoke", "filter": "", "cases": []})
    monkeypatch.setenv("ROOFLAB_BIN", fake_binary(tmp_path, f"echo '{old}'"))
    with pytest.raises(MalformedInput, match='no "families" / "isa_order" block.*rebuild rooflab'):
        reg.load_registry(old_run)


@pytest.mark.skipif(not os.environ.get("ROOFLAB_BIN"), reason="ROOFLAB_BIN (the rooflab binary) not set")
def test_an_old_run_draws_with_the_builds_registry(old_run, tmp_path):
    """No list.json in the run: the facts come from `rooflab list --json` of this build."""
    s = gd.summary(old_run)
    live = reg.load_registry(old_run)
    assert live.source.startswith("the output of ")
    assert s["baselines"] == list(live.baselines("gemm"))
    assert set(s["baselines"]) <= {"openblas", "blis", "onednn"}
    assert "sfc_ca" in live.variant_order("gemm") and live.isa_order
