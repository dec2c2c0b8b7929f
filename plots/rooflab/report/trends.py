"""The report's trends page (trends.html, `rooflab report RUN --history DB`): the history of the
run's benchmarks from a `rooflab history` store. Per benchmark one figure (figures/trend.py:
time per machine, efficiency of every machine in one axes, cachegrind's counts where stored)
with the change points of `rooflab history check` (its code and defaults, without --since);
the machines the series come from; a table of the latest regressions and improvements. The
family pages link each benchmark row that has a history to its trend (links()).

Bounded: only the run's benchmarks are read from the store (a store may hold hundreds more),
and at most MAX_FIGURES are drawn, those with a regression in their latest segment first; the
others keep their anchor, in a table of their change points.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from rooflab.data.run import Run
from rooflab.figures import trend
from rooflab.history import changepoints, check
from rooflab.history.ingest import canonical_name
from rooflab.history.output import Verdict, describe
from rooflab.history.series import Series
from rooflab.history.store import Store, StoredRun
from rooflab.report.html import esc, figure, note, table

PAGE = "trends.html"
FIGURE_DIR = "trends"   # the trend PNGs, beside the pages in their own directory
MAX_FIGURES = 60        # a figure per benchmark beyond this makes the page too long to use
MAX_CHANGES = 40        # rows of the latest-changes table
METRICS = ("time", "efficiency", *check.DETERMINISTIC)


@dataclass
class History:
    where: str                      # the store, as it may be printed (Store: no password)
    runs: list[StoredRun]           # every run of the store, in its order
    machines: dict[str, dict]       # fingerprint -> facts
    verdicts: list[Verdict]         # one per series of the run's benchmarks; no changes without the detector
    detector: str | None            # why the change-point detector could not run, None when it ran
    asked: int                      # benchmarks of the run

    def benchmarks(self) -> list[str]:
        return sorted({v.result.series.benchmark for v in self.verdicts})


def run_benchmarks(run: Run) -> list[str]:
    """The run's benchmark names as the store keys them (Google Benchmark's run suffixes dropped)."""
    names = set()
    if run.model_df is not None:
        names |= {canonical_name(n) for n in run.model_df.name}
    if run.bench_df is not None:  # aggregates (..._median) are no benchmarks of their own
        names |= {canonical_name(n) for n in run.bench_df.name[run.bench_df.run_type != "aggregate"]}
    return sorted(names)


def load(url: str, benchmarks: list[str]) -> History:
    """Reads the series of `benchmarks` (every machine, time / efficiency / counts) and runs the
    check over them. A store that is not there or not usable is a StoreError (one line)."""
    with Store(url, create=False) as store:
        where = store.db.where
        runs, machines = store.runs(), store.machines()
        wanted = "^(?:" + "|".join(map(re.escape, benchmarks)) + ")$" if benchmarks else "^$.^"
        series = store.series(METRICS, benchmark_regex=wanted)
    why = changepoints.missing()
    if why is None:
        verdicts = check.evaluate(series)
    else:  # the series as the check would window them, without change points
        shown = [check.window(s, check.DEFAULT_LAST, None)
                 for s in sorted(series, key=lambda s: (s.benchmark, s.metric, s.machine))]
        verdicts = [Verdict(changepoints.Result(s, [], 0, sum(p.disturbed for p in s.points)), []) for s in shown]
    return History(where, runs, machines, verdicts, why, len(benchmarks))


def anchor(benchmark: str) -> str:
    return "trend-" + benchmark


def links(history: History | None) -> dict[str, str]:
    """benchmark -> the href of its trend, for the benchmarks the history has."""
    if history is None:
        return {}
    return {b: f"{PAGE}#{quote(anchor(b), safe='/:=.,+-_')}" for b in history.benchmarks()}


def name_cell(name: str, hrefs: dict[str, str]) -> str:
    """A results table's name cell: a link to the benchmark's trend when it has one."""
    href = hrefs.get(canonical_name(name))
    return f'<a href="{esc(href)}" title="trend over the history">{esc(name)}</a>' if href else esc(name)


def _file(benchmark: str) -> str:
    """A file name per benchmark: readable, and unique (names differ in characters the slug drops)."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "_", benchmark).strip("_")[:80]
    return f"{FIGURE_DIR}/trend_{slug}_{hashlib.sha1(benchmark.encode()).hexdigest()[:8]}.png"


