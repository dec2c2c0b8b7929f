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
    ("mpi_model.png", "Model from measured constants: predicted vs measured", mpi_model),
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
    failed = mpi_data.failed_lines(sw.doc)
    if failed:  # failed runs are absent from the figures and tables below, never zeros
        parts.append(note(f"{len(failed)} run(s) failed and are missing below: " + "; ".join(failed), "warn"))
    if sw.doc.get("model_error"):
        parts.append(note(f"model: {sw.doc['model_error']}", "warn"))
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
    ts = sw.timeslice
    if ts:
        parts.append(table(["core sharing", "value", "how"], [
            ["turn of a busy-polling rank", esc(fmt_time(ts.get("spin_gap_s"))),
             esc(f"--timeslice, {ts.get('ranks')} ranks on {ts.get('cpus')} CPUs: median jump of a spinning clock")],
            ["MPI_Test + sched_yield turn", esc(fmt_time(ts.get("yield_round_s"))), esc("--timeslice, same ranks")],
        ]))
    if sw.cpus and int(sw.runs.ranks.max()) > sw.cpus:
        parts.append(note(f"Runs with more than {sw.cpus} ranks share {sw.cpus} CPUs (oversubscription): MPICH's "
                          "ranks busy-poll, so a rank that waits for a message keeps its core until the scheduler's "
                          "slice ends, and each message round can cost a slice. The --wait yield runs hand the core "
                          "over instead; the model (plots/mpi_predict.py) charges rounds x (ranks per core - 1) "
                          "x the measured turn."))
    for fname, title, module in FIGURES:
        try:
            module.plot(run_dir, Path(out_dir) / fname)
        except RooflabDataError as e:
            parts.append(f"<h3>{esc(title)}</h3>" + note(f"not drawn: {e}", "warn"))
            continue
        parts.append(f'<figure><figcaption>{esc(title)}</figcaption><img src="{esc(fname)}" alt="{esc(title)}"></figure>')
    t = sw.model_table()
    if not t.empty:
        def ratio(x):
            return "—" if x != x else f"{x:.2f}"  # NaN: no --comm-only twin

        rows = [[esc(r.design), esc(r.ranks), esc(r.ranks_per_node), esc(r.chunks),
                 esc(mpi_data.variant_label(r) if r.design == "coffee" else ""), esc(r.regime),
                 esc(r.rounds), esc(fmt_time(r.predicted_comm_s)), esc(fmt_time(r.measured_comm_s)),
                 esc(ratio(r.comm_ratio)), esc(fmt_time(r.predicted_iter_s)), esc(fmt_time(r.measured_iter_s)),
                 esc(ratio(r.iter_ratio))]
                for r in t.itertuples()]
        parts.append("<h3>Predicted vs measured (communication: the --comm-only twin of each run)</h3>" + table(
            ["design", "P", "R", "chunks", "variant", "regime", "rounds", "comm predicted", "comm measured",
             "measured / predicted", "iteration predicted", "iteration measured", "measured / predicted"], rows,
            num_cols={1, 2, 3, 6, 7, 8, 9, 10, 11, 12}))
    return "\n".join(parts)
