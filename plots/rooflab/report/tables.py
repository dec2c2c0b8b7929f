"""What the report says, as plain text tables, shared by the HTML pages (build, pages) and the
Markdown summary (markdown): the warnings, the machine summary, which families have data,
per-family summary tables, the commands that reproduce each file of the run, and the regression
comparison against a baseline (rooflab.gate, as `rooflab compare`)."""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from rooflab import gate
from rooflab.data import gemm, knobs, mpi as mpi_data, pot, rtamm, steps as steps_file
from rooflab.data.jsonfile import RooflabDataError
from rooflab.data.run import LEVELS, Run
from rooflab.figures.common import human_bytes
from rooflab.report.html import fmt_num, fmt_time, missing

KERNEL_ORDER = ["read", "copy", "update", "triad", "copy_nt", "triad_nt"]


@dataclass(frozen=True)
class Family:
    key: str                          # page name: <key>.html
    heading: str
    model: tuple[str, ...] = ()       # model.json families shown on the page
    files: tuple[str, ...] = ()       # files in the run directory that hold this family's data
    machine_section: str = ""         # a machine.json section that holds data of this family


FAMILIES = [
    Family("sinkhorn", "Sinkhorn (COFFEE, MAP-UOT)", ("sinkhorn",), ("pot_compare.json",)),
    Family("floyd_warshall", "Floyd-Warshall", ("floyd_warshall",)),
    Family("gemm", "GEMM (SFC-CA)", ("gemm",), ("gemm_knobs.json", "gemm_l2/counters.json")),
    Family("rtamm", "RTAMM", ("rtamm",), ("rtamm.json",)),
    Family("mpi", "Sinkhorn on MPI", (), ("mpi_sweep.json",)),
    Family("gpu", "Sinkhorn on a CUDA device", ("sinkhorn_cuda",), (), "gpu"),
]


def family_rows(run: Run, fam: Family) -> pd.DataFrame:
    if run.model_df is None or not fam.model:
        return pd.DataFrame(columns=run.model_df.columns if run.model_df is not None else [])
    return run.model_df[run.model_df.family.isin(fam.model)]


def has_data(run: Run, fam: Family) -> bool:
    return (not family_rows(run, fam).empty or any((run.run_dir / f).exists() for f in fam.files)
            or bool(fam.machine_section and isinstance((run.machine or {}).get(fam.machine_section), dict)))


def families_with_data(run: Run) -> list[Family]:
    return [f for f in FAMILIES if has_data(run, f)]


# ----------------------------------------------------------------------------- run steps

def steps(run: Run) -> dict | None:
    """RUN/steps.json (./run_all.sh's record of its steps), or None when the run was not made by
    run_all.sh; RooflabDataError when the file is unusable."""
    return steps_file.load(run.run_dir)


def step_problems(doc: dict | None) -> list[tuple[str, str]]:
    """[(status, "title: reason")] of the failed and skipped steps, failed first."""
    if not doc:
        return []
    out = [(st["status"], f"{st.get('title') or st['id']}: {st.get('reason') or 'no reason recorded'}")
           for st in doc["steps"] if st["status"] != "ok"]
    return sorted(out, key=lambda p: p[0] != "failed")


def step_table(doc: dict) -> tuple[list[str], list[list[str]]]:
    secs = lambda v: f"{v:.0f} s" if isinstance(v, (int, float)) else "—"
    return (["step", "status", "time", "reason / note", "log"],
            [[st.get("title") or st["id"], st["status"], secs(st.get("elapsed_s")), st.get("reason") or "",
              st.get("log") or ""] for st in doc["steps"]])


# ----------------------------------------------------------------------------- warnings

