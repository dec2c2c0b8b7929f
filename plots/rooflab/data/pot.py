"""RUN/pot_compare.json (scripts/pot_compare.py: POT and rooflab's Sinkhorn solves on the same
problem): one row per implementation, size and thread count, with its speed-up over POT."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from rooflab.data.jsonfile import Checker, RooflabDataError
from rooflab.data.run import read_family_json

SCHEMA = "rooflab.pot_compare/1"
FILE = "pot_compare.json"
ROW_KEYS = {"impl": (str,), "variant": (str,), "N": (int,), "threads": (int,), "seconds_per_iteration": (float,)}
OPTIONAL = {"isa": (str,), "prefetch": (str,), "speedup_vs_pot": (float,), "bytes_per_iteration": (float,), "gbps": (float,),
            "traffic_ratio_pot": (float,)}


def load_doc(run_dir) -> dict:
    """The document with every row checked (the rows' required keys, the optional ones' types)."""
    path = Path(run_dir) / FILE
    doc = read_family_json(run_dir, FILE, SCHEMA,
                           f"scripts/pot_compare.py --out {path} (needs POT: apt-get install python3-pot)")
    ck = Checker(path)
    for i, r in enumerate(ck.items(doc, "rows", "$", required=False)):
        w = f"$.rows[{i}]"
        lacks = [k for k in ROW_KEYS if k not in r]
        if lacks:
            raise ck.fail(w, f"rows need the keys {sorted(ROW_KEYS)}; this one lacks {', '.join(lacks)}")
        for k, t in ROW_KEYS.items():
            v = ck.get(r, k, w, t)
            if t != (str,) and v <= 0:
                raise ck.fail(f"{w}.{k}", f"expected a positive number, got {v}")
        for k, t in OPTIONAL.items():
            ck.opt(r, k, w, t)
    for k in ("iters", "reps"):
        ck.opt(doc, k, "$", (int,))
    for k in ("reg", "reg_m"):
        ck.opt(doc, k, "$", (float,))
    ck.opt(doc, "pot_version", "$", (str,))
    return doc


def load(run_dir) -> pd.DataFrame:
    """The rows, with speedup_vs_pot = POT's time / the row's time at the same size and threads."""
    doc = load_doc(run_dir)
    rows = pd.DataFrame(doc.get("rows") or [])
    if rows.empty:
        raise RooflabDataError(f"{Path(run_dir) / FILE}: no rows in it (rows need the keys {sorted(ROW_KEYS)})")
    pot = rows[rows.impl == "pot"].set_index(["N", "threads"]).seconds_per_iteration
    rows["speedup_vs_pot"] = [pot.get((r.N, r.threads), float("nan")) / r.seconds_per_iteration
                              for r in rows.itertuples()]
    return rows
