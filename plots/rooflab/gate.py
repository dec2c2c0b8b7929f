"""`rooflab compare BASE NEW`: the performance regression gate (plots/compare.py runs it).

Compares two `rooflab bench` results benchmark by benchmark (matched by the canonical rooflab
name). For each benchmark present in both, with at least --min-reps timed repetitions on each
side, a two-sided Mann-Whitney U test on the per-repetition times and the ratio of medians
decide:

  slower     p < alpha and ratio > 1 + threshold   -> the gate fails (exit 4)
  faster     p < alpha and ratio < 1 - threshold
  same       otherwise (no significant change beyond the threshold)
  too few    fewer than --min-reps repetitions on a side: reported, not gated
  disturbed  `rooflab bench` marked the measurement on a side disturbed (load, spread; the
             reason is the note): shown with its ratio, not gated (not a good number)
  failed     the benchmark failed verification in NEW (exit 3: a wrong result is never "faster")

Metric `time` compares medians of the times; metric `efficiency` compares roofline
efficiencies (predicted / measured time, each run with its own machine.json's ceilings), which
cancels a uniform speed difference between machines: ratio = (t_new / t_base) *
(predicted_base / predicted_new); metric `ecm` does the same with the ECM prediction (model.json
rows' `ecm.time_s`: in-core work plus each cache level's transfers), which also follows a kernel
bound by L1 loads and stores from one CPU to another. The predictions come from the model.json
beside each bench.json (`rooflab model --run DIR`): bench.json holds measurements only. The U
test is the same for all (efficiency is a monotone function of the time within one run).

Exit codes: 0 no regression, 1 bad input or nothing comparable, 2 usage, 3 a benchmark failed
verification in NEW, 4 at least one benchmark is significantly slower.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from rooflab import cli
from rooflab.data.jsonfile import Checker, RooflabDataError, read_schema_file, write_json_atomic
from rooflab.data.run import gbench_seconds

SCHEMA = "rooflab.bench"
MODEL_SCHEMA = "rooflab.model"
MIN_REPS = 9  # below this the U test cannot reach p < 0.01 reliably (n = 9 each: p_min = 4e-5)
METRICS = ("time", "efficiency", "ecm")
PREDICTED = {"efficiency": "roofline", "ecm": "ECM"}  # the metrics that divide by a prediction


class CompareError(RooflabDataError):
    """Nothing to compare; the message says what and how to fix it."""


@dataclass
class Side:
    times: list[float]          # seconds, one per timed repetition
    predicted_s: float | None   # the run's roofline prediction for one unit
    error: str                  # non-empty: failed (verification or other)
    disturbed: str = ""         # non-empty: `rooflab bench` marked it disturbed; the reason
    unpredicted: str = ""       # why model.json has no prediction for it (its *_missing field)


@dataclass
class Row:
    name: str
    status: str                 # slower | faster | same | too few | disturbed | failed | only in BASE | only in NEW
    n_base: int = 0
    n_new: int = 0
    median_base_s: float | None = None
    median_new_s: float | None = None
    ratio: float | None = None  # > 1: NEW is slower (by the chosen metric)
    p_value: float | None = None
    note: str = ""


@dataclass
class Options:
    metric: str = "time"
    threshold: float = 0.10
    alpha: float = 0.01
    min_reps: int = MIN_REPS
    filter: str = ""

    def problem(self) -> str | None:
        """Why these options cannot be used (a usage error), or None."""
        if self.metric not in METRICS:
            return f"--metric must be one of {', '.join(METRICS)}, got {self.metric!r}"
        if not (0 <= self.threshold < 1) or not (0 < self.alpha < 1) or self.min_reps < 2:
            return "need 0 <= --threshold < 1, 0 < --alpha < 1, --min-reps >= 2"
        try:
            re.compile(self.filter)
        except re.error as e:
            return f"--filter {self.filter!r} is not a regular expression ({e})"
        return None


@dataclass
class Result:
    base: Path
    new: Path
    options: Options
    rows: list[Row]
    summary: str       # the last line `rooflab compare` prints
    exit_code: int     # 0, 3 (a benchmark failed in NEW) or 4 (one is significantly slower)

    def doc(self) -> dict:
        o = self.options
        return {"schema": "rooflab.compare/1", "base": str(self.base), "new": str(self.new), "metric": o.metric,
                "threshold": o.threshold, "alpha": o.alpha, "min_reps": o.min_reps, "rows": [asdict(r) for r in self.rows]}


def row_name(b: dict) -> str | None:
    """A bench.json row's canonical name (rooflab's, else Google Benchmark's run name); None for a
    row that is not a rooflab benchmark's."""
    rl = b.get("rooflab")
    return (rl.get("name") or b.get("run_name") or b.get("name")) if isinstance(rl, dict) else None


