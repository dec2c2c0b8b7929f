"""RUN/rtamm.json (`rooflab rtamm evaluate`, schema rooflab.rtamm/1): the per-plan points, the
per-shape outcome and accuracy_table(): per category and overall, the decision accuracy (chosen
plan within 5% of the oracle's time; and, where the evaluation measured the oracle's own
repeatability, within max(5%, that noise)), mean / max gain over static, mean loss vs the
oracle and the decision overhead; summary(): the file's own summary, checked."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.data.jsonfile import Checker, MalformedInput, RooflabDataError
from rooflab.data.run import read_family_json

SCHEMA = "rooflab.rtamm/1"
FILE = "rtamm.json"
HOW = "rooflab rtamm evaluate --machine MACHINE.json --out RUN"
CATEGORIES = ["SMA", "SMNA", "MMA", "MMNA", "BMA", "BMNA"]
# summary key -> nullable (the >= 256^3 ones are null when no shape is that large)
SUMMARY_KEYS = {"shapes": False, "decision_accuracy": False, "mean_gain_over_static": False,
                "max_gain_over_static": False, "mean_oracle_gain_over_static": False, "mean_loss_vs_oracle": False,
                "mean_decision_overhead_ge_256cubed": True, "max_decision_overhead_ge_256cubed": True,
                "shapes_ge_256cubed": True}


def load(run_dir) -> dict:
    path = Path(run_dir) / FILE
    doc = read_family_json(run_dir, FILE, SCHEMA, f"`{HOW}`")
    ck = Checker(path)
    shapes, plans = ck.items(doc, "shapes", "$", required=False), ck.items(doc, "plans", "$", required=False)
    if not shapes or not plans:
        raise RooflabDataError(f"{path}: no shapes or plans in it; run `{HOW}`")
    for i, pl in enumerate(plans):
        for k in ("id", "order"):
            ck.get(pl, k, f"$.plans[{i}]", (str,))
    ck.opt(doc, "config", "$", (dict,))
    for i, e in enumerate(ck.items(doc, "equivalent_orders", "$", required=False)):
        for k in ("measured_a_ns", "measured_b_ns"):
            if ck.get(e, k, f"$.equivalent_orders[{i}]", (float,)) <= 0:
                raise ck.fail(f"$.equivalent_orders[{i}].{k}", "expected a positive time")
    frames(doc, str(path))  # every shape checked here, not first when a figure is drawn
    if "summary" in doc:
        _summary(ck, doc)
    return doc


def frames(doc: dict, path: str = FILE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per shape and plan, one row per shape); MalformedInput names a bad shape entry."""
    plans = doc["plans"]
    pts, rows = [], []
    for i, s in enumerate(doc["shapes"]):
        try:
            t, p = s["measured_ns"], s["predicted_ns"]
            if len(t) != len(plans) or len(p) != len(plans):
                raise ValueError(f"{len(t)} times for {len(plans)} plans")
            c, o, st = int(s["chosen"]), int(s["oracle"]), int(s["static"])
            for j, pl in enumerate(plans):
                pts.append({"shape": i, "category": s["category"], "plan": pl["id"], "order": pl["order"],
                            "ahead": pl["ahead"], "predicted_ns": float(p[j]), "measured_ns": float(t[j]),
                            "chosen": j == c})
            # accuracy / gain / loss from the head-to-head re-timing when present (the sweep's
            # minimum over all plans is biased low by noise)
            r = s.get("retimed_ns")
            tc, to, ts = ((float(r["chosen"]), float(r["oracle"]), float(r["static"])) if r
                          else (float(t[c]), float(t[o]), float(t[st])))
            # noise-aware: within max(5%, the shape's measured repeatability); NaN when not measured
            rep = s.get("repeatability")
            noise_ok = float(tc <= (1 + max(0.05, float(rep))) * to) if rep is not None else np.nan
            rows.append({"shape": i, "category": s["category"], "m": int(s["m"]), "n": int(s["n"]), "k": int(s["k"]),
                         "chosen_ns": tc, "oracle_ns": to, "static_ns": ts, "gain": ts / tc - 1, "loss": tc / to - 1,
                         "accurate": tc <= 1.05 * to, "accurate_noise_aware": noise_ok,
                         "overhead": float(s["decision_ns"]) / tc})
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise MalformedInput(f"{path}: malformed shape entry {i} ({type(e).__name__}: {e})") from e
    return pd.DataFrame(pts), pd.DataFrame(rows)


def accuracy_table(shapes: pd.DataFrame) -> pd.DataFrame:
    """One row per category present, then ALL (computed from the per-shape times)."""
    out = []
    groups = [(c, shapes[shapes.category == c]) for c in CATEGORIES if (shapes.category == c).any()]
    for name, g in groups + [("ALL", shapes)]:
        big = g[g.m * g.n * g.k >= 256 ** 3]
        na = g.accurate_noise_aware
        out.append({"category": name, "shapes": len(g), "accuracy": g.accurate.mean(),
                    "accuracy_noise_aware": na.mean() if na.notna().all() else np.nan, "mean_gain": g.gain.mean(),
                    "max_gain": g.gain.max(), "mean_loss": g.loss.mean(), "max_loss": g.loss.max(),
                    "overhead": g.overhead.mean(),
                    "overhead_ge_256cubed": big.overhead.mean() if len(big) else np.nan})
    return pd.DataFrame(out)




def summary(run_dir) -> dict:
    """The file's summary (the headline numbers the claims ledger and the report quote), every
    number checked; RooflabDataError when the file is absent or has none."""
    path = Path(run_dir) / FILE
    sm = _summary(Checker(path), read_family_json(run_dir, FILE, SCHEMA, f"`{HOW}`"))
    if not sm:
        raise RooflabDataError(f"{path}: no summary in it; run `{HOW}`")
    return sm


def _summary(ck: Checker, doc: dict) -> dict:
    sm = ck.opt(doc, "summary", "$", (dict,), {})
    for k, nullable in SUMMARY_KEYS.items():
        if nullable:
            ck.opt(sm, k, "$.summary", (float,))
        elif sm:
            ck.get(sm, k, "$.summary", (float,))
    return sm
