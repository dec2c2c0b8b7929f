#!/usr/bin/env python3
"""Cross-machine prediction over every ordered pair of runs: `rooflab model --predict-on
B/machine.json A` for each A != B (B's bench.json beside its machine.json gives the errors),
then one Markdown table of the per-family errors (docs/predict-on.md).

    scripts/predict_on_pairs.py [--rooflab BIN] --out DIR LABEL=RUN LABEL=RUN ...

Writes DIR/<A>_on_<B>/predict_on.json and prints the table: per pair and family, for the
roofline and the ECM, the model's own prediction on B and A's time carried to B, each as
median |predicted / measured - 1| and the share within 20%. Standard library only."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

KINDS = ("roofline_model", "roofline_carried", "ecm_model", "ecm_carried")


def main() -> int:
    ap = argparse.ArgumentParser(prog="predict_on_pairs.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooflab", default=str(Path(__file__).resolve().parents[1] / "build/release/rooflab"))
    ap.add_argument("--out", required=True, help="where each pair's predict_on.json goes")
    ap.add_argument("runs", nargs="+", metavar="LABEL=RUN", help="a run directory (machine.json, bench.json) and its label")
    a = ap.parse_args()
    runs = {}
    for spec in a.runs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not (Path(path) / "machine.json").is_file() or not (Path(path) / "bench.json").is_file():
            ap.error(f"{spec!r}: expected LABEL=RUN with RUN/machine.json and RUN/bench.json")
        runs[label] = Path(path)
    if len(runs) < 2:
        ap.error("needs two runs or more")
    lines = ["| A -> B | family | cases | roofline model | roofline carried | ECM model | ECM carried |",
             "|---|---|---|---|---|---|---|"]
    renamed = []
    for la, ra in runs.items():
        for lb, rb in runs.items():
            if la == lb:
                continue
            out = Path(a.out) / f"{la}_on_{lb}"
            p = subprocess.run([a.rooflab, "model", "--predict-on", str(rb / "machine.json"), str(ra), "--out", str(out)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(p.stdout + p.stderr, file=sys.stderr)
                return p.returncode
            d = json.loads((out / "predict_on.json").read_text())
            for fam, acc in sorted(d["accuracy"].items(), key=lambda kv: (kv[0] == "all", kv[0])):
                cells = [f"{100 * acc[k]['median_abs_error']:.0f}% / {100 * acc[k]['within_20']:.0f}%"
                         if acc[k]["median_abs_error"] is not None else "—" for k in KINDS]
                lines.append(f"| {la} -> {lb} | {fam} | {acc['roofline_model']['cases']} | " + " | ".join(cells) + " |")
            renamed += [f"{la} -> {lb}: {r['name']} {r['matched']}" for r in d["rows"]
                        if r["matched"] not in (None, "same name")]
            renamed += [f"{la} -> {lb}: {r['name']}: {'; '.join(r['b_lacks'])}" for r in d["rows"] if r["b_lacks"]]
    print("\n".join(lines))
    if renamed:
        print("\n" + "\n".join(f"- {x}" for x in renamed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