def warnings(run: Run) -> list[str]:
    """Self-diagnosis: what `rooflab characterize` and `rooflab bench` recorded (unoptimized build,
    load, clock, VM without counters, unstable timings, too few repetitions), the capacity
    warnings, and failed verifications."""
    out = [f"characterize: {w}" for w in (run.machine or {}).get("diagnostics", [])]
    out += [f"bench: {w}" for w in (run.bench or {}).get("diagnostics", [])]
    m = run.machine or {}
    if m and m.get("build_type") not in (None, "Release", "RelWithDebInfo") and not any("build" in w for w in out):
        out.append(f"characterize: a {m.get('build_type')} build measured the ceilings: they are not representative")
    out += [f"caches: {w}" for w in m.get("caches", {}).get("warnings", [])]
    out += [f"bandwidth: {w}" for w in m.get("bandwidth", {}).get("warnings", [])]
    out += [f"likwid-bench: {w}" for w in (m.get("likwid_bench") or {}).get("disagreements", [])]
    out += [f"machine: {k} section not used: {why}" for k, why in m.get("stale_sections", {}).items()]
    if run.model_df is not None:
        bad = run.model_df[run.model_df.status == "failed"]
        if not bad.empty:
            out.append(f"{len(bad)} benchmark(s) failed verification (never timed): "
                       + ", ".join(bad.name.head(5)) + (" ..." if len(bad) > 5 else ""))
    return out


# ----------------------------------------------------------------------------- machine

def _share(host: dict) -> str:
    """What characterize measured on when its process had fewer cores than the machine."""
    total, cpus = host.get("machine_cores"), host.get("cpus")
    if not isinstance(total, int) or not isinstance(host.get("cores"), int) or total <= host["cores"]:
        return ""
    return f" of the machine's {total} cores (this process's CPUs {', '.join(map(str, cpus or []))})"


def machine_facts(run: Run) -> list[list[str]]:
    m = run.machine
    host = m.get("host", {})
    virt = host.get("virtualized")
    return [["host", str(host.get("hostname"))], ["CPU", str(host.get("cpu"))],
            ["cores / threads", f"{host.get('cores')} / {host.get('threads')}" + _share(host)],
            ["ISA", ", ".join(host.get("isa", []))],
            ["virtualized", "unknown" if virt is None else
             ("yes" + (f" ({host.get('hypervisor')})" if host.get("hypervisor") else "")) if virt else "no"],
            ["characterized", f"{m.get('created', '?')} by rooflab {m.get('rooflab_version', '?')} "
                              f"({m.get('build_type', '?')} build)"]]


def caches_table(run: Run) -> tuple[list[str], list[list[str]]]:
    caches = run.machine.get("caches", {})
    head = ["level", f"reported ({caches.get('reported', {}).get('source', '?')})",
            f"measured ({caches.get('measured', {}).get('source', '?')})"]
    return head, [[r.level, "—" if missing(r.reported) else human_bytes(r.reported),
                   "—" if missing(r.measured) else human_bytes(r.measured)]
                  for _, r in run.machine_df["caches"].iterrows()]


def bandwidth_table(run: Run, threads: list[int] | None = None) -> tuple[list[str], list[list[str]]]:
    """One row per level, one column per kernel and thread count (GB/s); `threads` limits the
    columns (the Markdown summary shows the largest thread count only)."""
    lv = run.machine_df["levels"]
    if lv.empty:
        return [], []
    ts = threads or sorted(lv.threads.unique())
    kernels = sorted(lv.kernel.unique(), key=lambda k: (KERNEL_ORDER.index(k) if k in KERNEL_ORDER else 99, k))
    cols = [(k, t) for k in kernels for t in ts if ((lv.kernel == k) & (lv.threads == t)).any()]
    rows = []
    for level in [x for x in LEVELS if (lv.level == x).any()]:
        cells = []
        for k, t in cols:
            v = lv.loc[(lv.level == level) & (lv.kernel == k) & (lv.threads == t), "gbps"]
            cells.append("—" if v.empty else fmt_num(float(v.iloc[0]), 4) +
                         (" ⚠ not a measurement" if float(v.iloc[0]) <= 0 else ""))
        rows.append([level] + cells)
    return ["level"] + [f"{k} {t}T" for k, t in cols], rows