def load_bench(path_arg: str | Path) -> tuple[Path, dict[str, Side]]:
    """bench.json (or a run directory holding one) -> {canonical name: Side}."""
    path = Path(path_arg)
    if path.is_dir():
        path = path / "bench.json"
    doc = read_schema_file(path, SCHEMA, 1, "`rooflab bench` (a `rooflab bench` output)",
                           missing=f"{path} not found (produce it with `rooflab bench --out DIR`)")
    ck = Checker(path)
    out: dict[str, Side] = {}
    for i, b in enumerate(ck.items(doc, "benchmarks", "$")):
        w = f"$.benchmarks[{i}]"
        rl = ck.opt(b, "rooflab", w, (dict,))
        if rl is None:
            continue
        if not (ck.opt(rl, "name", f"{w}.rooflab", (str,)) or ck.opt(b, "run_name", w, (str,))):
            ck.get(b, "name", w, (str,))  # the last name row_name falls back on: required
        name = row_name(b)
        side = out.setdefault(name, Side([], None, ""))
        if ck.opt(rl, "disturbed", f"{w}.rooflab", (bool,), False):
            side.disturbed = ck.opt(rl, "disturbed_reason", f"{w}.rooflab", (str,)) or "disturbed"
        if ck.opt(b, "error_occurred", w, (bool,), False):
            side.error = ck.opt(b, "error_message", w, (str,)) or "error"
        elif ck.opt(b, "run_type", w, (str,)) == "iteration":
            side.times.append(gbench_seconds(ck, b, w, name))
    if not out:
        raise CompareError(f"{path}: no rooflab benchmarks in it")
    return path, out


def load_predictions(bench_path: Path, sides: dict[str, Side], metric: str = "efficiency") -> None:
    """Sets each Side's predicted_s from the model.json beside bench_path (the one prediction
    file): the roofline's `predicted_s`, or `ecm.time_s` for the ecm metric; a row without that
    prediction leaves it None."""
    path = bench_path.parent / "model.json"
    doc = read_schema_file(path, MODEL_SCHEMA, 1, "`rooflab model` (a `rooflab model` output)",
                           missing=f"{path} not found: the {metric} metric reads the predictions from it "
                                   f"(run `rooflab model --run {bench_path.parent}`)")
    ck = Checker(path)
    for i, r in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        side = sides.get(ck.get(r, "name", w, (str,)))
        if metric == "ecm":
            e = ck.opt(r, "ecm", w, (dict,))
            # A fallback ECM is the roofline: dividing one side by it and the other by a
            # per-level ECM would compare two models, not two runs.
            t = (ck.opt(e, "time_s", f"{w}.ecm", (float,))
                 if e is not None and not ck.opt(e, "fallback", f"{w}.ecm", (bool,), False) else None)
        else:
            t = ck.opt(r, "predicted_s", w, (float,))
        if side is not None and t is not None and t > 0:
            side.predicted_s = t
        elif side is not None:
            why = ck.opt(r, "ecm_missing" if metric == "ecm" else "prediction_missing", w, (str,))
            side.unpredicted = why or ck.opt(r, "prediction_missing", w, (str,)) or ""


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    try:
        from scipy.stats import mannwhitneyu  # imported here: only the gate needs scipy
    except ImportError as e:
        raise RooflabDataError(f"the U test needs scipy ({e}): install plots/requirements.txt") from None
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
        if metric in PREDICTED:
            if not (b.predicted_s and n.predicted_s):
                r.status, r.ratio = "too few", None
                whys = [f"{side}: {x.unpredicted}" for side, x in (("BASE", b), ("NEW", n)) if x.unpredicted]
                r.note = "; ".join(whys) or (
                    f"no {PREDICTED[metric]} prediction in BASE's or NEW's model.json (model without machine.json"
                    + ("; or an ECM that fell back to the roofline: no per-level traffic in bench.json (an older "
                       "`rooflab bench`, or a variant declaring none)" if metric == "ecm" else "") + ")")
                rows.append(r)
                continue
            r.ratio *= b.predicted_s / n.predicted_s
        if min(r.n_base, r.n_new) < min_reps:
            r.status = "too few"
            r.note = f"{min(r.n_base, r.n_new)} < {min_reps} repetitions (--benchmark_repetitions={min_reps})"
            rows.append(r)
            continue
        if b.disturbed or n.disturbed:  # not a good number on a side: shown, never gated
            r.status = "disturbed"
            r.note = "; ".join(f"{side}: {why}" for side, why in (("BASE", b.disturbed), ("NEW", n.disturbed)) if why)
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

