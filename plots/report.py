"""Static HTML report of a run directory: machine summary, figures, results and counters.

    python3 plots/report.py --run DIR [--out DIR/report]

Writes OUT/index.html and the figures' PNGs beside it; prints the index.html path as its
last line. Parts whose input file is missing are replaced by a visible note naming the
command that produces it; a malformed or wrong-version file is an error (exit 2).
"""
from __future__ import annotations

import argparse
import html
import math
import sys
from pathlib import Path

import pandas as pd

import attained_vs_predicted
import bandwidth
import cache_misses
import figure_common as fc
import fw_performance
import gpu_roofline
import gpu_sweep
import mpi_report
import gemm_l2_misses
import gemm_performance
import gemm_whm
import gemm_knobs
import pot_compare
import roofline
import rtamm_figures
import sinkhorn_breakdown
import sinkhorn_iteration
from bandwidth import human_bytes
from rooflab_data import FILES, LEVELS, RooflabDataError, Run, load_run

KERNEL_ORDER = ["read", "copy", "update", "triad", "copy_nt", "triad_nt"]
FIGURES = [  # (file, title, module, files it needs)
    ("roofline.png", "Roofline", roofline, ("machine", "model")),
    ("attained_vs_predicted.png", "Measured vs predicted time", attained_vs_predicted, ("model",)),
    ("bandwidth.png", "Bandwidth vs working-set size", bandwidth, ("machine",)),
    ("cache_misses.png", "Cache misses", cache_misses, ("counters",)),
]
# Per-family sections after the general figures: (family, heading, figures, table cell).
FAMILY_SECTIONS = [
    ("sinkhorn", "Sinkhorn", [
        ("sinkhorn_breakdown.png", "Column-rescaling breakdown (COFFEE Fig. 12)", sinkhorn_breakdown),
        ("sinkhorn_iteration.png", "Per-iteration time, DRAM bandwidth fraction, thread scaling", sinkhorn_iteration),
        ("pot_compare.png", "POT vs rooflab on the same problem (MAP-UOT Fig. 9)", pot_compare)],
     "median time"),
    ("sinkhorn_cuda", "Sinkhorn on a CUDA device", [
        ("gpu_roofline.png", "GPU roofline from the measured device ceilings; DRAM copy fraction", gpu_roofline),
        ("gpu_sweep.png", "Tile-parameter sweep of parts 2 and 4 (MAP-UOT Fig. 8)", gpu_sweep)],
     "median time"),
    ("floyd_warshall", "Floyd-Warshall", [
        ("fw_performance.png", "GFLOP/s vs N, add+min ceiling and ablations", fw_performance)],
     "GFLOP/s"),
    ("gemm", "GEMM", [
        ("gemm_performance.png", "GFLOP/s per shape sorted by operational intensity, with the roofline (SFC-CA Fig. 6/9)",
         gemm_performance),
        ("gemm_whm.png", "Flop-weighted harmonic mean (WHM) per implementation and the targets", gemm_whm),
        ("gemm_l2_misses.png", "Simulated L2 misses: SFC-CA k_layers 1/2/4 vs the best baseline (SFC-CA Fig. 7)",
         gemm_l2_misses)],
     "GFLOP/s"),
]
CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1300px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { background: #fde2e2; color: #9b0000; } tr.skipped td { color: #777; background: #f6f6f6; }
.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.4em 0.8em; margin: 0.6em 0; }
.warn { background: #fde2e2; border-left: 4px solid #c00; padding: 0.4em 0.8em; margin: 0.6em 0; }
.meta { color: #555; } code { background: #f3f3f3; padding: 0 0.25em; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-weight: 600; margin-bottom: 0.3em; }
.scroll { overflow-x: auto; } table.compact { font-size: 0.85em; } table.compact td { padding: 0.15em 0.45em; }
"""


def esc(v) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fmt_num(v, digits: int = 3) -> str:
    return "—" if missing(v) else f"{v:.{digits}g}"


def fmt_time(s) -> str:
    if missing(s):
        return "—"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= f or unit == "ns":
            return f"{s / f:.3g} {unit}"
    return str(s)


def table(headers: list[str], rows: list[list[str]], row_classes: list[str] | None = None,
          num_cols: set[int] = frozenset()) -> str:
    """rows hold already-escaped HTML cell contents."""
    out = ["<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>"]
    for i, r in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(f'<td class="num">{c}</td>' if j in num_cols else f"<td>{c}</td>"
                                          for j, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def note(text: str, cls: str = "note") -> str:
    return f'<div class="{cls}">{esc(text)}</div>'


# ----------------------------------------------------------------------------- sections

def machine_section(run: Run) -> str:
    if run.machine is None:
        return "<h2>Machine</h2>" + note(run.missing["machine"])
    m, dfs = run.machine, run.machine_df
    host = m.get("host", {})
    parts = ["<h2>Machine</h2>"]
    virt = host.get("virtualized")
    parts.append(table(["field", "value"], [
        ["host", esc(host.get("hostname"))], ["CPU", esc(host.get("cpu"))],
        ["cores / threads", esc(f"{host.get('cores')} / {host.get('threads')}")],
        ["ISA", esc(", ".join(host.get("isa", [])))],
        ["virtualized", esc("unknown" if virt is None else
                            ("yes" + (f" ({host.get('hypervisor')})" if host.get("hypervisor") else "")) if virt else "no")],
        ["characterized", esc(f"{m.get('created', '?')} by rooflab {m.get('rooflab_version', '?')} "
                              f"({m.get('build_type', '?')} build)")],
    ]))
    if virt:
        parts.append(note("Virtual machine: reported cache sizes and counters may not match the hardware; "
                          "the model uses the measured capacities."))
    if m.get("build_type") not in (None, "Release", "RelWithDebInfo"):
        parts.append(note(f"Characterized with a {m.get('build_type')} build: ceilings are not representative.", "warn"))

    caches = m.get("caches", {})
    parts.append("<h3>Cache capacities</h3>")
    parts.append(table(
        ["level", f"reported ({caches.get('reported', {}).get('source', '?')})",
         f"measured ({caches.get('measured', {}).get('source', '?')})"],
        [[esc(r.level), esc("—" if missing(r.reported) else human_bytes(r.reported)),
          esc("—" if missing(r.measured) else human_bytes(r.measured))] for _, r in dfs["caches"].iterrows()]))
    for w in caches.get("warnings", []):
        parts.append(note(f"warning: {w}", "warn"))

    lv = dfs["levels"]
    parts.append("<h3>Bandwidth ceilings (GB/s)</h3>")
    wa = m.get("bandwidth", {}).get("write_allocate_counted")
    if wa is not None:
        parts.append(f'<p class="meta">Write-allocate traffic {"is" if wa else "is not"} counted.</p>')
    if lv.empty:
        parts.append(note("bandwidth.levels is empty"))
    else:
        # One row per level, one column per kernel and thread count: fits a laptop screen.
        threads = sorted(lv.threads.unique())
        kernels = sorted(lv.kernel.unique(), key=lambda k: (KERNEL_ORDER.index(k) if k in KERNEL_ORDER else 99, k))
        cols = [(k, t) for k in kernels for t in threads if ((lv.kernel == k) & (lv.threads == t)).any()]
        rows = []
        for level in [x for x in LEVELS if (lv.level == x).any()]:
            cells = []
            for k, t in cols:
                v = lv.loc[(lv.level == level) & (lv.kernel == k) & (lv.threads == t), "gbps"]
                cells.append("—" if v.empty else esc(fmt_num(float(v.iloc[0]), 4)) +
                             (" ⚠ not a measurement" if float(v.iloc[0]) <= 0 else ""))
            rows.append([esc(level)] + cells)
        parts.append(table(["level"] + [f"{k} {t}T" for k, t in cols], rows, num_cols=set(range(1, 1 + len(cols)))))

    comp = dfs["compute"]
    raw_keys = list(m.get("compute", {}).get("ceilings", {}))
    parts.append(f"<h3>Compute ceilings (GFLOP/s, ISA {esc(m.get('compute', {}).get('isa', '?'))})</h3>")
    threads = sorted(comp.threads.unique()) if not comp.empty else []
    rows = []
    for key in raw_keys:
        g = comp[comp.key == key]
        if g.empty:
            rows.append([esc(key)] + ["not measured"] * max(1, len(threads)))
            continue
        rows.append([esc(key)] + ["—" if (v := g.loc[g.threads == t, "gflops"]).empty else esc(fmt_num(float(v.iloc[0]), 4))
                                  for t in threads])
    parts.append(table(["ceiling"] + ([f"{t} thread{'s' if t > 1 else ''}" for t in threads] or ["value"]), rows,
                       num_cols=set(range(1, 1 + len(threads)))))

    lb = m.get("likwid_bench")
    if isinstance(lb, dict):
        parts.append("<h3>Cross-check with likwid-bench</h3>")
        if lb.get("available"):
            pts = lb.get("points", [])
            parts.append(table(["kernel", "bytes", "threads", "likwid-bench GB/s", "rooflab GB/s"],
                               [[esc(p.get("kernel")), esc(human_bytes(p.get("bytes", 0))), esc(p.get("threads")),
                                 esc(fmt_num(p.get("gbps"))), esc(fmt_num(p.get("rooflab_gbps")))] for p in pts],
                               num_cols={1, 2, 3, 4}))
        else:
            parts.append(note(f"likwid-bench not used: {lb.get('reason', 'no reason given')}"))
    method = m.get("method")
    if isinstance(method, dict) and method:
        parts.append("<h3>Method</h3>" + table(["what", "how"], [[esc(k), esc(v)] for k, v in method.items()]))
    return "\n".join(parts)


def figures_section(run: Run, out_dir: Path) -> str:
    parts = ["<h2>Figures</h2>"]
    for fname, title, module, needs in FIGURES:
        absent = [run.missing[k] for k in needs if k in run.missing]
        if absent:
            parts.append(f"<h3>{esc(title)}</h3>" + note("not drawn: " + "; ".join(absent)))
            continue
        try:
            module.plot(run.run_dir, out_dir / fname)
        except RooflabDataError as e:
            parts.append(f"<h3>{esc(title)}</h3>" + note(f"not drawn: {e}", "warn"))
            continue
        parts.append(f'<figure><figcaption>{esc(title)}</figcaption>'
                     f'<img src="{esc(fname)}" alt="{esc(title)}"></figure>')
    return "\n".join(parts)


def family_table(fam: pd.DataFrame, cell: str) -> str:
    """One row per variant/ISA and parameters, one column per dtype, size and thread count: the
    median time (Sinkhorn) or GFLOP/s (Floyd-Warshall) of each ok row, with its efficiency."""
    ok = fam[fam.status == "ok"]
    if ok.empty:
        return ""
    def key(r) -> str:  # the benchmark name without family, dtype, size and threads, in name order
        parts = r["name"].split("/")[1:-1]
        return "/".join(p for p in parts if p not in (r["dtype"], fc.dims_label(r.dims)))
    col = lambda r: f"{r['dtype']} {fc.dims_label(r.dims)} {r.threads}T"
    cells = {(key(r), col(r)): r for _, r in ok.iterrows()}
    rows_k = sorted({k for k, _ in cells})
    cols = sorted({c for _, c in cells}, key=lambda c: (c.split()[0], int(c.split()[2][:-1]),
                                                        [int(x) for x in c.split()[1].split("x")]))
    body = []
    for k in rows_k:
        line = [esc(k)]
        for c in cols:
            r = cells.get((k, c))
            if r is None:
                line.append("")
                continue
            v = fmt_time(r.median_s) if cell == "median time" else f"{fmt_num(r.gflops)}"
            eff = "" if missing(r.efficiency) else f' <span class="meta">({r.efficiency:.2f})</span>'
            line.append(esc(v) + eff)
        body.append(line)
    return (f'<p class="meta">{esc(cell)} per case (efficiency = predicted / measured time in parentheses).</p>'
            '<div class="scroll">' + table(["variant/isa, parameters"] + cols, body,
                                           num_cols=set(range(1, 1 + len(cols)))).replace("<table>", '<table class="compact">', 1)
            + "</div>")


def family_sections(run: Run, out_dir: Path) -> str:
    parts = []
    for family, heading, figures, cell in FAMILY_SECTIONS:
        parts.append(f"<h2>{esc(heading)}</h2>")
        if run.model_df is None:
            parts.append(note(f"not drawn: {run.missing['model']}"))
            continue
        fam = run.model_df[run.model_df.family == family]
        if fam.empty:
            parts.append(note(f"no {family} benchmarks in this run"))
            continue
        for fname, title, module in figures:
            try:
                module.plot(run.run_dir, out_dir / fname)
            except RooflabDataError as e:
                parts.append(f"<h3>{esc(title)}</h3>" + note(f"not drawn: {e}", "warn"))
                continue
            parts.append(f'<figure><figcaption>{esc(title)}</figcaption>'
                         f'<img src="{esc(fname)}" alt="{esc(title)}"></figure>')
        parts.append(family_table(fam, cell))
        bad = fam[fam.status != "ok"]
        if not bad.empty:
            parts.append("<h3>Not plotted</h3>" + table(
                ["name", "status", "message"], [[esc(r["name"]), esc(r.status), esc(r.message)] for _, r in bad.iterrows()],
                [r.status for _, r in bad.iterrows()]))
    return "\n".join(parts)


def results_section(run: Run) -> str:
    if run.model_df is None:
        return "<h2>Results</h2>" + note(run.missing["model"])
    df = run.model_df
    rows, classes = [], []
    for _, r in df.iterrows():
        bound = "—" if missing(r.bound) and missing(r.level) else f"{r.bound or '?'}/{r.level or '?'}"
        rows.append([esc(r["name"]), esc(r.status), esc(fmt_time(r.median_s)), esc(fmt_num(r.gflops)),
                     esc(fmt_num(r.gbps)), esc(fmt_time(r.predicted_s)), esc(bound),
                     esc("—" if missing(r.efficiency) else f"{r.efficiency:.2f}"), esc(r.message)])
        classes.append(r.status if r.status in ("failed", "skipped") else "")
    counts = df.status.value_counts()
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    return ("<h2>Results</h2>"
            f'<p class="meta">{len(df)} rows ({esc(summary)}). Efficiency = predicted / measured time '
            f"(1.0 = on the roofline); GFLOP/s and GB/s are attained.</p>" +
            table(["name", "status", "median time", "GFLOP/s", "GB/s", "predicted time", "bound / level",
                   "efficiency", "message"], rows, classes, num_cols={2, 3, 4, 5, 7}))


def counters_section(run: Run) -> str:
    if run.counters_df is None:
        return "<h2>Counters</h2>" + note(run.missing["counters"])
    backends, rows = run.counters_df["backends"], run.counters_df["rows"]
    parts = ["<h2>Counters</h2>",
             table(["back end", "available", "reason / configuration"],
                   [[esc(b["name"]), esc("yes" if b.available else "no"),
                     esc(b.reason if not b.available else
                         ", ".join(f"{k}={v}" for k, v in b.config.items()) or "")]
                    for _, b in backends.iterrows()],
                   ["" if b.available else "skipped" for _, b in backends.iterrows()])]
    if rows.empty:
        parts.append(note("no counter rows: no back end was available (see the reasons above)"))
        return "\n".join(parts)
    ev, dv = rows.attrs["event_keys"], rows.attrs["derived_keys"]
    body = [[esc(r["name"]), esc(r.backend), esc(r.runs)] +
            [esc(fmt_num(r[("events", k)], 4)) for k in ev] + [esc(fmt_num(r[("derived", k)], 3)) for k in dv]
            for _, r in rows.iterrows()]
    parts.append('<p class="meta">Events are per timed run, averaged over the runs; — = not reported by '
                 "that back end.</p>")
    parts.append(table(["name", "back end", "runs"] + ev + dv, body, num_cols=set(range(2, 3 + len(ev) + len(dv)))))
    return "\n".join(parts)


def provenance_section(run: Run) -> str:
    rows = []
    for kind, (fname, _, _, command) in FILES.items():
        doc = getattr(run, kind)
        if doc is None:
            rows.append([esc(fname), esc(command), "absent"])
            continue
        facts = [f"schema {doc.get('schema')}"]
        for key in ("command", "argv"):  # recorded command line, when the writer stores one
            v = doc.get(key)
            if v:
                facts.append(f"{key}: {' '.join(map(str, v)) if isinstance(v, list) else v}")
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
    return "<h2>Commands and inputs</h2>" + table(["file", "written by", "details"], rows)


def diagnostics_section(run: Run) -> str:
    """Self-diagnosis recorded by `rooflab characterize` and `rooflab bench` (as nanobench
    warns): unoptimized build, load, clock not fixed, VM without counters, unstable timings,
    too few repetitions for `rooflab compare`."""
    items = [("characterize", w) for w in (run.machine or {}).get("diagnostics", [])]
    items += [("bench", w) for w in (run.bench or {}).get("diagnostics", [])]
    if not items:
        return ""
    return "<h2>Self-diagnosis</h2>" + "\n".join(note(f"{src}: {w}", "warn") for src, w in items)


def build(run_dir, out_dir=None) -> Path:
    run = load_run(run_dir)
    out = Path(out_dir) if out_dir else run.run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    if all(getattr(run, k) is None for k in FILES):
        raise RooflabDataError(f"{run.run_dir} holds none of {', '.join(f[0] for f in FILES.values())}: "
                               f"run `rooflab characterize`, `rooflab bench`, `rooflab model` first")
    host = (run.machine or {}).get("host", {}).get("hostname") or (run.bench or {}).get("context", {}).get("host_name")
    title = f"rooflab report — {host or run.run_dir.name}"
    body = [f"<h1>{esc(title)}</h1>", f'<p class="meta">run directory: <code>{esc(run.run_dir.resolve())}</code></p>']
    body += [note(msg) for msg in run.missing.values()]
    body.append(diagnostics_section(run))
    body += [machine_section(run), figures_section(run, out), family_sections(run, out), results_section(run),
             counters_section(run), gemm_knobs.report_section(run.run_dir, out), rtamm_figures.report_section(run.run_dir, out),
             mpi_report.section(run.run_dir, out),
             provenance_section(run)]
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    index = out / "index.html"
    tmp = out / "index.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(index)  # atomic, like every other rooflab output
    return index


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Write the HTML report of a rooflab run directory.")
    ap.add_argument("--run", required=True, help="run directory")
    ap.add_argument("--out", help="output directory (default: RUN/report)")
    args = ap.parse_args(argv)
    try:
        index = build(args.run, args.out)
    except RooflabDataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
