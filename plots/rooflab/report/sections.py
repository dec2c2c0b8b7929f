"""The report's family sections that carry their own tables beside their figures: Sinkhorn on
MPI (RUN/mpi_sweep.json), GEMM knob selection (RUN/gemm_knobs.json), the GEMM libraries' code
paths (RUN/bench.json), RTAMM (RUN/rtamm.json).
Each is fn(run_dir, out_dir) -> HTML; a file that is absent or unusable is a note naming the
command that writes it (`report` refuses an unusable one before drawing, unless --keep-going)."""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from rooflab.data import gemm as gemm_data, mpi as mpi_data
from rooflab.data.jsonfile import RooflabDataError
from rooflab.data.run import read_json
from rooflab.figures import gemm_knobs, mpi_breakdown, mpi_model, mpi_scaling, mpi_witness, rtamm
from rooflab.report.html import esc, fmt_num, fmt_time, not_drawn, note, table

FIGURES = [
    ("mpi_scaling.png", "Time per iteration vs ranks (COFFEE Figs. 13/14)", mpi_scaling),
    ("mpi_breakdown.png", "Reduce optimization vs overlap (COFFEE Fig. 16)", mpi_breakdown),
    ("mpi_model.png", "Model from measured constants: predicted vs measured", mpi_model),
]


def _drawn(figure, run_dir, out_dir):
    """(figure.plot's result, "") or (None, the note saying why it was not drawn)."""
    try:
        return figure.plot(run_dir, Path(out_dir) / f"{figure.__name__.rsplit('.', 1)[-1]}.png"), ""
    except RooflabDataError as e:
        return None, not_drawn(e)


def mpi_section(run_dir, out_dir) -> str:
    return _mpi_sweep_part(run_dir, out_dir) + "\n" + _mpi_witness_part(run_dir, out_dir)


def _mpi_witness_part(run_dir, out_dir) -> str:
    """Beyond one machine: real MPICH on emulated hosts vs SMPI vs the model (witness.json), and
    the simulated cluster (smpi_sweep.py), side by side."""
    head = "<h3>Emulated hosts and simulated nodes: real vs SMPI vs model</h3>"
    run = Path(run_dir)
    if not (run / "witness.json").exists() and not (run / mpi_data.SMPI_SWEEP_FILE).exists():
        return head + note(f"not drawn: no witness.json ({mpi_data.WITNESS_CMD}) and no {mpi_data.SMPI_SWEEP_FILE} "
                           f"({mpi_data.SMPI_SWEEP_CMD})")
    parts = [head]
    try:
        mpi_witness.plot(run_dir, Path(out_dir) / "mpi_witness.png")
        parts.append('<figure><figcaption>Time and parallel efficiency vs processes, real and simulated'
                     '</figcaption><img src="mpi_witness.png" alt="real vs simulated scaling"></figure>')
        if (run / "witness.json").exists():
            doc = mpi_data.load_witness(run_dir)
            s = doc.get("summary", {})
            rows = [[esc(name.replace("_", " ")), esc(s[name]["cells"]), esc(f"{s[name]['median_abs'] * 100:.0f}%"),
                     esc(f"{s[name]['max_abs'] * 100:.0f}%")]
                    for name in ("smpi_vs_real", "model_vs_real", "model_vs_smpi") if s.get(name, {}).get("cells")]
            parts.append(table(["pair", "cells with a core per rank", "median |error|", "max |error|"], rows,
                               num_cols={1, 2, 3}))
            parts.append(note(f"{s.get('oversubscribed_cells', 0)} cells have more ranks than the "
                              f"{s.get('cpus')} CPUs: flagged in witness.json, not in the errors above"))
    except RooflabDataError as e:
        parts.append(not_drawn(e))
    return "\n".join(parts)


def _mpi_sweep_part(run_dir, out_dir) -> str:
    parts = ["<h2>Sinkhorn on MPI</h2>"]
    if not (Path(run_dir) / "mpi_sweep.json").exists():
        return "\n".join(parts + [note(f"not drawn: no mpi_sweep.json: run scripts/mpi_sweep.sh --run {run_dir}")])
    try:
        sw = mpi_data.load(run_dir)
    except RooflabDataError as e:
        return "\n".join(parts + [not_drawn(e)])
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
                          "over instead; the model (roofline/mpi_model.cpp) charges rounds x (ranks per core - 1) "
                          "x the measured turn."))
    for fname, title, module in FIGURES:
        try:
            module.plot(run_dir, Path(out_dir) / fname)
        except RooflabDataError as e:
            parts.append(f"<h3>{esc(title)}</h3>" + not_drawn(e))
            continue
        parts.append(f'<figure><figcaption>{esc(title)}</figcaption><img src="{esc(fname)}" alt="{esc(title)}"></figure>')
    try:
        t = sw.model_table()
    except RooflabDataError as e:
        return "\n".join(parts + [not_drawn(e)])
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


