"""GEMM family data: per-shape points, the flop-weighted harmonic mean (WHM) per implementation,
the issue's performance targets, and the summary file DIR/gemm_summary.json.

    python3 plots/gemm_summary.py DIR [--out FILE]    # writes DIR/gemm_summary.json

Definitions (over the "ok" gemm rows of model.json):
  implementation  variant[/isa], e.g. "sfc_ca/avx2", "openblas"; summaries are per
                  (implementation, dtype, threads).
  shape           (M, N, K). When a run holds several configurations of one implementation for
                  one shape (other k_layers / kbf / ld / blocking parameters), the fastest one
                  stands for that shape, as the SFC-CA paper reports "the best performing
                  configuration"; `configs` counts them.
  WHM             over shapes i with flops_i = 2 M_i N_i K_i and attained gflops_i = flops_i /
                  median_s_i / 1e9:
                      WHM = sum_i flops_i / sum_i (flops_i / gflops_i)
                  i.e. total flops / total time (in GFLOP/s): the harmonic mean of the
                  GFLOP/s weighted by the flops of each problem, so every problem counts with
                  its work and one fast small shape cannot inflate it.
  roofline WHM    the same with the model's predicted time (model.json predicted_s: the
                  machine.json roofline, min(FMA peak, intensity x bandwidth of the level the
                  working set lives in)) in place of the measured time.
  tight roofline  per shape, the SFC-CA paper's per-BRGEMM bound (Fig. 6 / 9) from the sfc_ca
                  rows' predictions.tight in model.json (`rooflab model` with machine.json; the
                  analytic knob model of kernels/gemm/knobs_model.cpp: which A / B blocks come
                  from slow memory for each thread's range of the curve, C round trips, packing
                  and the k_layers reduction, at the knob of least predicted time); "tight WHM"
                  uses it as the time. None there: no tight columns (null).
  baselines       the library variants the registry marks as baselines (openblas, blis, onednn;
                  rooflab.data.registry: DIR/list.json or `rooflab list --json`). The best baseline
                  of a (dtype, threads) group is the one with the highest WHM over the shapes it
                  ran; an implementation's ratio to it is WHM(impl) / WHM(best baseline), both
                  over the shapes the two have in common (so a missing shape biases neither).
  code path       what a library ran and whether it is its best for this CPU: bench.json
                  rooflab.code_path (library, ran, best, representative, selected_by, reason).
                  A ratio or target against a baseline with representative false carries
                  "baseline not representative (<reason>)"; a target against it is not
                  evaluated (reached null, the label as its reason; the value stays). A vendor
                  back end of rooflab's own (sfc_ca_libxsmm) is "vendor back end not
                  representative (<reason>)".
Targets (issue 5, "Performance to reach"; benchmarks, never pass/fail tests), at the largest
thread count of the run (the paper profile runs all cores):
  f64_whm_vs_best_baseline  WHM(sfc_ca, f64) >= 1.5 x WHM(best f64 baseline)
  f64_fma_fraction_4096     GFLOP/s(sfc_ca, f64, 4096^3) >= 0.85 x machine.json fma_f64 ceiling
  f32_whm_vs_onednn         WHM(sfc_ca, f32) >= 1.0 x WHM(onednn, f32)
"sfc_ca" is the own-kernel SFC-CA (variant sfc_ca; of several ISAs the one with the highest
WHM); sfc_ca_libxsmm is summarized but not a target.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.data.jsonfile import Checker, RooflabDataError, read_schema_file, write_json_atomic
from rooflab import cli
from rooflab.data.registry import load_registry
from rooflab.data.run import Run, counters_frames, family_rows, load_run, parse_name, read_json

FAMILY = "gemm"
SCHEMA = "rooflab.gemm_summary/1"
GRID_SIZES = (256, 512, 1024, 2048, 4096)  # the paper profile's 125-shape grid
TARGET_IMPL = "sfc_ca"
# The L2-miss counters (Fig. 7) live in their own counters.json: `rooflab counters` merges into
# an existing file with one config per back end, and the run's general counters simulate L3.
L2_COUNTERS_DIR = "gemm_l2"

POINT_COLUMNS = ["name", "impl", "variant", "isa", "dtype", "threads", "m", "n", "k", "mnk", "params",
                 "configs", "flops", "intensity", "median_s", "gflops", "predicted_s", "roof_gflops",
                 "bound", "level", "tight_gflops"]


def impl_label(variant: str, isa) -> str:
    return variant + (f"/{isa}" if isinstance(isa, str) and isa else "")


def baselines(run_dir) -> tuple[str, ...]:
    """The gemm variants the registry marks as library baselines, for the run in run_dir."""
    return load_registry(run_dir).baselines(FAMILY)


def is_baseline(impl: str, baseline_variants) -> bool:
    return impl.split("/")[0] in baseline_variants


def code_paths(bench: dict | None) -> dict[str, dict]:
    """{variant: bench.json rooflab.code_path} of the gemm rows that carry one (vendor
    libraries). Of rows that disagree (should not happen in one run) a non-representative one
    stands, so a flag is never lost."""
    out: dict[str, dict] = {}
    for b in (bench or {}).get("benchmarks", []):
        rl = b.get("rooflab") or {}
        cp = rl.get("code_path")
        if rl.get("family") != FAMILY or not isinstance(cp, dict):
            continue
        v = rl.get("variant")
        if v not in out or (out[v].get("representative") is not False and cp.get("representative") is False):
            out[v] = cp
    return out


def not_representative_label(cp: dict | None, baseline: bool = True) -> str | None:
    """"baseline not representative (<reason>)" for a code path with representative false; of a
    variant that is no baseline (rooflab's own SFC-CA on a vendor library: sfc_ca_libxsmm),
    "vendor back end not representative (<reason>)"."""
    if not cp or cp.get("representative") is not False:
        return None
    why = cp.get("reason") or "the library does not run its best code for this CPU"
    return f"{'baseline' if baseline else 'vendor back end'} not representative ({why})"


def whm(flops, gflops) -> float:
    """Flop-weighted harmonic mean of GFLOP/s: sum(flops) / sum(flops / gflops) = total flops /
    total time. NaN when empty; raises on a non-positive rate (an "ok" row never has one)."""
    f = np.asarray(flops, dtype=float)
    g = np.asarray(gflops, dtype=float)
    if f.size == 0:
        return math.nan
    if (g <= 0).any() or not np.isfinite(g).all():
        raise RooflabDataError(f"WHM of non-positive or non-finite GFLOP/s: {g[(g <= 0) | ~np.isfinite(g)][:3]}")
    return float(f.sum() / (f / g).sum())


def tight_roofline(run_dir) -> pd.DataFrame | None:
    """The per-shape tight roofline from DIR/model.json: each sfc_ca row's predictions.tight
    (made by `rooflab model` with a machine.json). One row per (dtype, threads, mnk) with
    tight_gflops, tight_s and the model's view (knob, BRGEMM types, slow level, time split); of
    a shape's sfc_ca rows (one bound per micro-kernel ISA) the least time is the bound.
    sfc_ca_runs lists each row's predictions.brgemm (its own knobs). None when model.json is
    absent or no row carries a tight bound; raises on a malformed one."""
    if not (Path(run_dir) / "model.json").exists():
        return None
    doc = read_json(run_dir, "model")
    ck = Checker(Path(run_dir) / "model.json")
    shapes: dict[tuple, dict] = {}
    for i, r in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        preds = ck.opt(r, "predictions", w, (dict,)) or {}
        if ck.opt(r, "family", w, (str,)) != FAMILY or not preds:
            continue
        name = ck.get(r, "name", w, (str,))
        p = parse_name(name)
        key = (ck.opt(r, "dtype", w, (str,)) or p["dtype"], ck.opt(r, "threads", w, (int,)) or p["threads"],
               "x".join(str(d) for d in (ck.opt(r, "dims", w, (list,)) or p["dims"])))
        num = lambda obj, k, at: ck.get(obj, k, at, (float,))  # noqa: E731
        shape = shapes.setdefault(key, {"sfc_ca_runs": []})
        if "brgemm" in preds:
            b = ck.get(preds, "brgemm", f"{w}.predictions", (dict,))
            shape["sfc_ca_runs"].append({"name": name, "gflops": num(b, "gflops", f"{w}.predictions.brgemm"),
                                         "seconds": num(b, "time_s", f"{w}.predictions.brgemm")})
        if "tight" not in preds:
            continue
        at = f"{w}.predictions.tight"
        t = ck.get(preds, "tight", f"{w}.predictions", (dict,))
        k = ck.get(t, "knob", at, (dict,))
        row = {"tight_s": num(t, "time_s", at), "tight_gflops": num(t, "gflops", at),
               "tight_knob": "/".join(f"{x}:{ck.get(k, x, f'{at}.knob', (int,))}" for x in ("k_layers", "kbf", "bk")),
               "slow_level": ck.get(t, "slow_level", at, (str,)), "c_level": ck.get(t, "c_level", at, (str,)),
               "pack_s": num(t, "pack_s", at), "critical_s": num(t, "critical_s", at),
               "critical_compute_s": num(t, "critical_compute_s", at), "reduce_s": num(t, "reduce_s", at),
               "brgemm_types": ck.get(t, "brgemm_types", at, (dict,))}
        if "tight_s" not in shape or row["tight_s"] < shape["tight_s"]:
            shape.update(row)
    rows = [{"dtype": d, "threads": th, "mnk": mnk, **v} for (d, th, mnk), v in shapes.items() if "tight_s" in v]
    if not rows:
        return None
    return pd.DataFrame(rows, columns=["dtype", "threads", "mnk", "tight_s", "tight_gflops", "tight_knob", "slow_level",
                                       "c_level", "pack_s", "critical_s", "critical_compute_s", "reduce_s",
                                       "brgemm_types", "sfc_ca_runs"])


def gemm_points(model: pd.DataFrame, tight: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[str]]:
    """(one row per implementation, dtype, threads and shape: its fastest ok configuration;
    lines naming the failed / skipped gemm rows and disturbed measurements, which are never
    used). `tight` (tight_roofline()) adds each shape's tight_gflops (NaN where absent)."""
    ok, omitted = family_rows(model, FAMILY)
    rows = []
    for _, r in ok.iterrows():
        m, n, k = (int(x) for x in r.dims)
        pred = r.predicted_s
        rows.append({"name": r["name"], "impl": impl_label(r.variant, r.isa), "variant": r.variant,
                     "isa": r.isa if isinstance(r.isa, str) else None, "dtype": r["dtype"],
                     "threads": int(r.threads), "m": m, "n": n, "k": k, "mnk": f"{m}x{n}x{k}",
                     "params": ",".join(f"{a}:{b}" for a, b in r.params.items()), "flops": r.flops,
                     "intensity": r.intensity, "median_s": r.median_s, "gflops": r.gflops,
                     "predicted_s": pred,
                     "roof_gflops": r.flops / pred / 1e9 if pred == pred and pred > 0 else math.nan,
                     "bound": r.bound, "level": r.level})
    pts = pd.DataFrame(rows, columns=[c for c in POINT_COLUMNS if c not in ("configs", "tight_gflops")])
    if pts.empty:
        return pd.DataFrame(columns=POINT_COLUMNS), omitted
    if tight is not None and not tight.empty:
        pts = pts.merge(tight[["dtype", "threads", "mnk", "tight_gflops"]], on=["dtype", "threads", "mnk"], how="left")
    else:
        pts["tight_gflops"] = math.nan
    key = ["impl", "dtype", "threads", "mnk"]
    pts["configs"] = pts.groupby(key)["name"].transform("size")
    best = pts.sort_values("gflops", ascending=False).drop_duplicates(key)
    best = best.sort_values(["dtype", "threads", "intensity", "m", "n", "k", "impl"]).reset_index(drop=True)
    return best[POINT_COLUMNS], omitted


def _is_full_grid(shapes: set[str]) -> bool:
    return {f"{m}x{n}x{k}" for m in GRID_SIZES for n in GRID_SIZES for k in GRID_SIZES} <= shapes


def _whm_over(pts: pd.DataFrame, shapes: set[str] | None = None, col: str = "gflops") -> float:
    p = pts if shapes is None else pts[pts["mnk"].isin(shapes)]
    return whm(p.flops, p[col]) if not p[col].isna().any() else math.nan


def summarize_group(pts: pd.DataFrame, baseline_variants, paths: dict[str, dict] | None = None) -> dict:
    """Summary of one (dtype, threads) group of gemm_points(); baseline_variants: baselines();
    paths: code_paths() (each implementation's code_path and its not_representative label)."""
    paths = paths or {}
    impls = {}
    for impl, g in pts.groupby("impl", sort=True):
        total_t = float((g.flops / g.gflops).sum()) / 1e9
        roof = _whm_over(g, col="roof_gflops")
        tight = _whm_over(g, col="tight_gflops")
        is_base = is_baseline(impl, baseline_variants)
        impls[impl] = {"impl": impl, "variant": g.variant.iloc[0], "isa": g.isa.iloc[0],
                       "baseline": is_base, "n_shapes": int(len(g)),
                       "full_grid": _is_full_grid(set(g["mnk"])), "total_flops": float(g.flops.sum()),
                       "total_time_s": total_t, "whm_gflops": whm(g.flops, g.gflops),
                       "roofline_whm_gflops": None if math.isnan(roof) else roof,
                       "fraction_of_roofline": None if math.isnan(roof) else whm(g.flops, g.gflops) / roof,
                       "tight_roofline_whm_gflops": None if math.isnan(tight) else tight,
                       "fraction_of_tight_roofline": None if math.isnan(tight) else whm(g.flops, g.gflops) / tight,
                       "multi_config_shapes": int((g.configs > 1).sum()),
                       "code_path": paths.get(g.variant.iloc[0]),
                       "not_representative": not_representative_label(paths.get(g.variant.iloc[0]), is_base)}
    base = [v for v in impls.values() if v["baseline"]]
    best = max(base, key=lambda v: v["whm_gflops"]) if base else None
    for v in impls.values():
        v["best_baseline"] = best["impl"] if best else None
        v["ratio_to_best_baseline"] = v["common_shapes_with_best_baseline"] = None
        if best:
            common = set(pts[pts.impl == v["impl"]]["mnk"]) & set(pts[pts.impl == best["impl"]]["mnk"])
            if common:
                v["common_shapes_with_best_baseline"] = len(common)
                v["ratio_to_best_baseline"] = (_whm_over(pts[pts.impl == v["impl"]], common) /
                                               _whm_over(pts[pts.impl == best["impl"]], common))
    return {"dtype": pts["dtype"].iloc[0], "threads": int(pts.threads.iloc[0]), "n_shapes": int(pts["mnk"].nunique()),
            "best_baseline": best["impl"] if best else None,
            "best_baseline_whm_gflops": best["whm_gflops"] if best else None,
            "best_baseline_not_representative": best["not_representative"] if best else None,
            "implementations": sorted(impls.values(), key=lambda v: (v["baseline"], -v["whm_gflops"]))}


def fma_ceiling(run: Run, dtype: str, threads: int) -> float | None:
    if run.machine_df is None:
        return None
    c = run.machine_df["compute"]
    v = c[(c.key == f"fma_{dtype}") & (c.threads == threads)].gflops
    return float(v.iloc[0]) if not v.empty and float(v.iloc[0]) > 0 else None


def _target_impl(group: dict | None) -> dict | None:
    cands = [v for v in (group or {}).get("implementations", []) if v["variant"] == TARGET_IMPL]
    return max(cands, key=lambda v: v["whm_gflops"]) if cands else None


def evaluate_targets(run: Run, pts: pd.DataFrame, groups: list[dict], tight: pd.DataFrame | None = None) -> list[dict]:
    """The issue's three targets, each reached true / false, or null with the reason; with
    `tight` (tight_roofline()), the model's view of the 4096^3 shape."""
    out = []
    top = {}
    for g in groups:  # per dtype: the group with the most threads
        if g["dtype"] not in top or g["threads"] > top[g["dtype"]]["threads"]:
            top[g["dtype"]] = g

    def target(tid, desc, dtype, goal, value_fn):
        g = top.get(dtype)
        t = {"id": tid, "description": desc, "dtype": dtype, "threads": g["threads"] if g else None,
             "target": goal, "value": None, "reached": None}
        sfc = _target_impl(g)
        if sfc is None:
            t["reason"] = f"no ok {TARGET_IMPL} {dtype} rows in this run"
        else:
            t["impl"] = sfc["impl"]
            t.update(value_fn(g, sfc))
            if t.get("baseline_not_representative"):
                t["reason"] = t["baseline_not_representative"]  # a ratio to it is no verdict
            elif t["value"] is not None:
                t["reached"] = bool(t["value"] >= goal)
        out.append(t)

    def vs_best(g, sfc):
        if sfc["ratio_to_best_baseline"] is None:
            return {"reason": f"no baseline ran {g['dtype']} shapes in common with {sfc['impl']}"}
        b = next(v for v in g["implementations"] if v["impl"] == g["best_baseline"])
        return {"value": sfc["ratio_to_best_baseline"], "baseline": b["impl"],
                "baseline_not_representative": b["not_representative"], "impl_whm_gflops": sfc["whm_gflops"],
                "baseline_whm_gflops": b["whm_gflops"], "common_shapes": sfc["common_shapes_with_best_baseline"],
                "full_grid": sfc["full_grid"] and b["full_grid"],
                "impl_fraction_of_roofline": sfc["fraction_of_roofline"],
                "baseline_fraction_of_roofline": b["fraction_of_roofline"]}

    def vs_onednn(g, sfc):
        d = next((v for v in g["implementations"] if v["variant"] == "onednn"), None)
        if d is None:
            return {"reason": "no ok onednn f32 rows in this run"}
        p = pts[(pts["dtype"] == g["dtype"]) & (pts.threads == g["threads"])]
        common = set(p[p.impl == sfc["impl"]]["mnk"]) & set(p[p.impl == d["impl"]]["mnk"])
        if not common:
            return {"reason": f"{sfc['impl']} and onednn have no shape in common"}
        a, b = _whm_over(p[p.impl == sfc["impl"]], common), _whm_over(p[p.impl == d["impl"]], common)
        return {"value": a / b, "baseline": d["impl"], "baseline_not_representative": d["not_representative"],
                "impl_whm_gflops": a, "baseline_whm_gflops": b,
                "common_shapes": len(common), "full_grid": _is_full_grid(common),
                "impl_fraction_of_roofline": sfc["fraction_of_roofline"],
                "baseline_fraction_of_roofline": d["fraction_of_roofline"]}

    def fma_4096(g, sfc):
        p = pts[(pts.impl == sfc["impl"]) & (pts["dtype"] == "f64") & (pts.threads == g["threads"]) &
                (pts["mnk"] == "4096x4096x4096")]
        if p.empty:
            return {"reason": f"{sfc['impl']} f64 4096x4096x4096 at {g['threads']} threads is not in this run"}
        ceil = fma_ceiling(run, "f64", g["threads"])
        if ceil is None:
            return {"reason": f"machine.json has no fma_f64 ceiling at {g['threads']} threads (run `rooflab characterize`)"}
        r = p.iloc[0]
        out = {"value": float(r.gflops) / ceil, "gflops": float(r.gflops), "fma_f64_gflops": ceil, "name": r["name"],
               "model_bound": r.bound, "model_level": r.level,
               "roofline_gflops": None if math.isnan(r.roof_gflops) else float(r.roof_gflops),
               "tight_roofline_gflops": None if math.isnan(r.tight_gflops) else float(r.tight_gflops)}
        if tight is not None:
            t = tight[(tight["dtype"] == "f64") & (tight.threads == g["threads"]) & (tight["mnk"] == "4096x4096x4096")]
            if not t.empty:
                t = t.iloc[0]
                out["tight_model"] = {"knob": t.tight_knob, "seconds": float(t.tight_s), "pack_s": float(t.pack_s),
                                      "critical_s": float(t.critical_s),
                                      "critical_compute_s": float(t.critical_compute_s),
                                      "reduce_s": float(t.reduce_s), "slow_level": t.slow_level,
                                      "brgemm_types": t.brgemm_types,
                                      "ran": [{"name": x["name"], "gflops": x["gflops"], "seconds": x["seconds"]}
                                              for x in t.sfc_ca_runs]}
        return out

    target("f64_whm_vs_best_baseline", "WHM(sfc_ca, f64) >= 1.5 x WHM(best f64 baseline), over common shapes",
           "f64", 1.5, vs_best)
    target("f64_fma_fraction_4096", "GFLOP/s(sfc_ca, f64, 4096^3) >= 0.85 x measured fma_f64 ceiling",
           "f64", 0.85, fma_4096)
    target("f32_whm_vs_onednn", "WHM(sfc_ca, f32) >= 1.0 x WHM(onednn, f32), over common shapes",
           "f32", 1.0, vs_onednn)
    return out


def summary(run_dir) -> dict:
    """The gemm_summary document of a run directory (needs model.json; machine.json for the
    FMA-fraction target)."""
    run = load_run(run_dir, required=("model",))
    tight = tight_roofline(run_dir)
    pts, omitted = gemm_points(run.model_df, tight)
    base = baselines(run_dir)
    paths = code_paths(run.bench)
    groups = [summarize_group(g, base, paths) for _, g in pts.groupby(["dtype", "threads"], sort=True)]
    bench = run.bench or {}
    return {"schema": SCHEMA, "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "run": str(Path(run_dir).resolve()), "profile": bench.get("profile"), "filter": bench.get("filter"),
            "definition": "WHM = sum_i flops_i / sum_i (flops_i / gflops_i) = total flops / total time, over the "
                          "shapes an implementation ran ok (its fastest configuration per shape); ratios over "
                          "the shapes both implementations ran",
            "tight_roofline": str(Path(run_dir).resolve() / "model.json") if tight is not None else None,
            "baselines": list(base), "code_paths": paths, "groups": groups, "targets": evaluate_targets(run, pts, groups, tight),
            "not_used": omitted}


def write_summary(run_dir, out=None) -> Path:
    doc = summary(run_dir)
    return write_json_atomic(Path(out) if out else Path(run_dir) / "gemm_summary.json", doc)


def format_summary(doc: dict) -> str:
    """The summary as plain text: one table per (dtype, threads), then the targets."""
    lines = []
    flagged: dict[str, str] = {}
    for g in doc["groups"]:
        lines.append(f"{g['dtype']}, {g['threads']} threads, {g['n_shapes']} shapes "
                     f"(best baseline: {g['best_baseline'] or 'none'}):")
        lines.append(f"  {'implementation':24s} {'shapes':>6s} {'WHM GFLOP/s':>12s} {'/ roofline':>10s} "
                     f"{'/ tight':>8s} {'x best base':>11s}")
        for v in g["implementations"]:
            fr = "—" if v["fraction_of_roofline"] is None else f"{v['fraction_of_roofline']:.2f}"
            ft = "—" if v.get("fraction_of_tight_roofline") is None else f"{v['fraction_of_tight_roofline']:.2f}"
            ra = "—" if v["ratio_to_best_baseline"] is None else f"{v['ratio_to_best_baseline']:.3f}"
            mark = " *" if v.get("not_representative") else ""
            if mark:
                flagged[v["impl"]] = v["not_representative"]
            lines.append(f"  {v['impl'] + mark:24s} {v['n_shapes']:6d} {v['whm_gflops']:12.2f} {fr:>10s} {ft:>8s} {ra:>11s}")
        if g.get("best_baseline_not_representative"):
            lines.append(f"  x best base is a ratio to {g['best_baseline']}: {g['best_baseline_not_representative']}")
    for impl, label in flagged.items():
        lines.append(f"* {impl}: {label}")
    lines.append("targets:")
    for t in doc["targets"]:
        state = {True: "REACHED", False: "not reached", None: "not evaluated"}[t["reached"]]
        val = "" if t["value"] is None else f" {t['value']:.3f} (target {t['target']})"
        lines.append(f"  {t['id']}: {state}{val}" + (f" — {t['reason']}" if t.get("reason") else ""))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- L2 counters

def l2_counters(run_dir) -> tuple[pd.DataFrame, dict, list[str]]:
    """The gemm rows of the cachegrind back end simulating LL = L2, from RUN/gemm_l2/counters.json
    (written by scripts/gemm_paper.sh) or else RUN/counters.json: (rows: name, impl, variant,
    dtype, shape, threads, k_layers, l2_misses = DLmr + DLmw per run, d1_misses; the back end's
    config; lines for failed rows). Raises when neither file holds such a back end."""
    run = Path(run_dir)
    for d in (run / L2_COUNTERS_DIR, run):
        if (d / "counters.json").exists():
            doc = read_json(d, "counters")
            break
    else:
        raise RooflabDataError(f"no {run / L2_COUNTERS_DIR / 'counters.json'} (nor {run / 'counters.json'}): run "
                               f"`rooflab counters --backend cachegrind --ll-level L2 --case gemm/... "
                               f"--out {run / L2_COUNTERS_DIR}` (scripts/gemm_paper.sh does)")
    path = d / "counters.json"
    frames = counters_frames(doc, path)  # the whole file checked, failed rows included
    be = frames["backends"]
    cg = be[(be.name == "cachegrind") & be.available]
    if cg.empty:
        raise RooflabDataError(f"{path}: the cachegrind back end is not available there")
    config = cg.iloc[0].config
    if config.get("LL_level") != "L2":
        raise RooflabDataError(f"{path}: cachegrind simulated LL = {config.get('LL_level', '?')}, not L2: rerun "
                               f"`rooflab counters --backend cachegrind --ll-level L2 ...`")
    frame = frames["rows"]
    frame = frame[(frame.backend == "cachegrind") & frame["name"].str.startswith(FAMILY + "/")]
    failed = [f"{r['name']}: failed ({r.message[:100]})" for _, r in frame[frame.status != "ok"].iterrows()]
    rows = []
    for _, r in frame[frame.status == "ok"].iterrows():
        n = parse_name(r["name"])
        ev = lambda k: r.get(("events", k), math.nan)  # noqa: E731
        rows.append({"name": r["name"], "impl": impl_label(n["variant"], n["isa"]), "variant": n["variant"],
                     "dtype": n["dtype"], "mnk": "x".join(str(x) for x in n["dims"]), "threads": n["threads"] or 1,
                     "k_layers": int(n["params"]["k_layers"]) if str(n["params"].get("k_layers", "")).isdigit() else None,
                     "l2_misses": ev("DLmr") + ev("DLmw"), "d1_misses": ev("D1mr") + ev("D1mw")})
    cols = ["name", "impl", "variant", "dtype", "mnk", "threads", "k_layers", "l2_misses", "d1_misses"]
    return pd.DataFrame(rows, columns=cols), config, failed


def main(argv=None) -> int:
    """`python plots/gemm_summary.py RUN [--out FILE]`."""
    ap = cli.Parser(prog="plots/gemm_summary.py", synopsis="RUN [--out FILE]",
                    description="Write RUN/gemm_summary.json (WHM per GEMM implementation, targets) and print "
                                "it as a table.")
    ap.add_run_argument("run directory (model.json, machine.json)")
    ap.add_argument("--out", help="summary file (default RUN/gemm_summary.json)")

    def run(a) -> int:
        doc = summary(a.run)
        path = write_json_atomic(Path(a.out) if a.out else Path(a.run) / "gemm_summary.json", doc)
        print(format_summary(doc))
        print(path)
        return 0

    return cli.run(ap, run, argv)