def bandwidth_isa_table(run: Run) -> tuple[list[str], list[list[str]]]:
    """In-cache ceilings per ISA (bandwidth.by_isa: a kernel's L1..L3 traffic is priced against
    its own ISA's), one row per ISA and level, one column per kernel and thread count (GB/s).
    Empty for a file from before by_isa."""
    bi = run.machine_df.get("bandwidth_by_isa")
    if bi is None or bi.empty:
        return [], []
    ts = sorted(bi.threads.unique())
    kernels = sorted(bi.kernel.unique(), key=lambda k: (KERNEL_ORDER.index(k) if k in KERNEL_ORDER else 99, k))
    cols = [(k, t) for k in kernels for t in ts if ((bi.kernel == k) & (bi.threads == t)).any()]
    rows = []
    for isa in dict.fromkeys(bi.isa):
        for level in [x for x in LEVELS if ((bi.isa == isa) & (bi.level == x)).any()]:
            cells = []
            for k, t in cols:
                v = bi.loc[(bi.isa == isa) & (bi.level == level) & (bi.kernel == k) & (bi.threads == t), "gbps"]
                cells.append("—" if v.empty else fmt_num(float(v.iloc[0]), 4))
            rows.append([isa, level] + cells)
    return ["ISA", "level"] + [f"{k} {t}T" for k, t in cols], rows


def likwid_table(run: Run) -> tuple[list[str], list[list[str]], list[str]]:
    """likwid-bench against rooflab, one row per kernel, level and thread count: likwid-bench's
    GB/s at its working set (best of its runs), rooflab's ceiling for that level (and its curve at
    the same size, and its kernel timed again there right after likwid-bench: "—" in older files),
    their ratio and a flag when they disagree by more than the tolerance (saying so where the ratio
    is within the spread of likwid-bench's own runs: no evidence). Also the row classes
    ("disagrees" for a disagreement). Empty when likwid-bench did not run."""
    lb = (run.machine or {}).get("likwid_bench") or {}
    if not lb.get("available"):
        return [], [], []
    tol = lb.get("tolerance", 0.10)
    head = ["level", "likwid-bench test", "threads", "bytes", "likwid-bench GB/s", "likwid-bench per byte GB/s",
            "rooflab ceiling GB/s", "rooflab curve GB/s", "rooflab re-timed GB/s", "ratio", f"within ±{tol:.0%}"]
    rows, classes = [], []
    for p in lb.get("points", []):
        agrees = p.get("agrees")
        flag = "—" if agrees is None else "yes" if agrees else "⚠ DISAGREES"
        if agrees is False and p.get("within_run_spread"):  # likwid-bench's own runs differ as much
            flag += f" (within likwid-bench's run spread, {p.get('runs_spread', 0):.2f}x)"
        rows.append([str(p.get("level", "?")), str(p.get("test", p.get("kernel", "?"))), str(p.get("threads")),
                     human_bytes(p.get("bytes", 0)), fmt_num(p.get("gbps"), 4),
                     "—" if p.get("per_byte_gbps") is None else fmt_num(p.get("per_byte_gbps"), 4),
                     fmt_num(p.get("rooflab_ceiling_gbps"), 4), fmt_num(p.get("rooflab_gbps"), 4),
                     "—" if p.get("rooflab_now_gbps") is None else fmt_num(p.get("rooflab_now_gbps"), 4),
                     fmt_num(p.get("ratio"), 3), flag])
        classes.append("disagrees" if agrees is False else "")
    return head, rows, classes


def compute_table(run: Run) -> tuple[list[str], list[list[str]]]:
    """One row per ISA and ceiling (compute.by_isa: a kernel is priced against its own ISA's)."""
    comp = run.machine_df["compute_by_isa"]
    threads = sorted(comp.threads.unique()) if not comp.empty else []
    rows = []
    for isa in dict.fromkeys(comp.isa):
        for key in run.machine.get("compute", {}).get("ceilings", {}):
            g = comp[(comp.isa == isa) & (comp.key == key)]
            if g.empty:
                rows.append([isa, key] + ["not measured"] * max(1, len(threads)))
                continue
            rows.append([isa, key] + ["—" if (v := g.loc[g.threads == t, "gflops"]).empty else fmt_num(float(v.iloc[0]), 4)
                                      for t in threads])
    return ["ISA", "ceiling"] + ([f"{t} thread{'s' if t > 1 else ''}" for t in threads] or ["value"]), rows


