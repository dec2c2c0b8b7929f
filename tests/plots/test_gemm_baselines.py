"""Honest baselines in the GEMM summary, the claims and the report: a library whose bench.json
rows say code_path.representative false is labelled "baseline not representative (<reason>)"
wherever rooflab is compared with it, and a target against it is not evaluated. On
tests/fixtures/gemm_small with a bench.json written here (the fixture has none): one row per
model.json gemm row, the vendor ones with a code path."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, load, save

from rooflab import claims
from rooflab.data import gemm as gd
from rooflab.report import sections

GEMM_SMALL = REPO / "tests" / "fixtures" / "gemm_small"
REASON = ("OpenBLAS 0.3.21 runs its core Prescott (pre-AVX2) kernels; this CPU has AVX-512 and its best here is "
          "core SkylakeX (AVX-512); OPENBLAS_CORETYPE=Prescott set by the user (respected)")
GOOD = {"library": "BLIS 0.9.0", "ran": "config skx (optimzd micro-kernel)", "best": "config skx",
        "representative": True, "selected_by": "BLIS's own detection", "reason": None}
BAD = {"library": "OpenBLAS 0.3.21", "ran": "core Prescott", "best": "core SkylakeX", "representative": False,
       "selected_by": "OPENBLAS_CORETYPE=Prescott set by the user (respected)", "reason": REASON}


def write_bench(run: Path, paths: dict[str, dict]) -> None:
    rows = []
    for r in load(run, "model.json")["rows"]:
        rl = {k: r[k] for k in ("family", "variant", "isa", "dtype", "dims", "params", "threads", "flops", "bytes")}
        if r["variant"] in paths:
            rl["code_path"] = paths[r["variant"]]
        rows.append({"name": r["name"], "run_type": "iteration", "repetitions": 1, "threads": r["threads"],
                     "iterations": 1, "real_time": r["median_s"] * 1e3, "cpu_time": r["median_s"] * 1e3,
                     "time_unit": "ms", "rooflab": rl})
    save(run, "bench.json", {"schema": "rooflab.bench/1", "profile": "paper", "filter": "^gemm/",
                             "context": {"date": "2026-11-24T00:00:00+00:00", "host_name": "fixture",
                                         "executable": "rooflab"}, "benchmarks": rows})


@pytest.fixture
def run(tmp_path) -> Path:
    dst = tmp_path / "gemm_small"
    shutil.copytree(GEMM_SMALL, dst)
    return dst


def impl(doc, dtype, name):
    g = max((g for g in doc["groups"] if g["dtype"] == dtype), key=lambda g: g["threads"])
    return g, next(v for v in g["implementations"] if v["impl"] == name)


BLIS_REASON = ("BLIS 0.9.0 runs its config generic (refrnce micro-kernel) (pre-AVX2) kernels; this CPU has AVX-512 "
               "and its best here is config skx (AVX-512); BLIS_ARCH_TYPE=25 set by the user (respected)")


def test_non_representative_baseline_is_labelled_everywhere(run):
    bad_blis = dict(BAD, library="BLIS 0.9.0", ran="config generic (refrnce micro-kernel)", best="config skx",
                    selected_by="BLIS_ARCH_TYPE=25 set by the user (respected)", reason=BLIS_REASON)
    write_bench(run, {"openblas": BAD, "blis": bad_blis, "onednn": dict(GOOD, library="oneDNN 2.6.3")})
    doc = gd.summary(run)
    label = f"baseline not representative ({REASON})"
    assert doc["code_paths"]["openblas"] == BAD
    g, ob = impl(doc, "f64", "openblas")
    assert ob["not_representative"] == label and ob["code_path"] == BAD
    assert impl(doc, "f32", "onednn")[1]["not_representative"] is None
    assert all(v["not_representative"] is None for v in g["implementations"] if not v["baseline"])
    text = gd.format_summary(doc)
    assert f"* openblas: {label}" in text and "openblas *" in text
    # Every f64 baseline is flagged: the best one is, and the target against it is not evaluated,
    # with the label as the reason (the ratio stays in the document).
    assert g["best_baseline_not_representative"].startswith("baseline not representative (")
    t = next(t for t in doc["targets"] if t["id"] == "f64_whm_vs_best_baseline")
    assert t["value"] is not None and t["reached"] is None
    assert t["reason"] == g["best_baseline_not_representative"] and t["reason"] in text
    # The report's GEMM page lists what each library ran, the flagged ones with their reason.
    html = sections.gemm_baselines_section(run, run)
    assert "core Prescott" in html and html.count("<b>no</b>") == 2 and "oneDNN 2.6.3" in html


def test_flagged_onednn_makes_the_claim_not_measured_with_the_label(run):
    bad = dict(BAD, library="oneDNN 2.6.3", ran="ISA avx2", best="ISA avx512_core or above",
               reason="oneDNN 2.6.3 runs its ISA avx2 (AVX2) kernels; ONEDNN_MAX_CPU_ISA=AVX2 set by the user")
    write_bench(run, {"onednn": bad})
    doc = gd.summary(run)
    t = next(t for t in doc["targets"] if t["id"] == "f32_whm_vs_onednn")
    if t["value"] is None:
        pytest.skip(f"the fixture has no sfc_ca / onednn f32 pair: {t.get('reason')}")
    assert t["reached"] is None and t["baseline_not_representative"].startswith("baseline not representative (")
    out = claims.sfc_whm_vs_onednn(claims.Ctx(run))
    assert out.verdict == claims.NOT_MEASURED
    assert "baseline not representative (oneDNN 2.6.3 runs its ISA avx2" in out.measured


def test_representative_baselines_change_nothing(run):
    write_bench(run, {"openblas": dict(BAD, ran="core SkylakeX", representative=True, reason=None,
                                       selected_by="OpenBLAS's own detection"), "blis": GOOD})
    doc = gd.summary(run)
    for g in doc["groups"]:
        assert g["best_baseline_not_representative"] is None
        assert all(v["not_representative"] is None for v in g["implementations"])
    assert "not representative" not in gd.format_summary(doc)
    assert all(t["reached"] is not None or t.get("reason") for t in doc["targets"])
    assert not any("not representative" in (t.get("reason") or "") for t in doc["targets"])


def test_no_bench_json_means_no_code_paths(run):
    doc = gd.summary(run)  # the fixture as it is: model.json only
    assert doc["code_paths"] == {}
    assert "no bench.json" in sections.gemm_baselines_section(run, run)


def test_own_kernel_on_a_vendor_library_is_no_baseline(run):
    # sfc_ca_libxsmm (rooflab's SFC-CA on LIBXSMM's JIT) carries a code path too, but is no
    # baseline: flagged as a vendor back end, never "baseline not representative".
    why = "LIBXSMM 1.17 JIT target avx2; this CPU's best is avx512_core; LIBXSMM_TARGET=hsw set by the user"
    xsmm = dict(BAD, library="LIBXSMM 1.17", ran="JIT target avx2", best="JIT target avx512_core",
                selected_by="LIBXSMM_TARGET=hsw set by the user (respected)", reason=why)
    write_bench(run, {"openblas": BAD, "sfc_ca_libxsmm": xsmm})
    doc = gd.summary(run)
    label = f"vendor back end not representative ({why})"
    for dtype in ("f32", "f64"):
        g, v = impl(doc, dtype, "sfc_ca_libxsmm")
        assert not v["baseline"] and v["not_representative"] == label
    assert impl(doc, "f64", "openblas")[1]["not_representative"] == f"baseline not representative ({REASON})"
    assert f"* sfc_ca_libxsmm: {label}" in gd.format_summary(doc)
    html = sections.gemm_baselines_section(run, run)
    assert "<b>no</b>: vendor back end not representative (LIBXSMM 1.17" in html
    assert html.count("<b>no</b>: baseline not representative") == 1  # openblas only
