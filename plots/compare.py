"""`rooflab compare BASE NEW`: the performance regression gate.

Compares two `rooflab bench` results benchmark by benchmark (matched by the canonical rooflab
name). For each benchmark present in both, with at least --min-reps timed repetitions on each
side, a two-sided Mann-Whitney U test on the per-repetition times and the ratio of medians
decide:

  slower     p < alpha and ratio > 1 + threshold   -> the gate fails (exit 4)
  faster     p < alpha and ratio < 1 - threshold
  same       otherwise (no significant change beyond the threshold)
  too few    fewer than --min-reps repetitions on a side: reported, not gated
  failed     the benchmark failed verification in NEW (exit 3: a wrong result is never "faster")

Metric `time` compares medians of the times; metric `efficiency` compares roofline
efficiencies (predicted / measured time, each run with its own machine.json's ceilings), which
cancels a uniform speed difference between machines: ratio = (t_new / t_base) *
(predicted_base / predicted_new). The U test is the same for both (efficiency is a monotone
function of the time within one run).

Exit codes: 0 no regression, 1 bad input or nothing comparable, 2 usage, 3 a benchmark failed
verification in NEW, 4 at least one benchmark is significantly slower.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

SCHEMA = "rooflab.bench"
UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
MIN_REPS = 9  # below this the U test cannot reach p < 0.01 reliably (n = 9 each: p_min = 4e-5)


class CompareError(Exception):
    """Bad input; the message says what and how to fix it."""


@dataclass
class Side:
    times: list[float]          # seconds, one per timed repetition
    predicted_s: float | None   # the run's roofline prediction for one unit
    error: str                  # non-empty: failed (verification or other)


@dataclass
class Row:
    name: str
    status: str                 # slower | faster | same | too few | failed | only in BASE | only in NEW
    n_base: int = 0
    n_new: int = 0
    median_base_s: float | None = None
    median_new_s: float | None = None
    ratio: float | None = None  # > 1: NEW is slower (by the chosen metric)
    p_value: float | None = None
    note: str = ""


def load_bench(path_arg: str) -> tuple[Path, dict[str, Side]]:
    """bench.json (or a run directory holding one) -> {canonical name: Side}."""
    path = Path(path_arg)
    if path.is_dir():
        path = path / "bench.json"
    if not path.is_file():
        raise CompareError(f"{path} not found (produce it with `rooflab bench --out DIR`)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CompareError(f"{path}: not valid JSON ({e})") from e
    schema = doc.get("schema", "") if isinstance(doc, dict) else ""
    if not isinstance(schema, str) or schema.split("/")[0] != SCHEMA or schema.split("/")[-1] != "1":
        raise CompareError(f'{path}: schema is "{schema}", expected "{SCHEMA}/1" (a `rooflab bench` output)')
    out: dict[str, Side] = {}
    for i, b in enumerate(doc.get("benchmarks", [])):
        rl = b.get("rooflab")
        if not isinstance(rl, dict):
            continue
        name = rl.get("name") or b.get("run_name") or b.get("name")
        side = out.setdefault(name, Side([], None, ""))
        pred = rl.get("prediction")
        if isinstance(pred, dict) and isinstance(pred.get("time_s"), (int, float)) and pred["time_s"] > 0:
            side.predicted_s = float(pred["time_s"])
        if b.get("error_occurred"):
            side.error = b.get("error_message") or "error"
        elif b.get("run_type") == "iteration":
            unit = b.get("time_unit", "ns")
            t = b.get("real_time")
            if unit not in UNIT_S or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
                raise CompareError(f"{path}: benchmarks[{i}] ({name}): bad real_time {t!r} {unit!r}")
            side.times.append(float(t) * UNIT_S[unit])
    if not out:
        raise CompareError(f"{path}: no rooflab benchmarks in it")
    return path, out


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    from scipy.stats import mannwhitneyu  # imported here: only the gate needs scipy
    if len(set(a) | set(b)) == 1:
        return 1.0  # all equal: no evidence of a difference (scipy would warn)
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def compare(base: dict[str, Side], new: dict[str, Side], metric: str, threshold: float, alpha: float,
            min_reps: int) -> list[Row]:
    rows: list[Row] = []
    for name in list(base) + [n for n in new if n not in base]:
        b, n = base.get(name), new.get(name)
        if b is None or n is None:
            rows.append(Row(name, "only in NEW" if b is None else "only in BASE"))
            continue
        r = Row(name, "same", len(b.times), len(n.times))
        if n.error:
            r.status, r.note = "failed", n.error
            rows.append(r)
            continue
        if b.error or not b.times or not n.times:
            r.status, r.note = "too few", b.error or "no timed repetitions"
            rows.append(r)
            continue
        r.median_base_s, r.median_new_s = statistics.median(b.times), statistics.median(n.times)
        r.ratio = r.median_new_s / r.median_base_s
        if metric == "efficiency":
            if not (b.predicted_s and n.predicted_s):
                r.status, r.ratio = "too few", None
                r.note = "no roofline prediction in BASE or NEW (bench without machine.json)"
                rows.append(r)
                continue
            r.ratio *= b.predicted_s / n.predicted_s
        if min(r.n_base, r.n_new) < min_reps:
            r.status = "too few"
            r.note = f"{min(r.n_base, r.n_new)} < {min_reps} repetitions (--benchmark_repetitions={min_reps})"
            rows.append(r)
            continue
        r.p_value = mann_whitney_p(b.times, n.times)
        if r.p_value < alpha and r.ratio > 1 + threshold:
            r.status = "slower"
        elif r.p_value < alpha and r.ratio < 1 - threshold:
            r.status = "faster"
        rows.append(r)
    return rows


def fmt_table(rows: list[Row], metric: str, markdown: bool) -> str:
    head = ["benchmark", "base median", "new median", f"ratio ({metric})", "p (U test)", "n", "verdict"]
    body = []
    for r in rows:
        ms = lambda s: "-" if s is None else f"{s * 1e3:.4g} ms"
        body.append([r.name, ms(r.median_base_s), ms(r.median_new_s),
                     "-" if r.ratio is None else f"{r.ratio:.3f}",
                     "-" if r.p_value is None else f"{r.p_value:.2g}", f"{r.n_base}/{r.n_new}",
                     r.status + (f" ({r.note})" if r.note else "")])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(x) for x in body])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rooflab compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="BASE bench.json or run directory")
    ap.add_argument("new", help="NEW bench.json or run directory")
    ap.add_argument("--metric", choices=("time", "efficiency"), default="time")
    ap.add_argument("--threshold", type=float, default=0.10, help="relative slowdown that fails (default 0.10)")
    ap.add_argument("--alpha", type=float, default=0.01, help="significance level of the U test (default 0.01)")
    ap.add_argument("--min-reps", type=int, default=MIN_REPS, help=f"repetitions needed per side (default {MIN_REPS})")
    ap.add_argument("--filter", default="", help="only benchmarks whose name contains this regex")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--json-out", help="also write the rows as JSON (schema rooflab.compare/1)")
    a = ap.parse_args(argv)
    if not (0 <= a.threshold < 1) or not (0 < a.alpha < 1) or a.min_reps < 2:
        ap.error("need 0 <= --threshold < 1, 0 < --alpha < 1, --min-reps >= 2")
    try:
        pat = re.compile(a.filter) if a.filter else None
        bpath, base = load_bench(a.base)
        npath, new = load_bench(a.new)
        if pat:
            base = {k: v for k, v in base.items() if pat.search(k)}
            new = {k: v for k, v in new.items() if pat.search(k)}
        rows = compare(base, new, a.metric, a.threshold, a.alpha, a.min_reps)
        gated = [r for r in rows if r.status in ("slower", "faster", "same", "failed")]
        if not gated:
            raise CompareError("nothing comparable: no benchmark is in both files with "
                               f">= {a.min_reps} repetitions on each side (run `rooflab bench "
                               f"--benchmark_repetitions={a.min_reps}` for both)")
    except (CompareError, re.error) as e:
        print(f"rooflab compare: error: {e}", file=sys.stderr)
        return 1
    print(fmt_table(rows, a.metric, a.markdown))
    counts = {s: sum(r.status == s for r in rows) for s in dict.fromkeys(r.status for r in rows)}
    print(f"\n{len(rows)} benchmarks: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
          f"  (metric {a.metric}, threshold {a.threshold:.0%}, alpha {a.alpha})")
    if a.json_out:
        doc = {"schema": "rooflab.compare/1", "base": str(bpath), "new": str(npath), "metric": a.metric,
               "threshold": a.threshold, "alpha": a.alpha, "min_reps": a.min_reps,
               "rows": [asdict(r) for r in rows]}
        tmp = Path(a.json_out).with_name("." + Path(a.json_out).name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        tmp.replace(a.json_out)
    if counts.get("failed"):
        return 3
    return 4 if counts.get("slower") else 0


if __name__ == "__main__":
    sys.exit(main())
