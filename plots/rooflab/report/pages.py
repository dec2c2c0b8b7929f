"""The report's per-family pages (<family>.html beside index.html): summary tables, the
family's figures and sections, its results, and the command that re-times each benchmark."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from rooflab.data.run import Run
from rooflab.figures import (common as fc, fw_performance, gemm_l2_misses, gemm_performance, gemm_whm, gpu_roofline,
                             gpu_sweep, pot_compare, sinkhorn_breakdown, sinkhorn_iteration)
from rooflab.report import sections, trends
from rooflab.report.html import draw, esc, fmt_num, fmt_time, missing, note, table, text_table
from rooflab.report.tables import (FAMILIES, RESULTS_HEAD, Family, case_command, commands, family_rows, results_rows,
                                   summary_tables)

# family key -> (figures [(file, title, module)], cell of the compact table, sections [fn(run_dir, out_dir) -> html])
CONTENT = {
    "sinkhorn": ([("sinkhorn_breakdown.png", "Column-rescaling breakdown (COFFEE Fig. 12)", sinkhorn_breakdown),
                  ("sinkhorn_iteration.png", "Per-iteration time, DRAM bandwidth fraction, thread scaling",
                   sinkhorn_iteration),
                  ("pot_compare.png", "POT vs rooflab on the same problem (MAP-UOT Fig. 9)", pot_compare)],
                 "median time", []),
    "floyd_warshall": ([("fw_performance.png", "GFLOP/s vs N, add+min ceiling and ablations", fw_performance)],
                       "GFLOP/s", []),
    "gemm": ([("gemm_performance.png", "GFLOP/s per shape sorted by operational intensity, with the roofline "
               "(SFC-CA Fig. 6/9)", gemm_performance),
              ("gemm_whm.png", "Flop-weighted harmonic mean (WHM) per implementation and the targets", gemm_whm),
              ("gemm_l2_misses.png", "Simulated L2 misses: SFC-CA k_layers 1/2/4 vs the best baseline (SFC-CA Fig. 7)",
               gemm_l2_misses)],
             "GFLOP/s", [sections.gemm_baselines_section, sections.gemm_knobs_section]),
    "rtamm": ([], "median time", [sections.rtamm_section]),
    "mpi": ([], "median time", [sections.mpi_section]),
    "gpu": ([("gpu_roofline.png", "GPU roofline from the measured device ceilings; DRAM copy fraction", gpu_roofline),
             ("gpu_sweep.png", "Tile-parameter sweep of parts 2 and 4 (MAP-UOT Fig. 8)", gpu_sweep)],
            "median time", []),
}
# Figures each section function draws (so the claims ledger does not draw them again).
SECTION_FIGURES = {sections.gemm_baselines_section: [], sections.gemm_knobs_section: ["gemm_knobs.png"], sections.rtamm_section: ["rtamm.png"],
                   sections.mpi_section: [f for f, _, _ in sections.FIGURES]}
FAMILY_FILES = {  # the command rows of report_data.commands() that belong to a family's page
    "sinkhorn": ("bench.json", "model.json", "pot_compare.json"), "floyd_warshall": ("bench.json", "model.json"),
    "gemm": ("bench.json", "model.json", "gemm_knobs.json", "gemm_l2/counters.json"),
    "rtamm": ("rtamm.json",), "mpi": ("mpi_sweep.json",), "gpu": ("bench.json", "model.json", 'machine.json "gpu"', "machine.gpu.json"),
}


def family_table(fam: pd.DataFrame, cell: str) -> str:
    """One row per variant/ISA and parameters, one column per dtype, size and thread count: the
    median time (Sinkhorn) or GFLOP/s (Floyd-Warshall, GEMM) of each ok row, with its efficiency."""
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
    return (f'<h3>{esc(cell)} per case</h3><p class="meta">Efficiency = predicted / measured time in parentheses '
            "(1.0 = on the roofline).</p>" +
            table(["variant/isa, parameters"] + cols, body, num_cols=set(range(1, 1 + len(cols))), cls="compact"))


def commands_html(run: Run, fam: Family, rows: pd.DataFrame) -> str:
    files = FAMILY_FILES[fam.key]
    parts = ["<h2>Commands to reproduce these numbers</h2>",
             table(["file", "command"], [[esc(f), f"<code>{esc(c)}</code>"] for f, c in commands(run) if f in files])]
    ok = rows[rows.status == "ok"] if not rows.empty else rows
    if not ok.empty:
        cmds = "\n".join(case_command(run, r["name"], r.repetitions) for _, r in ok.iterrows())
        parts.append(f"<details><summary>Re-time one benchmark ({len(ok)} commands; DIR = a new directory)</summary>"
                     f"<pre>{esc(cmds)}</pre></details>")
    return "\n".join(parts)


def results_cells(rows: pd.DataFrame, trend_links: dict[str, str]) -> list[list[str]]:
    """The results table's cells (HTML): the name links to the benchmark's trend when it has one."""
    return [[trends.name_cell(r[0], trend_links)] + [esc(c) for c in r[1:]] for r in results_rows(rows)]


def family_page(run: Run, fam: Family, out_dir: Path, drawn: set[str],
                trend_links: dict[str, str] | None = None) -> list[str]:
    """The body of <fam.key>.html; adds each figure drawn to `drawn`. trend_links: benchmark ->
    its trend's href (trends.links), for the rows of the results table."""
    figures, cell, sections = CONTENT[fam.key]
    rows = family_rows(run, fam)
    body = [f"<h1>{esc(fam.heading)}</h1>", f'<p class="meta">run directory: <code>{esc(run.run_dir.resolve())}</code></p>']
    for title, head, trows in summary_tables(run, fam):
        body.append(f"<h2>{esc(title)}</h2>" + text_table(head, trows))
    if figures and run.model_df is None:
        body.append(note(f"figures not drawn: {run.missing['model']}"))
    elif figures:
        body.append("<h2>Figures</h2>")
        body += [draw(module, run.run_dir, out_dir, fname, title, drawn) for fname, title, module in figures]
    for section in sections:
        body.append(section(run.run_dir, out_dir))
        drawn.update(f for f in SECTION_FIGURES[section] if (out_dir / f).is_file())
    if not rows.empty:
        body.append(family_table(rows, cell))
        body.append("<h2>Results</h2>" + table(
            RESULTS_HEAD, results_cells(rows, trend_links or {}),
            [s if s in ("failed", "skipped") else "" for s in rows.status], num_cols={2, 3, 4, 5, 7}, cls="compact"))
    body.append(commands_html(run, fam, rows))
    return body


def page_name(fam: Family) -> str:
    return f"{fam.key}.html"


__all__ = ["FAMILIES", "family_page", "family_table", "page_name"]