def isa_choice_table(run: Run) -> tuple[list[str], list[list[str]]]:
    """The default ISA of each per-ISA variant, as measured (machine.json "isa_choice", `rooflab
    isa-calibrate`): the median time of each ISA (at its chosen knob setting, e.g. sinkhorn's
    prefetch target pf, with the other settings' times), the chosen one, and how much slower the
    widest was. Empty without the section."""
    sec = (run.machine or {}).get("isa_choice")
    if not isinstance(sec, dict):
        return [], []
    entries = [e for e in sec.get("entries", []) if isinstance(e, dict)]
    isas = [i for i in ("scalar", "avx2", "avx512") if any(i in e.get("isas", {}) for e in entries)]
    rows = []
    for e in entries:
        cells = []
        for i in isas:
            t = e.get("isas", {}).get(i)
            cells.append("—" if not t else _isa_cell(t))
        chosen, widest = e.get("chosen", "?"), e.get("widest", "?")
        rows.append([f'{e.get("family")}/{e.get("variant")}', str(e.get("dtype")), str(e.get("dims")), str(e.get("threads"))]
                    + cells + [chosen if chosen == widest else f"{chosen} (not the widest)",
                               fmt_num(e.get("widest_over_chosen"), 3)])
    for f in sec.get("failed", []):
        rows.append([str(f.get("case")), "", "", ""] + ["—"] * len(isas) + [f'FAILED: {f.get("reason")}', ""])
    return (["variant", "dtype", "size", "threads"] + [f"{i} ms" for i in isas] + ["default ISA", "widest / default"],
            rows)


def _isa_cell(t: dict) -> str:
    """An ISA's median at its chosen knob setting; with knobs, the setting and the others' times."""
    cell = fmt_num(t["median_s"] * 1e3, 3) + (" (disturbed)" if t.get("disturbed") else "")
    knobs = t.get("knobs")
    if isinstance(knobs, dict) and knobs:
        name = lambda k: " ".join(f"{a}:{b}" for a, b in k.items())
        others = [f'{name(x.get("knobs") or {})} {fmt_num(x["median_s"] * 1e3, 3)}' for x in t.get("settings") or []
                  if isinstance(x, dict) and x.get("knobs") != knobs and "median_s" in x]
        cell += f" with {name(knobs)}" + (f' ({", ".join(others)})' if others else "")
    return cell


# ----------------------------------------------------------------------------- families

def variant_key(r) -> str:
    return r.variant + (f"/{r.isa}" if isinstance(r.isa, str) and r.isa else "")