def machine_label(fp: str, facts: dict) -> str:
    cpu = facts.get("cpu") or facts.get("name") or "?"
    return f"{fp[:8]} {cpu if len(cpu) <= 38 else cpu[:35] + '...'}"


def _machines_table(h: History, used: set[str]) -> str:
    runs_of: dict[str, int] = {}
    for r in h.runs:
        runs_of[r.machine] = runs_of.get(r.machine, 0) + 1
    rows = []
    for fp in sorted(used):
        f = h.machines.get(fp, {})
        caches = ", ".join(f"{lv} {v // 1024} KiB" for lv, v in (f.get("caches") or {}).items())
        rows.append([f"<code>{esc(fp)}</code>", esc(f.get("cpu") or f.get("name") or "?"), esc(f.get("vendor", "")),
                     esc(f.get("signature", "")), esc(f.get("threads", "")), esc(", ".join(f.get("isa") or [])),
                     esc(caches), esc(runs_of.get(fp, 0))])
    return ("<h2>Machines</h2><p class=\"meta\">A series belongs to one machine fingerprint (CPU model, "
            "vendor, CPUID signature, ISAs, threads, reported caches: docs/history.md); times are drawn per "
            "machine, efficiencies of every machine in one axes.</p>"
            + table(["fingerprint", "CPU", "vendor", "signature", "threads", "ISA", "caches", "runs stored"], rows,
                    num_cols={4, 7}, cls="compact"))


def _changes_table(h: History, hrefs: dict[str, str]) -> str:
    rows = [(v, c) for v in h.verdicts for c in v.result.changes]
    if h.detector:
        return "<h2>Latest regressions and improvements</h2>" + note(
            f"no change points: {h.detector}. The series are drawn without them.", "warn")
    if not rows:
        return ("<h2>Latest regressions and improvements</h2>"
                '<p class="meta">No change point in the series of this run\'s benchmarks.</p>')
    rows.sort(key=lambda vc: vc[1].after.timestamp, reverse=True)
    body, classes = [], []
    for v, c in rows[:MAX_CHANGES]:
        s = v.result.series
        kind, commits, size, p = describe(c)
        body.append([name_cell(s.benchmark, hrefs), esc(s.metric), f"<code>{esc(s.machine[:8])}</code>", esc(kind),
                     f"<code>{esc(commits)}</code>", esc(size), esc(p),
                     esc("yes" if c in v.gated else "")])
        classes.append("slower" if c.regression else "faster")
    more = f" (the latest {MAX_CHANGES} of {len(rows)})" if len(rows) > MAX_CHANGES else ""
    return (f"<h2>Latest regressions and improvements{esc(more)}</h2>"
            '<p class="meta">Newest first. Commits: last run before .. first run after the change; size: median '
            "after / median before - 1; \"now\": a regression the series still sits in (what `rooflab history "
            "check` without --since fails on).</p>"
            + table(["benchmark", "metric", "machine", "change", "commits", "size", "p", "now"], body, classes,
                    num_cols={5, 6}, cls="compact"))


def _order(h: History) -> tuple[dict[str, int], dict[int, str]]:
    x_of = {str(r.id): i for i, r in enumerate(h.runs)}
    return x_of, {i: (r.commit[:7] if r.commit else f"run {r.id}") for i, r in enumerate(h.runs)}


