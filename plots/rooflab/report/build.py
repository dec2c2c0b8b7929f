"""The report of a run directory: static HTML pages plus a Markdown summary.

    rooflab report RUN [--out DIR] [--baseline BASE] [--metric time|efficiency] [--threshold X] [--history DB]
    rooflab report RUN --markdown          # the Markdown summary on stdout only (no HTML, no figures)
    (the `rooflab` binary runs python3 plots/report.py ...)

Writes into OUT (default RUN/report): index.html (self-diagnosis, machine summary, the roofline
with all families, the regression comparison when --baseline is given, the claims ledger with
each claim's headline figure, links to the pages of the families that have data, the commands
that reproduce each file), <family>.html (sinkhorn, floyd_warshall, gemm, rtamm, mpi, gpu),
details.html (machine details, general figures, counters, inputs), report.md (the Markdown
summary, also what --markdown prints) and the PNG figures; with --history DB also trends.html
(report/trends.py: the run's benchmarks over the history store, change points marked), linked
from each benchmark's row of the family pages. Prints the index.html path as its
last line. A part whose input is missing is a visible note naming the command that produces
it; an unusable file (malformed, of another schema: any file the report reads), a missing run
directory or a failed comparison is an error (exit 1); bad options exit 2. With --keep-going (./run_all.sh) such a part becomes a warning at the top of
index.html and report.md and everything else is still written (exit 1 when that happened).
RUN/steps.json (./run_all.sh's record of its steps) puts every failed or skipped step, with its
reason, at the top of both.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from rooflab import claims as claims_mod, cli, gate
from rooflab.data import files
from rooflab.data.jsonfile import RooflabDataError
from rooflab.data.run import FILES, Run, load_run
from rooflab.figures import attained_vs_predicted, bandwidth, cache_misses, prediction_error, roofline
from rooflab.history.store import redact
from rooflab.report import fleet, markdown as report_markdown, pages as report_pages, tables as rd, trends
from rooflab.report.html import draw, esc, fmt_num, fmt_time, missing, note, page, table, text_table, write_atomic

DETAILS_FIGURES = [  # (file, title, module, files it needs)
    ("attained_vs_predicted.png", "Measured vs predicted time, every family", attained_vs_predicted, ("model",)),
    ("prediction_error.png", "Prediction error distribution (ECM and roofline), per family", prediction_error, ("model",)),
    ("bandwidth.png", "Bandwidth vs working-set size", bandwidth, ("machine",)),
    ("cache_misses.png", "Cache misses", cache_misses, ("counters",)),
]
VERDICT_CLASS = lambda v: "v-" + v.replace(" ", "-")


# ----------------------------------------------------------------------------- index parts

def steps_section(doc: dict | None, run_dir: Path | None = None, out: Path | None = None) -> str:
    """What ./run_all.sh recorded about its steps (RUN/steps.json): every failed or skipped step
    with its reason first, then the table of all steps (logs linked from `out`)."""
    if doc is None:
        return ""
    problems = rd.step_problems(doc)
    head = ("<h2>Steps of this run</h2>" if not problems else
            f"<h2>Steps of this run: {sum(s == 'failed' for s, _ in problems)} failed, "
            f"{sum(s == 'skipped' for s, _ in problems)} skipped</h2>")
    notes = "\n".join(note(f"{status}: {what}", "warn" if status == "failed" else "note") for status, what in problems)
    h, rows = rd.step_table(doc)
    cmd = f'<p class="meta"><code>{esc(doc.get("command", ""))}</code>, started {esc(doc.get("started", "?"))}; ' \
          "what these steps did not produce is missing below; the rest is complete.</p>" if problems else ""
    def cells(r):
        log = r[-1]
        link = (f'<a href="{esc(os.path.relpath(Path(run_dir) / log, out))}">{esc(log)}</a>'
                if log and run_dir is not None and out is not None and (Path(run_dir) / log).is_file() else esc(log))
        return [esc(c) for c in r[:-1]] + [link]
    return head + notes + cmd + ("<details><summary>All steps</summary>" if not problems else "") + table(
        h, [cells(r) for r in rows], [r[1] if r[1] in ("failed", "skipped") else "" for r in rows],
        num_cols={2}, cls="compact") + ("</details>" if not problems else "")


def diagnostics_section(run: Run) -> str:
    w = rd.warnings(run)
    body = "\n".join(note(x, "warn") for x in w) if w else '<p class="meta">No warnings recorded.</p>'
    return "<h2>Self-diagnosis</h2>" + body


def machine_summary(run: Run) -> str:
    if run.machine is None:
        return "<h2>Machine</h2>" + note(run.missing["machine"])
    m = run.machine
    parts = ["<h2>Machine</h2>", text_table(["field", "value"], rd.machine_facts(run))]
    if m.get("host", {}).get("virtualized"):
        parts.append(note("Virtual machine: reported cache sizes and counters may not match the hardware; "
                          "the model uses the measured capacities."))
    head, rows = rd.caches_table(run)
    parts.append("<h3>Cache capacities: reported vs measured</h3>" + text_table(head, rows))
    parts.append("<h3>Bandwidth ceilings (GB/s)</h3>")
    wa = m.get("bandwidth", {}).get("write_allocate_counted")
    if wa is not None:
        parts.append(f'<p class="meta">Write-allocate traffic {"is" if wa else "is not"} counted.</p>')
    head, rows = rd.bandwidth_table(run)
    parts.append(text_table(head, rows, num_cols=set(range(1, len(head)))) if rows else note("bandwidth.levels is empty"))
    head, rows = rd.bandwidth_isa_table(run)
    parts.append("<h3>In-cache bandwidth ceilings per ISA (GB/s: a kernel's L1..L3 traffic is priced against its "
                 "own ISA's, DRAM against the table above)</h3>"
                 + (text_table(head, rows, num_cols=set(range(2, len(head)))) if rows else
                    note("no bandwidth.by_isa (a machine.json from an older `rooflab characterize`): every "
                         "kernel's traffic is priced against the widest ISA's ceilings above")))
    parts.append(likwid_section(run, "h3"))
    head, rows = rd.compute_table(run)
    parts.append("<h3>Compute ceilings (GFLOP/s, per ISA: each kernel is priced against its own)</h3>"
                 + text_table(head, rows, num_cols=set(range(2, len(head)))))
    head, rows = rd.isa_choice_table(run)
    parts.append("<h3>Default ISA of each per-ISA variant, measured (median ms per run; `rooflab isa-calibrate`)</h3>"
                 + (text_table(head, rows, num_cols=set(range(4, len(head) - 2)) | {len(head) - 1}) if rows else
                    note("no ISA calibration (machine.isa_choice.json): the default ISA is the widest this CPU runs")))
    parts.append('<p class="meta">More: <a href="details.html">bandwidth curves, method, counters</a>.</p>')
    return "\n".join(parts)


def likwid_section(run: Run, h: str) -> str:
    """rooflab's level ceilings next to likwid-bench's matching kernel, disagreements flagged."""
    lb = (run.machine or {}).get("likwid_bench")
    if not isinstance(lb, dict):
        return ""
    out = f"<{h}>Bandwidth ceilings vs likwid-bench</{h}>"
    head, rows, classes = rd.likwid_table(run)
    if not rows:
        return out + note(f"likwid-bench not used: {lb.get('reason', 'no points')}")
    bad = sum(c == "disagrees" for c in classes)
    spread = sum(bool(p.get("within_run_spread")) and p.get("agrees") is False for p in lb.get("points", []))
    if bad:
        out += note(f"{bad} of {len(rows)} likwid-bench comparisons disagree with rooflab's ceiling by more than "
                    f"{lb.get('tolerance', 0.10):.0%}" +
                    (f" ({spread} of them within the spread of likwid-bench's own runs: no evidence of a difference)"
                     if spread else ""), "warn")
    return out + table(head, [[esc(c) for c in r] for r in rows], classes, num_cols={2, 3, 4, 5, 6, 7, 8})


def roofline_section(run: Run, out: Path, drawn: set[str]) -> str:
    head = "<h2>Roofline, every family</h2>"
    absent = [run.missing[k] for k in ("machine", "model") if k in run.missing]
    if absent:
        return head + note("not drawn: " + "; ".join(absent))
    return head + draw(roofline, run.run_dir, out, "roofline.png", "Attained GFLOP/s of every benchmark against the "
                       "measured ceilings", drawn)


def comparison_section(cmp: rd.Comparison | None) -> str:
    if cmp is None:
        return ""
    rows, classes = [], []
    for r in cmp.rows:
        ms = lambda s: "—" if s is None else fmt_time(s)
        rows.append([esc(r["name"]), esc(ms(r["median_base_s"])), esc(ms(r["median_new_s"])),
                     esc(rd.fmt_ratio(r["ratio"])), esc("—" if r["p_value"] is None else f"{r['p_value']:.2g}"),
                     esc(f"{r['n_base']}/{r['n_new']}"), esc(r["status"] + (f" ({r['note']})" if r["note"] else ""))])
        classes.append(r["status"] if r["status"] in ("slower", "faster", "failed") else "")
    verdict = ("a benchmark is significantly slower" if cmp.exit_code == 4 else
               "a benchmark failed verification" if cmp.exit_code == 3 else "no significant regression")
    return (f"<h2>Regression comparison against the baseline</h2><p>Baseline <code>{esc(cmp.base)}</code>: "
            f"<b>{esc(verdict)}</b> — {esc(cmp.summary)}. Same test as <code>rooflab compare</code> "
            "(two-sided Mann-Whitney U on the repetitions, ratio of medians; exit 4 there when slower).</p>"
            + table(["benchmark", "base median", "new median", f"ratio ({cmp.metric})", "p (U test)", "n", "verdict"],
                    rows, classes, num_cols={1, 2, 3, 4, 5}, cls="compact"))


def claims_section(rows: list[dict]) -> str:
    body = []
    for r in rows:
        fig = r.get("figure_file", "")
        thumb = (f'<a href="{esc(fig)}"><img class="thumb" src="{esc(fig)}" alt="{esc(fig)}"></a>'
                 if fig else f'<span class="meta">{esc(r["figure"] or "—")}: {esc(r.get("figure_note", ""))}</span>')
        measured = esc(r["measured"] or "—")
        details = "; ".join(x for x in (", ".join(r["benchmarks"]), r["note"]) if x)
        if details:
            measured += f'<br><span class="meta">{esc(details)}</span>'
        body.append([f"<b>{esc(r['paper'])}</b>: {esc(r['statement'])}", esc(r["where"]), esc(r["paper_value"]),
                     measured, esc(r["verdict"]), thumb])
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    html = table(["claim", "paper fig./table", "paper", "measured here", "holds?", "headline figure"], body,
                 cls="compact claims")
    html = _colour_verdicts(html)  # table() gives row classes only
    return ("<h2>Claims ledger</h2>"
            f'<p class="meta">{len(rows)} claims: {esc(", ".join(f"{n} {v}" for v, n in counts.items()))}. Measured '
            "from this run's files as <code>rooflab claims</code> does (it writes claims.json / claims.md); verdicts: "
            "holds = same direction and rough size, direction holds = same direction only.</p>" + html)


def _colour_verdicts(html: str) -> str:
    for v in (claims_mod.HOLDS, claims_mod.DIRECTION, claims_mod.FAILS, claims_mod.NOT_MEASURED, claims_mod.NOT_HERE):
        html = html.replace(f"<td>{esc(v)}</td>", f'<td class="{VERDICT_CLASS(v)}">{esc(v)}</td>')
    return html


def families_section(run: Run) -> str:
    have = rd.families_with_data(run)
    items = []
    for f in have:
        rows = rd.family_rows(run, f)
        what = (f"{(rows.status == 'ok').sum()} benchmarks ok, {(rows.status == 'failed').sum()} failed, "
                f"{(rows.status == 'skipped').sum()} skipped" if not rows.empty else
                ", ".join(x for x in f.files if (run.run_dir / x).exists()) or f"machine.json \"{f.machine_section}\"")
        items.append(f'<li><a href="{report_pages.page_name(f)}">{esc(f.heading)}</a> <span class="meta">— '
                     f"{esc(what)}</span></li>")
    absent = [f.heading for f in rd.FAMILIES if f not in have]
    return ("<h2>Families</h2>" + (f'<ul class="families">{"".join(items)}</ul>' if items else note("no family has data "
            "in this run")) + (f'<p class="meta">No data in this run: {esc(", ".join(absent))}.</p>' if absent else ""))


def commands_section(run: Run, baseline: str | None, history: str | None = None) -> str:
    rows = rd.commands(run)
    rows.append(["report/", f"rooflab report {rd.q(run.run_dir)}" + (f" --baseline {rd.q(baseline)}" if baseline else "")
                 + (f" --history {rd.q(redact(history))}" if history else "")])  # never a password
    return ("<h2>Commands to reproduce every number</h2>"
            '<p class="meta">What each file of the run records about how it was made; the family pages list the '
            "command that re-times each benchmark.</p>"
            + table(["file", "command"], [[esc(f), f"<code>{esc(c)}</code>"] for f, c in rows]))


# ----------------------------------------------------------------------------- details page

def details_page(run: Run, out: Path, drawn: set[str], trend_links: dict[str, str] | None = None) -> list[str]:
    body = ["<h1>Machine details, general figures, counters, inputs</h1>"]
    m = run.machine
    if isinstance(m, dict):
        if isinstance(m.get("method"), dict) and m["method"]:
            body.append("<h2>Method</h2>" + text_table(["what", "how"], [[k, v] for k, v in m["method"].items()]))
    body.append("<h2>Figures</h2>")
    for fname, title, module, needs in DETAILS_FIGURES:
        absent = [run.missing[k] for k in needs if k in run.missing]
        if absent:
            body.append(f"<h3>{esc(title)}</h3>" + note("not drawn: " + "; ".join(absent)))
            continue
        body.append(draw(module, run.run_dir, out, fname, title, drawn))
    body.append(counters_section(run))
    known = {x for f in rd.FAMILIES for x in f.model}
    if run.model_df is not None and not (other := run.model_df[~run.model_df.family.isin(known)]).empty:
        body.append("<h2>Results of other families</h2>" + table(
            rd.RESULTS_HEAD, report_pages.results_cells(other, trend_links or {}),
            [s if s in ("failed", "skipped") else "" for s in other.status], num_cols={2, 3, 4, 5, 7}, cls="compact"))
    body.append(provenance_section(run))
    return body


def counters_section(run: Run) -> str:
    if run.counters_df is None:
        return "<h2>Counters</h2>" + note(run.missing["counters"])
    backends, rows = run.counters_df["backends"], run.counters_df["rows"]
    parts = ["<h2>Counters</h2>",
             table(["back end", "available", "reason / configuration"],
                   [[esc(b["name"]), esc("yes" if b.available else "no"),
                     esc(b.reason if not b.available else ", ".join(f"{k}={v}" for k, v in b.config.items()) or "")]
                    for _, b in backends.iterrows()],
                   ["" if b.available else "skipped" for _, b in backends.iterrows()])]
    if rows.empty:
        parts.append(note("no counter rows: no back end was available (see the reasons above)"))
        return "\n".join(parts)
    ev, dv = rows.attrs["event_keys"], rows.attrs["derived_keys"]
    body = []
    for _, r in rows.iterrows():
        ok = r.status == "ok"
        # A failed or skipped row shows its message, never numbers.
        nums = ([esc(fmt_num(r[("events", k)], 4)) for k in ev] + [esc(fmt_num(r[("derived", k)], 3)) for k in dv]
                if ok else [""] * (len(ev) + len(dv)))
        said = "; ".join(x for x in ((f"simulated as {r.simulated_as}" if r.simulated_as else ""),
                                     r.message if not ok else "", r.note) if x)
        body.append([esc(r["name"]), esc(r.backend), esc(r.status), esc("" if missing(r.runs) else int(r.runs))]
                    + nums + [esc(said)])
    parts.append('<p class="meta">Events are per timed run, averaged over the runs; — = not reported by '
                 "that back end; failed and skipped rows give their reason instead of numbers.</p>")
    parts.append(table(["name", "back end", "status", "runs"] + ev + dv + ["note"], body,
                       [s if s in ("failed", "skipped") else "" for s in rows.status],
                       num_cols=set(range(3, 4 + len(ev) + len(dv))), cls="compact"))
    return "\n".join(parts)


def provenance_section(run: Run) -> str:
    rows = []
    for kind, (fname, _, _, command) in FILES.items():
        doc = getattr(run, kind)
        if doc is None:
            rows.append([esc(fname), esc(command), "absent"])
            continue
        facts = [f"schema {doc.get('schema')}"]
        if kind == "bench":
            ctx = doc.get("context", {})
            facts += [f"profile: {doc.get('profile')}", f"filter: {doc.get('filter')}",
                      f"machine: {doc.get('machine')}", f"executable: {ctx.get('executable')}",
                      f"date: {ctx.get('date')}"]
        elif kind == "model":
            facts += [f"machine: {doc.get('machine')}", f"bench: {doc.get('bench')}"]
        elif kind == "machine":
            facts.append(f"created: {doc.get('created')}")
        rows.append([esc(fname), f"<code>{esc(command)}</code>", "<br>".join(esc(f) for f in facts)])
    return "<h2>Inputs</h2>" + table(["file", "written by", "details"], rows)


# ----------------------------------------------------------------------------- build

def load(run_dir, keep_going: bool = False) -> Run:
    """The run; without keep_going, any file the report reads that is there but unusable is an
    error before anything is drawn (with it, the file is named at the top and its part says
    what is wrong)."""
    run = load_run(run_dir, lenient=keep_going)
    unusable: dict[str, str] = {}
    files.check_present(run.run_dir, unusable if keep_going else None)
    run.invalid.update({k: f"{m} (not used)" for k, m in unusable.items()})
    if all(getattr(run, k) is None for k in FILES) and not run.invalid and not any(
            (run.run_dir / x).exists() for f in rd.FAMILIES for x in f.files + ("steps.json",)):
        raise RooflabDataError(f"{run.run_dir} holds none of {', '.join(f[0] for f in FILES.values())}: "
                               f"run `rooflab characterize`, `rooflab bench`, `rooflab model` first")
    return run


class Guard:
    """With --keep-going, a part of the report that fails (a malformed file, a reader's bug) is
    replaced by a warning naming the error, and the rest is still written; without it, the
    error propagates (exit 1). `problems` lists what was replaced."""

    def __init__(self, keep_going: bool):
        self.keep_going = keep_going
        self.problems: list[str] = []

    def __call__(self, what: str, fn, *args, fallback=None):
        if not self.keep_going:
            return fn(*args)
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - whatever broke, the rest of the report is still written
            msg = f"{what}: {type(e).__name__}: {e}"
            self.problems.append(msg)
            return fallback(msg) if callable(fallback) else fallback


def problem_note(msg: str) -> str:
    return note(f"this part of the report could not be built: {msg}", "warn")


def title_of(run: Run) -> str:
    host = (run.machine or {}).get("host", {}).get("hostname") or (run.bench or {}).get("context", {}).get("host_name")
    return f"rooflab report — {host or run.run_dir.name}"


def build(run_dir, out_dir=None, baseline: str | None = None, compare: gate.Options | None = None,
          keep_going: bool = False, problems: list[str] | None = None, history: str | None = None) -> Path:
    """Writes the report and returns index.html; with keep_going, what was replaced by a
    warning is appended to `problems`. history: a `rooflab history` store's URL (trends.html)."""
    g = Guard(keep_going)
    if problems is not None:
        g.problems = problems
    run = load(run_dir, keep_going)
    steps = g("steps.json", rd.steps, run)
    cmp = (g("comparison with the baseline", rd.compare_with, run, baseline, compare)
           if baseline else None)  # without --keep-going: fail before drawing
    hist = (g("the history", trends.load, history, trends.run_benchmarks(run)) if history else None)
    hrefs = trends.links(hist)
    out = Path(out_dir) if out_dir else run.run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    title = title_of(run)
    have = g("families with data", rd.families_with_data, run, fallback=[])
    nav = [("index.html", "Summary")] + [(report_pages.page_name(f), f.heading) for f in have] + \
          ([(trends.PAGE, "Trends")] if hist else []) + [("details.html", "Details")]
    drawn: set[str] = set()
    for f in have:
        body = g(f"the {f.heading} page", report_pages.family_page, run, f, out, drawn, hrefs,
                 fallback=lambda m: [f"<h1>{esc(f.heading)}</h1>", problem_note(m)])
        write_atomic(out / report_pages.page_name(f), page(f"{f.heading} — {title}", nav, report_pages.page_name(f), body))
    body = g("the details page", details_page, run, out, drawn, hrefs, fallback=lambda m: [problem_note(m)])
    write_atomic(out / "details.html", page(f"Details — {title}", nav, "details.html", body))
    if hist:
        body = g("the trends page", trends.page, hist, run, out, fallback=lambda m: [problem_note(m)])
        write_atomic(out / trends.PAGE, page(f"Trends — {title}", nav, trends.PAGE, body))
    index_body = [f"<h1>{esc(title)}</h1>", f'<p class="meta">run directory: <code>{esc(run.run_dir.resolve())}</code></p>']
    index_body.append(steps_section(steps, run.run_dir, out))
    index_body += [note(msg, "warn") for msg in run.invalid.values()]
    index_body += [note(msg) for kind, msg in run.missing.items() if kind not in run.invalid]
    for what, fn, args in (("self-diagnosis", diagnostics_section, (run,)), ("machine", machine_summary, (run,)),
                           ("roofline", roofline_section, (run, out, drawn)), ("comparison", comparison_section, (cmp,))):
        index_body.append(g(f"the {what} section", fn, *args, fallback=problem_note))
    rows = g("the claims ledger", claims_mod.evaluate, run.run_dir, keep_going, fallback=[])
    g("the claims' figures", claims_mod.draw_figures, rows, run.run_dir, out, drawn)
    index_body.append(g("the claims ledger", claims_section, rows, fallback=problem_note))
    index_body += [g("the families list", families_section, run, fallback=problem_note),
                   g("the trends section", trends.index_section, hist, fallback=problem_note) if hist else "",
                   g("the commands", commands_section, run, baseline, history, fallback=problem_note)]
    md = g("report.md", report_markdown.render, run, rows, cmp, steps,
           fallback=lambda m: report_markdown.minimal(run, steps, [m]))
    if g.problems:  # said at the top of both, after the steps
        index_body.insert(3, "".join(problem_note(p) for p in g.problems))
        md = report_markdown.with_problems(md, g.problems)
    write_atomic(out / "report.md", md)
    return write_atomic(out / "index.html", page(title, nav, "index.html", index_body))


def markdown(run_dir, baseline: str | None = None, compare: gate.Options | None = None) -> str:
    run = load(run_dir)
    cmp = rd.compare_with(run, baseline, compare) if baseline else None
    return report_markdown.render(run, claims_mod.evaluate(run.run_dir), cmp, rd.steps(run))


SYNOPSIS = ("RUN [--out DIR] [--baseline BASE [--metric time|efficiency] [--threshold X]] [--history DB] "
            "[--markdown] [--keep-going] | --fleet RUN [--out DIR] [--markdown]")


def main(argv=None) -> int:
    ap = cli.Parser("rooflab report", SYNOPSIS, description="The HTML report (and Markdown summary) of a "
                    "rooflab run directory.")
    ap.add_run_argument("run directory (machine.json, bench.json, model.json, counters.json, ...)")
    ap.add_argument("--out", help="output directory (default: RUN/report)")
    ap.add_argument("--baseline", metavar="BASE", help="a run directory or bench.json to compare RUN's bench.json "
                    "with (`rooflab compare BASE RUN`)")
    ap.add_argument("--metric", choices=gate.METRICS, help="comparison metric (rooflab compare's default: time)")
    ap.add_argument("--threshold", type=cli.finite_float,
                    help="relative slowdown flagged (rooflab compare's default: 0.10)")
    ap.add_argument("--history", metavar="DB", help="a `rooflab history` store (a SQLite path, sqlite:///PATH or "
                    "postgresql://...): adds trends.html, the run's benchmarks over that history with the change "
                    "points of `rooflab history check`, linked from each benchmark's row")
    ap.add_argument("--markdown", action="store_true", help="print the Markdown summary on stdout and write nothing "
                    "(the HTML build also writes it as OUT/report.md)")
    ap.add_argument("--fleet", action="store_true", help="RUN is a fleet: one run directory per machine, "
                    "RUN/<hostname>/ (machine.json; bench.json, model.json); writes the cross-machine report (machines "
                    "side by side: ceilings per level and ISA, best variant per family, efficiency, outliers among "
                    "nodes of the same CPU) as OUT/index.html and OUT/report.md (docs/report.md#fleet)")
    ap.add_argument("--keep-going", action="store_true", help="write the report even when an input file is "
                    "malformed or a part fails: that part becomes a warning at the top (exit 1 when there was one); "
                    "./run_all.sh uses it")

    def body(a) -> int:
        if (a.metric or a.threshold is not None) and not a.baseline:
            raise cli.UsageError("--metric and --threshold apply to the comparison: give --baseline BASE")
        if a.markdown and a.out:
            raise cli.UsageError("--markdown prints to stdout; --out is for the HTML report (which also writes "
                                 "report.md)")
        if a.markdown and (a.keep_going or a.history):
            raise cli.UsageError(f"{'--keep-going' if a.keep_going else '--history'} is for the HTML report")
        if a.fleet:
            extra = [o for o, given in (("--baseline", a.baseline), ("--history", a.history),
                                        ("--keep-going", a.keep_going), ("--metric", a.metric),
                                        ("--threshold", a.threshold is not None)) if given]
            if extra:
                raise cli.UsageError(f"{extra[0]} is for the report of one run, not --fleet")
            if a.markdown:
                sys.stdout.write(fleet.markdown(fleet.load_fleet(a.run)))
                return 0
            index = fleet.build(a.run, a.out)
            print(f"markdown summary: {index.parent / 'report.md'}")
            print(index)
            return 0
        opts = gate.Options(metric=a.metric or "time", threshold=0.10 if a.threshold is None else a.threshold)
        if (why := opts.problem()):
            raise cli.UsageError(why)
        if a.markdown:
            sys.stdout.write(markdown(a.run, a.baseline, opts))
            return 0
        problems: list[str] = []
        index = build(a.run, a.out, a.baseline, opts, keep_going=a.keep_going, problems=problems, history=a.history)
        for p in problems:
            cli.say(ap.prog, "warning", f"written without {p}")
        print(f"markdown summary: {index.parent / 'report.md'}")
        print(index)
        return 1 if problems else 0

    return cli.run(ap, body, argv)
