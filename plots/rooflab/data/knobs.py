"""RUN/gemm_knobs.json (`rooflab gemm-knobs evaluate`): the loss of each knob-selection method
against the autotuned best, per random shape, and the file's summary per method."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from rooflab.data.jsonfile import Checker, MalformedInput, RooflabDataError
from rooflab.data.run import read_family_json

SCHEMA = "rooflab.gemm_knobs/1"
FILE = "gemm_knobs.json"
METHODS = ["analytic", "nn", "default"]  # plotted in this order when present
NOISE = "autotune_retimed"
HOW = "rooflab gemm-knobs evaluate --shapes 100 --out RUN"
SUMMARY_KEYS = ("shapes", "mean_loss", "median_loss", "max_loss", "within_3pct", "within_7pct")


def load(run_dir) -> tuple[pd.DataFrame, dict]:
    """(one row per shape and method, the whole document); RooflabDataError when absent or malformed."""
    path = Path(run_dir) / FILE
    doc = read_family_json(run_dir, FILE, SCHEMA, f"`{HOW}` (under the timing lock)")
    _check(Checker(path), doc)
    if doc.get("kind") != "evaluation" or not doc.get("shapes"):
        raise RooflabDataError(f"{path}: no evaluation in it (kind {doc.get('kind')!r}); run `{HOW}`")
    rows = []
    for s in doc["shapes"]:
        try:
            m, n, k = int(s["m"]), int(s["n"]), int(s["k"])
            for method in METHODS + [NOISE]:
                if method == NOISE:
                    loss, knob = s["autotune"]["retimed_loss"], s["autotune"]["knob"]
                elif method in s:
                    loss, knob = s[method]["loss"], s[method]["knob"]
                else:
                    continue
                # A shape's flops come from the file (the variant's model): Python derives none.
                flops = float(s["flops"])
                rows.append({"m": m, "n": n, "k": k, "flops": flops, "method": method,
                             "knob": f"k_layers:{knob['k_layers']}/kbf:{knob['kbf']}/bk:{knob['bk']}",
                             "loss": float(loss)})
        except (KeyError, TypeError, ValueError) as e:
            raise MalformedInput(f"{path}: malformed shape entry {str(s)[:80]} ({type(e).__name__}: {e})") from e
    return pd.DataFrame(rows), doc


def _check(ck: Checker, doc: dict) -> None:
    """The descriptive keys and the summary the figure, the report and the claims quote."""
    for k in ("kind", "dtype", "grid", "machine", "command"):
        ck.opt(doc, k, "$", (str,))
    for k in ("threads", "reps"):
        ck.opt(doc, k, "$", (int,))
    ck.opt(doc, "nn_set", "$", (dict,))
    ck.opt(doc, "sampling", "$", (dict,))
    ck.items(doc, "shapes", "$", required=False)
    for m, s in ck.opt(doc, "summary", "$", (dict,), {}).items():
        for k in SUMMARY_KEYS:
            ck.get(s, k, f"$.summary.{m}", (float,))


def summary(run_dir) -> dict:
    """method -> its summary numbers, of an evaluation file; RooflabDataError when there is none."""
    return load(run_dir)[1].get("summary") or {}