def page(h: History, run: Run, out_dir: Path) -> list[str]:
    """The body of trends.html; draws the figures into out_dir/trends/."""
    by_bench: dict[str, list[Verdict]] = {}
    for v in h.verdicts:
        by_bench.setdefault(v.result.series.benchmark, []).append(v)
    hrefs = links(h)
    labels = {fp: machine_label(fp, f) for fp, f in h.machines.items()}
    first, last = (h.runs[0], h.runs[-1]) if h.runs else (None, None)
    body = ["<h1>Trends over the history</h1>",
            f'<p class="meta">Store <code>{esc(h.where)}</code>: {len(h.runs)} runs'
            + (f" from {esc(first.timestamp)} to {esc(last.timestamp)}" if first else "")
            + f"; {len(by_bench)} of this run's {h.asked} benchmarks have a history. Change points: "
            f"<code>rooflab history check</code>'s detector and defaults on the latest {check.DEFAULT_LAST} "
            "runs of each series (E-Divisive means; docs/history_check.md).</p>"]
    if h.detector:
        body.append(note(f"change points not marked: {h.detector}", "warn"))
    if not by_bench:
        return body + [note(f"the history has none of this run's benchmarks: `rooflab history add "
                            f"{run.run_dir} --db DB --commit SHA` stores this run")]
    body.append(_changes_table(h, hrefs))
    body.append(_machines_table(h, {v.result.series.machine for v in h.verdicts}))
    # Most urgent first: a regression the series still sits in, then any change point, then by name.
    names = sorted(by_bench, key=lambda b: (not any(v.gated for v in by_bench[b]),
                                            not any(v.result.changes for v in by_bench[b]), b))
    drawn, rest = names[:MAX_FIGURES], names[MAX_FIGURES:]
    body.append(f"<h2>Trend per benchmark</h2>")
    if rest:
        body.append(note(f"{len(names)} benchmarks have a history; the first {MAX_FIGURES} are drawn (those with "
                         f"a regression now, then those with any change point, then by name); the other "
                         f"{len(rest)} are listed below with their change points."))
    x_of, ticks = _order(h)
    (out_dir / FIGURE_DIR).mkdir(parents=True, exist_ok=True)
    written = set()
    for b in drawn:
        vs = by_bench[b]
        lines = {m: [trend.Line(v.result.series, v.result.changes) for v in vs if v.result.series.metric in m]
                 for m in (("time",), ("efficiency",), check.DETERMINISTIC)}
        fname = _file(b)
        written.add(out_dir / fname)
        trend.plot(b, lines[("time",)], lines[("efficiency",)], lines[check.DETERMINISTIC], x_of, ticks, labels,
                   out_dir / fname)
        body.append(f'<section id="{esc(anchor(b))}">{figure(fname, b, _summary(vs, labels))}</section>')
    if rest:
        body.append("<h3>Not drawn</h3>" + _rest_table(rest, by_bench, labels))
    # A trend of an earlier report into this directory that this one does not show would only mislead.
    for stale in (out_dir / FIGURE_DIR).glob("trend_*.png"):
        if stale not in written:
            stale.unlink()
    return body


def _summary(vs: list[Verdict], labels: dict[str, str]) -> str:
    machines = sorted({v.result.series.machine for v in vs})
    points = max(len(v.result.series.points) for v in vs)
    changes = [f"{v.result.series.metric} {kind} {size} in {commits}"
               for v in vs for kind, commits, size, _ in map(describe, v.result.changes)]
    return (f"{len(machines)} machine{'s' if len(machines) != 1 else ''} ({'; '.join(labels.get(m, m) for m in machines)}); "
            f"up to {points} runs a series; " + ("change points: " + ", ".join(changes) if changes else "no change point"))


def _rest_table(names: list[str], by_bench: dict[str, list[Verdict]], labels: dict[str, str]) -> str:
    rows = "".join(f'<tr id="{esc(anchor(b))}"><td>{esc(b)}</td><td>{esc(_summary(by_bench[b], labels))}</td></tr>'
                   for b in names)
    return ('<table class="compact"><thead><tr><th>benchmark</th><th>series</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def index_section(h: History) -> str:
    """The index page's pointer to the trends page, with what it found."""
    regress = sorted({v.result.series.benchmark for v in h.verdicts if v.gated})
    what = ("change points not marked (the detector is missing)" if h.detector else
            f"{len(regress)} with a regression in its latest segment" + (": " + ", ".join(regress[:5]) +
                                                                        (" ..." if len(regress) > 5 else "")
                                                                        if regress else ""))
    return (f'<h2>Trends</h2><p><a href="{PAGE}">Trends over the history</a> <span class="meta">— '
            f"{esc(len(h.benchmarks()))} of this run's {esc(h.asked)} benchmarks in <code>{esc(h.where)}</code>; "
            f"{esc(what)}.</span></p>")


__all__ = ["History", "load", "page", "links", "name_cell", "index_section", "run_benchmarks", "PAGE"]