def family_summary(rows: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """One row per variant[/isa]: cases ok / failed / skipped, the median and best roofline
    efficiency (predicted / measured time), and the fastest case in GFLOP/s."""
    if rows.empty:
        return [], []
    out = []
    for key, g in sorted(rows.groupby(rows.apply(variant_key, axis=1)), key=lambda kv: kv[0]):
        ok = g[g.status == "ok"]
        eff = ok.efficiency.dropna()
        best = ok.loc[ok.gflops.idxmax()] if not ok.empty and ok.gflops.notna().any() else None
        out.append([key, str(len(ok)), str((g.status == "failed").sum()), str((g.status == "skipped").sum()),
                    "—" if eff.empty else f"{eff.median():.2f}", "—" if eff.empty else f"{eff.max():.2f}",
                    "—" if best is None else f"{fmt_num(best.gflops)} ({best['name']})"])
    return ["variant", "ok", "failed", "skipped", "efficiency (median)", "efficiency (best)", "best GFLOP/s (case)"], out


def results_rows(rows: pd.DataFrame) -> list[list[str]]:
    """The full results of some model rows: name, status, time, GFLOP/s, GB/s, prediction, bound,
    efficiency, message."""
    out = []
    for _, r in rows.iterrows():
        bound = "—" if missing(r.bound) and missing(r.level) else f"{r.bound or '?'}/{r.level or '?'}"
        bad = bool(r.get("disturbed", False))  # a measurement that stayed disturbed: shown, marked
        out.append([r["name"], r.status + (" (disturbed)" if bad else ""), fmt_time(r.median_s), fmt_num(r.gflops),
                    fmt_num(r.gbps), fmt_time(r.predicted_s), bound,
                    "—" if missing(r.efficiency) else f"{r.efficiency:.2f}",
                    "; ".join(x for x in [r.message, f"disturbed: {r.disturbed_reason}" if bad else ""] if x)])
    return out


def summary_tables(run: Run, fam: Family) -> list[tuple[str, list[str], list[list[str]]]]:
    """The family's summary tables, [(title, headers, rows)]: per-variant counts and efficiency
    of its model rows, and for RTAMM / MPI the headline numbers of their own files."""
    out = []
    head, rows = family_summary(family_rows(run, fam))
    if rows:
        out.append(("Benchmarks per variant", head, rows))
    if fam.key == "rtamm" and (sm := _or_none(rtamm.summary, run.run_dir)) is not None:
        pct = lambda k: "—" if not isinstance(sm.get(k), (int, float)) else f"{100 * sm[k]:.2f}%"
        out.append(("Adaptive plan vs static and oracle (rtamm.json)", ["shapes", "decision accuracy (≤ 5% of oracle)",
                    "mean gain over static", "oracle's mean gain", "mean loss vs oracle", "decision overhead (≥ 256³)"],
                    [[str(sm.get("shapes")), pct("decision_accuracy"), pct("mean_gain_over_static"),
                      pct("mean_oracle_gain_over_static"), pct("mean_loss_vs_oracle"),
                      pct("mean_decision_overhead_ge_256cubed")]]))
    if fam.key == "mpi" and (sw := _or_none(mpi_data.load, run.run_dir)) is not None:
        main = mpi_data.main_runs(sw.runs).sort_values(["ranks", "design", "ranks_per_node"])
        out.append((f"Time per iteration ({sw.doc.get('dtype', '?')} {sw.doc.get('size', '?')}, mpi_sweep.json)",
                    ["design", "P", "ranks per node", "time / iteration", "allreduce / iteration", "oversubscribed"],
                    [[r.design, str(r.ranks), str(r.ranks_per_node), fmt_time(r.time_per_iter_s),
                      fmt_time(r.comm_time_per_iter_s), "yes" if r.oversubscribed else "no"] for r in main.itertuples()]))
    return out


RESULTS_HEAD = ["name", "status", "median time", "GFLOP/s", "GB/s", "predicted time", "bound / level", "efficiency",
                "message"]


# ----------------------------------------------------------------------------- commands

def q(s) -> str:
    return shlex.quote(str(s))


def bench_command(run: Run) -> str:
    b = run.bench or {}
    reps = sorted({int(x["repetitions"]) for x in b.get("benchmarks", []) if isinstance(x.get("repetitions"), int)})
    cmd = f"rooflab bench --profile {q(b.get('profile') or 'quick')}"
    if b.get("filter"):
        cmd += f" --filter {q(b['filter'])}"
    if b.get("machine"):
        cmd += f" --machine {q(b['machine'])}"
    if len(reps) == 1:
        cmd += f" --benchmark_repetitions={reps[0]}"
    return cmd + f" --out {q(run.run_dir)}"


def case_command(run: Run, name: str, reps) -> str:
    """Re-times one benchmark against this run's machine.json, into a new directory DIR."""
    r = f" --benchmark_repetitions={int(reps)}" if isinstance(reps, (int, float)) and not missing(reps) else ""
    m = f" --machine {q(run.run_dir / 'machine.json')}" if run.machine is not None else ""
    return f"rooflab bench --case {q(name)}{r}{m} --out DIR"


def counters_command(run: Run) -> str:
    doc = run.counters or {}
    names = list(dict.fromkeys(r.get("name") for r in doc.get("rows", []) if r.get("name")))
    backs = [b["name"] for b in doc.get("backends", []) if b.get("available")]
    cases = " ".join(f"--case {q(n)}" for n in names) or "--filter REGEX"
    return f"rooflab counters {cases} --backend {q(backs[0] if len(backs) == 1 else 'all')} --out {q(run.run_dir)}"


def _or_none(load: Callable, run_dir: Path):
    """load(run_dir), or None when the file is absent or unusable: the table or command that
    quotes it is left out, and the family's section says what is wrong with the file."""
    try:
        return load(run_dir)
    except RooflabDataError:
        return None


RTAMM_PROFILES = {"full": "paper"}  # rtamm.json files from before `rtamm evaluate` took smoke|quick|paper


def gpu_file(run: Run) -> str:
    """Where the run's GPU ceilings are: machine.gpu.json, or inline in an older machine.json."""
    return "machine.gpu.json" if (run.run_dir / "machine.gpu.json").exists() else 'machine.json "gpu"'


def commands(run: Run) -> list[list[str]]:
    """[file, command that (re)produces it] for every file of the run, from what each file records."""
    d = q(run.run_dir)
    out = []
    if run.machine is not None:
        out.append(["machine.json", f"rooflab characterize --profile {q(run.machine.get('profile') or 'quick')} --out {d}"])
    if run.bench is not None:
        out.append(["bench.json", bench_command(run)])
    if run.model is not None:
        out.append(["model.json", f"rooflab model --run {d}"])
    if run.counters is not None:
        out.append(["counters.json", counters_command(run)])
    if (pc := _or_none(pot.load_doc, run.run_dir)) is not None:
        sizes = ",".join(str(n) for n in sorted({r.get("N") for r in pc.get("rows", []) if r.get("N")}))
        variants = ",".join(dict.fromkeys(r["variant"] for r in pc.get("rows", []) if r.get("impl") != "pot"))
        out.append(["pot_compare.json", f"scripts/pot_compare.py --rooflab 'rooflab sinkhorn' --sizes {sizes} "
                    f"--iters {pc.get('iters')} --reps {pc.get('reps')} --reg {pc.get('reg')}"
                    + (f" --reg-m {pc['reg_m']}" if pc.get("reg_m") is not None else "")
                    + (f" --variants {variants}" if variants else "") + f" --out {q(run.run_dir / 'pot_compare.json')}"])
    if (gk := _or_none(lambda d: knobs.load(d)[1], run.run_dir)) is not None:
        out.append(["gemm_knobs.json", gk.get("command") or f"rooflab gemm-knobs evaluate --shapes N --out {d} "
                    f"(dtype {gk.get('dtype')}, {gk.get('threads')} threads, grid {gk.get('grid')})"])
    if (run.run_dir / gemm.L2_COUNTERS_DIR / "counters.json").is_file():
        out.append(["gemm_l2/counters.json", f"scripts/gemm_paper.sh --out {d} --skip-bench"])
    if (rt := _or_none(rtamm.load, run.run_dir)) is not None:
        cfg = rt.get("config", {})
        out.append(["rtamm.json", f"rooflab rtamm units --machine {q(run.run_dir / 'machine.json')} --threads "
                    f"{cfg.get('threads')} && rooflab rtamm evaluate --machine {q(run.run_dir / 'machine.json')} "
                    f"--profile {RTAMM_PROFILES.get(cfg.get('profile'), cfg.get('profile'))} --shapes {cfg.get('shapes')} --threads {cfg.get('threads')} "
                    f"--samples {cfg.get('samples')} --out {d}"])
    if (ms := getattr(_or_none(mpi_data.load, run.run_dir), "doc", None)) is not None:
        out.append(["mpi_sweep.json", str(ms.get("command") or f"scripts/mpi_sweep.sh --run {d}")])
    if isinstance((run.machine or {}).get("gpu"), dict):
        out.append([gpu_file(run), f"rooflab gpu-characterize --out {d}"])
    out.append(["claims.json, claims.md", f"rooflab claims {d}"])
    return out


# ----------------------------------------------------------------------------- baseline

@dataclass
class Comparison:
    base: str
    rows: list[dict]       # rooflab.compare/1 rows
    metric: str
    threshold: float
    summary: str           # the last line `rooflab compare` prints
    exit_code: int         # what `rooflab compare` returns (4: significantly slower)

    def markdown(self) -> str:
        return gate.fmt_table([gate.Row(**r) for r in self.rows], self.metric, markdown=True)


def compare_with(run: Run, base: str, options: gate.Options | None = None) -> Comparison:
    """`rooflab compare BASE RUN/bench.json` (rooflab.gate, same defaults and checks); a failure
    (bad input, nothing comparable) raises RooflabDataError with the gate's message."""
    if run.bench is None:
        raise RooflabDataError(f"--baseline needs {run.run_dir / 'bench.json'}: run `rooflab bench` first")
    o = options or gate.Options()
    try:
        res = gate.gate(base, run.run_dir / "bench.json", o)
    except RooflabDataError as e:
        raise RooflabDataError(f"comparison with --baseline {base} failed: {e}") from None
    doc = res.doc()
    return Comparison(str(base), doc["rows"], o.metric, o.threshold, res.summary, res.exit_code)


def fmt_ratio(v) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"