def gemm_baselines_section(run_dir, out_dir) -> str:
    """What each GEMM library ran (bench.json rooflab.code_path), flagged where it is not the
    library's best for this CPU: a ratio to it is then no comparison with the library."""
    head = "<h2>GEMM libraries: the code path each ran</h2>"
    bench_path = Path(run_dir) / "bench.json"
    if not bench_path.exists():
        return head + note(f"no bench.json: run `rooflab bench --filter ^gemm/ --out {run_dir}`")
    try:
        paths = gemm_data.code_paths(read_json(run_dir, "bench"))
        base = gemm_data.baselines(run_dir) if paths else ()
    except RooflabDataError as e:
        return head + not_drawn(e)
    if not paths:
        return head + note("no gemm row of a vendor library in bench.json (or a bench.json older than code_path)")
    rows, classes = [], []
    for variant, cp in sorted(paths.items()):
        label = gemm_data.not_representative_label(cp, variant in base)
        rows.append([esc(variant), esc(cp.get("library", "")), esc(cp.get("ran", "")), esc(cp.get("best", "")),
                     "yes" if not label else f"<b>no</b>: {esc(label)}", esc(cp.get("selected_by", ""))])
        classes.append("failed" if label else "")
    return head + table(["variant", "library", "ran", "best for this CPU", "representative", "selected by"], rows,
                        row_classes=classes)


def gemm_knobs_section(run_dir, out_dir) -> str:
    """The report's HTML section: the figure and the summary table, or why there is none."""
    head = "<h2>GEMM knob selection (SFC-CA k_layers, kbf)</h2>"
    res, why = _drawn(gemm_knobs, run_dir, out_dir)
    if res is None:
        return head + why
    rows = []
    for m in gemm_knobs.METHODS + [gemm_knobs.NOISE]:
        s = res.summary.get(m)
        if not s:
            continue
        cells = [gemm_knobs.LABELS[m], str(s["shapes"])] + [f"{100 * s[k]:.2f}%" for k in ("mean_loss", "median_loss", "max_loss")]
        cells += [f"{100 * s[k]:.0f}%" for k in ("within_3pct", "within_7pct")]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    hdr = "".join(f"<th>{h}</th>" for h in ["method", "shapes", "mean loss", "median loss", "max loss",
                                           "within 3%", "within 7%"])
    d = res.doc
    meta = (f"{html.escape(str(d.get('dtype')))}, {d.get('threads')} threads, grid "
            f"<code>{html.escape(str(d.get('grid')))}</code>, fastest of {d.get('reps')} runs per knob; "
            f"NN set: {html.escape(str(d.get('nn_set', {}).get('entries')))} autotuned shapes; machine model "
            f"<code>{html.escape(str(d.get('machine')))}</code>. Loss = time of the method's knob / time of the "
            "autotuned best − 1. Paper (EMR, BF16): NN within 3%, analytic within 7% on average.")
    return (head + f'<p class="meta">{meta}</p><figure><figcaption>Loss of each method vs the autotuned best'
            '</figcaption><img src="gemm_knobs.png" alt="gemm knob losses"></figure>'
            f"<table><tr>{hdr}</tr>{''.join(rows)}</table>")


def pct(x, digits=2) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}%"


def rtamm_section(run_dir, out_dir) -> str:
    """The report's HTML section: the figure and the accuracy table, or why there is none."""
    head = '<h2 id="rtamm">RTAMM: adaptive GEMM plan vs static and oracle</h2>'
    res, why = _drawn(rtamm, run_dir, out_dir)
    if res is None:
        return head + why
    cols = [("category", "category"), ("shapes", "shapes"), ("accuracy", "accuracy (≤ 5% of oracle)"),
            ("accuracy_noise_aware", "accuracy (≤ max(5%, oracle's noise))"),
            ("mean_gain", "mean gain over static"), ("max_gain", "max gain"), ("mean_loss", "mean loss vs oracle"),
            ("max_loss", "max loss"), ("overhead", "decision overhead"),
            ("overhead_ge_256cubed", "overhead, ≥ 256³")]
    rows = []
    for _, r in res.table.iterrows():
        cells = [str(r.category), str(int(r.shapes))]
        cells += [pct(r[k], 4 if k.startswith("overhead") else 2) for k, _ in cols[2:]]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    hdr = "".join(f"<th>{html.escape(h)}</th>" for _, h in cols)
    cfg = res.doc.get("config", {})
    eq = res.doc.get("equivalent_orders", [])
    eq_txt = ""
    if eq:
        ratios = np.array([e["measured_b_ns"] / e["measured_a_ns"] for e in eq])
        eq_txt = (f" Equivalent orders (nmk/mnk, kmn/mkn, knm/nkm, {len(eq)} pairs): identical movement and predicted "
                  f"cost; measured time ratio median {np.median(ratios):.3f}, range {ratios.min():.3f}–{ratios.max():.3f}.")
    meta = (f"{len(res.shapes)} shapes, {len(res.doc['plans'])} plans each timed (best of {cfg.get('samples')} "
            f"samples), {cfg.get('threads')} threads, base sizes {cfg.get('base_sizes')}, pool "
            f"<code>{html.escape(str(cfg.get('pool')))}</code>, static plan <code>{html.escape(str(cfg.get('static_plan')))}"
            f"</code>, {'calibrated' if cfg.get('calibrated') else 'uncalibrated'} cost formulas. Targets: accuracy ≥ 98%, mean loss ≤ 2%, overhead &lt; 0.1% for shapes ≥ 256³; the paper: "
            f"97.5% accuracy, +18.78% mean gain over static.{html.escape(eq_txt)}")
    return (head + f'<p class="meta">{meta}</p><figure><figcaption>Predicted vs measured cost of every plan; gain '
            'over static</figcaption><img src="rtamm.png" alt="rtamm figures"></figure>'
            f"<table><tr>{hdr}</tr>{''.join(rows)}</table>")
