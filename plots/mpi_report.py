"""The report's "Sinkhorn on MPI" section: the calibrated model, the three MPI figures and a
predicted-vs-measured table, from RUN/mpi_sweep.json; a note naming the command when absent."""
from __future__ import annotations

from pathlib import Path

import mpi_breakdown
import mpi_data
import mpi_model
import mpi_scaling
from rooflab_data import RooflabDataError

FIGURES = [
    ("mpi_scaling.png", "Time per iteration vs ranks (COFFEE Figs. 13/14)", mpi_scaling),
    ("mpi_breakdown.png", "Reduce optimization vs overlap (COFFEE Fig. 16)", mpi_breakdown),
    ("mpi_model.png", "Communication model: predicted vs measured", mpi_model),
]


def section(run_dir, out_dir) -> str:
    from report import esc, fmt_num, fmt_time, note, table  # the report's HTML helpers

    parts = ["<h2>Sinkhorn on MPI</h2>"]
    if not (Path(run_dir) / "mpi_sweep.json").exists():
        return "\n".join(parts + [note(f"not drawn: no mpi_sweep.json: run scripts/mpi_sweep.sh --run {run_dir}")])
    try:
        sw = mpi_data.load(run_dir)
    except RooflabDataError as e:
        return "\n".join(parts + [note(f"not drawn: {e}", "warn")])
    pp = sw.pingpong
    fit = pp.get("fit", {})
    parts.append(f'<p class="meta">{esc(sw.doc.get("command", ""))} — {esc(sw.doc.get("note", ""))}</p>')
    parts.append(table(["model term", "value", "how"], [
        ["alpha (latency)", esc(fmt_time(pp.get("alpha_s"))), esc(f"ping-pong ranks {pp.get('pingpong_ranks')}, "
                                                                  f"hosts {pp.get('hosts')}")],
        ["beta (bandwidth)", esc(f"{fmt_num(pp.get('beta_bytes_per_s', float('nan')) / 1e9)} GB/s"),
         esc(f"fit over {fit.get('sizes_bytes')} bytes: rms rel. err {fmt_num(fit.get('rms_rel_err'))}, "
             f"max {fmt_num(fit.get('max_rel_err'))}")],
        ["gamma (reduction)", esc(f"{fmt_num(pp.get('gamma_s_per_byte', float('nan')) * 1e9)} ns/byte"), esc("a += b")],
        ["MPI_Allreduce check", esc(f"rms rel. err {fmt_num(pp.get('allreduce', {}).get('rms_rel_err'))}"),
         esc(f"{pp.get('allreduce', {}).get('ranks')} ranks, {pp.get('mpi_library', '')}")],
    ]))
    if sw.cpus and int(sw.runs.ranks.max()) > sw.cpus:
        parts.append(note(f"Runs with more than {sw.cpus} ranks share {sw.cpus} CPUs: they measure "
                          "oversubscription (the scheduler), not the allreduce designs."))
    for fname, title, module in FIGURES:
        try:
            module.plot(run_dir, Path(out_dir) / fname)
        except RooflabDataError as e:
            parts.append(f"<h3>{esc(title)}</h3>" + note(f"not drawn: {e}", "warn"))
            continue
        parts.append(f'<figure><figcaption>{esc(title)}</figcaption><img src="{esc(fname)}" alt="{esc(title)}"></figure>')
    c = mpi_model.comm_rows(sw.runs)
    if not c.empty:
        rows = [[esc(r.design), esc(r.ranks), esc(r.ranks_per_node), esc(r.chunks), esc(fmt_time(r.predicted_comm_s)),
                 esc(fmt_time(r.comm_time_per_iter_s)), esc(f"{r.ratio:.2f}"),
                 esc("yes" if r.oversubscribed else "no")] for r in c.itertuples()]
        parts.append("<h3>Allreduce alone: predicted vs measured</h3>" + table(
            ["design", "P", "R", "chunks", "predicted", "measured", "measured / predicted", "oversubscribed"], rows,
            ["skipped" if r.oversubscribed else "" for r in c.itertuples()], num_cols={1, 2, 3, 4, 5, 6}))
    return "\n".join(parts)