def gate(base_arg: str | Path, new_arg: str | Path, o: Options = Options()) -> Result:
    """Compares BASE with NEW; CompareError (a RooflabDataError) on bad input or when nothing is
    comparable."""
    pat = re.compile(o.filter) if o.filter else None
    bpath, base = load_bench(base_arg)
    npath, new = load_bench(new_arg)
    if o.metric in PREDICTED:
        load_predictions(bpath, base, o.metric)
        load_predictions(npath, new, o.metric)
    if pat:
        base = {k: v for k, v in base.items() if pat.search(k)}
        new = {k: v for k, v in new.items() if pat.search(k)}
    rows = compare(base, new, o.metric, o.threshold, o.alpha, o.min_reps)
    # A disturbed row was compared (it is shown with its ratio), it just does not gate.
    if not any(r.status in ("slower", "faster", "same", "disturbed", "failed") for r in rows):
        raise CompareError("nothing comparable: no benchmark is in both files with "
                           f">= {o.min_reps} repetitions on each side (run `rooflab bench "
                           f"--benchmark_repetitions={o.min_reps}` for both)")
    # Disturbed rows are shown but do not gate: when they are all there is, the gate judged
    # nothing, and passing would hide a regression behind a loaded machine.
    if not any(r.status in ("slower", "faster", "same", "failed") for r in rows):
        raise CompareError("nothing gated: every benchmark in both files was measured disturbed on "
                           "a side (" + "; ".join(f"{r.name}: {r.note}" for r in rows if r.status == "disturbed")
                           + "); measure again on a quiet machine")
    counts = {s: sum(r.status == s for r in rows) for s in dict.fromkeys(r.status for r in rows)}
    summary = (f"{len(rows)} benchmarks: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
               f"  (metric {o.metric}, threshold {o.threshold:.0%}, alpha {o.alpha})")
    code = 3 if counts.get("failed") else 4 if counts.get("slower") else 0
    return Result(bpath, npath, o, rows, summary, code)


def main(argv: list[str] | None = None) -> int:
    ap = cli.Parser("rooflab compare", "BASE NEW [--metric time|efficiency|ecm] [--threshold X] [--alpha A] "
                    "[--min-reps N] [--filter REGEX] [--markdown] [--json-out FILE]",
                    description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="BASE bench.json or run directory (--metric efficiency|ecm: with model.json beside)")
    ap.add_argument("new", help="NEW bench.json or run directory (--metric efficiency|ecm: with model.json beside)")
    ap.add_argument("--metric", choices=METRICS, default="time")
    ap.add_argument("--threshold", type=cli.finite_float, default=0.10,
                    help="relative slowdown that fails (default 0.10)")
    ap.add_argument("--alpha", type=cli.finite_float, default=0.01,
                    help="significance level of the U test (default 0.01)")
    ap.add_argument("--min-reps", type=int, default=MIN_REPS, help=f"repetitions needed per side (default {MIN_REPS})")
    ap.add_argument("--filter", default="", help="only benchmarks whose name contains this regex")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--json-out", help="also write the rows as JSON (schema rooflab.compare/1)")

    def body(a) -> int:
        opts = Options(a.metric, a.threshold, a.alpha, a.min_reps, a.filter)
        if (why := opts.problem()):
            raise cli.UsageError(why)
        res = gate(a.base, a.new, opts)
        print(fmt_table(res.rows, a.metric, a.markdown))
        print(f"\n{res.summary}")
        if a.json_out:
            write_json_atomic(a.json_out, res.doc(), indent=2)
        return res.exit_code

    return cli.run(ap, body, argv)
