"""The cross-machine report, `rooflab report --fleet RUN`: N machines side by side.

RUN holds one run directory per machine, RUN/<node>/ (machine.json, and bench.json / model.json
when the node was benchmarked: what `./run_all.sh --out RUN/<node>` or `rooflab fleet collect`
writes); RUN/fleet.json is not needed. Writes OUT (default RUN/report): index.html and
report.md, built from the same tables (fleet_tables) with the report's HTML and Markdown
machinery (report/html.py):
  machines      CPU, CPUID signature, ISAs, threads, and the sibling group of each node
  ceilings      bandwidth per level (read kernel) and every DRAM kernel, compute ceilings per ISA
                (fma / add / addmin, f64 and f32), each at 1 thread and at the node's most threads
  families      each family's best variant per node (highest GFLOP/s of its ok cases)
  efficiency    per node and family, the median roofline efficiency (predicted / measured time)
  outliers      a node whose DRAM read bandwidth or FMA peak (f64, widest ISA), at 1 thread or at
                its most threads, is more than OUTLIER below the median of its siblings: the
                other nodes with the same CPU (data/cpu_identity.py's rule, as scripts/perf_gate.sh:
                host.cpu and host.cpu_signature; for a machine.json without a signature host.cpu,
                ISAs and L1 / L2 sizes). A node without a sibling is not compared, and the page
                says so.
A RUN without node directories, a node directory without machine.json or with an unusable file
is an error (exit 1) naming it.
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from rooflab.data.cpu_identity import SIGNATURE, cpu_identity, group_by_cpu
from rooflab.data.jsonfile import RooflabDataError
from rooflab.data.run import LEVELS, Run, load_run
from rooflab.report import tables as rd
from rooflab.report.html import esc, fmt_num, md_table, note, page, table, text_table, write_atomic

OUTLIER = 0.10          # "more than 10% below its siblings" (issue 21)
DRAM_KERNEL = "read"    # the DRAM bandwidth compared between siblings
FMA_KEY = "fma_f64"     # the FMA peak compared (the widest ISA's compute.ceilings)
COMPUTE_KEYS = ("fma_f64", "fma_f32", "add_f64", "add_f32", "addmin_f64", "addmin_f32")
SKIP_DIRS = {"report", "logs"}  # the default output and ./run_all.sh-style logs beside the nodes


@dataclass
class Node:
    name: str           # the directory name: the node's hostname in the fleet layout
    run: Run
    group: str = ""     # its CPU group's label (group_by_cpu)
    group_source: str = ""

    @property
    def host(self) -> dict:
        return self.run.machine.get("host", {})


@dataclass
class Outlier:
    node: str
    metric: str
    value: float
    siblings_median: float
    siblings: list[str]

    @property
    def below(self) -> float:
        return 1 - self.value / self.siblings_median


@dataclass
class Fleet:
    root: Path
    nodes: list[Node]
    groups: dict[str, list[str]] = field(default_factory=dict)  # CPU group label -> node names


# ----------------------------------------------------------------------------- loading

def load_fleet(root, out: Path | None = None) -> Fleet:
    root = Path(root)
    if not root.is_dir():
        raise RooflabDataError(f"fleet directory {root} does not exist (it holds one run per node: RUN/<hostname>/, "
                               "as `./run_all.sh --out RUN/<hostname>` or `rooflab fleet collect` writes them)")
    skip = {out.resolve()} if out is not None else set()
    dirs = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")
                  and d.name not in SKIP_DIRS and d.resolve() not in skip)
    if not dirs:
        what = "machine.json (a single run: use `rooflab report RUN`)" if (root / "machine.json").exists() else "nothing"
        raise RooflabDataError(f"{root} holds no node directories (RUN/<hostname>/machine.json, one per node, as "
                               f"`./run_all.sh --out RUN/<hostname>` writes them); it holds {what}")
    nodes = []
    for d in dirs:
        if not (d / "machine.json").is_file():
            raise RooflabDataError(f"{d} has no machine.json: every node directory of a fleet needs one (run "
                                   f"`rooflab characterize --out {d}` on that node, or remove the directory)")
        nodes.append(Node(d.name, load_run(d, required=("machine",))))
    cpus = {n.name: cpu_identity(n.run.machine, d / "machine.json") for n, d in zip(nodes, dirs)}
    fleet = Fleet(root, nodes, group_by_cpu(cpus))
    label = {name: g for g, names in fleet.groups.items() for name in names}
    for n in nodes:
        n.group, n.group_source = label[n.name], cpus[n.name].source
    return fleet


# ----------------------------------------------------------------------------- values

def most_threads(n: Node) -> int:
    lv, cp = n.run.machine_df["levels"], n.run.machine_df["compute"]
    return int(max([1] + list(lv.threads) + list(cp.threads)))


def bandwidth(n: Node, level: str, kernel: str, threads: int) -> float | None:
    lv = n.run.machine_df["levels"]
    v = lv.loc[(lv.level == level) & (lv.kernel == kernel) & (lv.threads == threads), "gbps"]
    return None if v.empty else float(v.iloc[0])


def compute(n: Node, isa: str | None, key: str, threads: int) -> float | None:
    """A compute ceiling of one ISA's table; isa None: compute.ceilings (the widest ISA)."""
    df = n.run.machine_df["compute"] if isa is None else n.run.machine_df["compute_by_isa"]
    sel = (df.key == key) & (df.threads == threads)
    if isa is not None:
        sel &= df.isa == isa
    v = df.loc[sel, "gflops"]
    return None if v.empty else float(v.iloc[0])


def thread_points(n: Node) -> list[int]:
    return sorted({1, most_threads(n)})


METRICS = {  # name -> value of a node at a thread count
    f"DRAM {DRAM_KERNEL} bandwidth (GB/s)": lambda n, t: bandwidth(n, "DRAM", DRAM_KERNEL, t),
    f"{FMA_KEY} peak, widest ISA (GFLOP/s)": lambda n, t: compute(n, None, FMA_KEY, t),
}


def outliers(fleet: Fleet) -> tuple[list[Outlier], list[tuple[str, str, float, float, str]]]:
    """The flagged nodes, and every comparison made (node, metric @ threads, value, siblings'
    median, verdict) for the table. Siblings are compared at the same thread count."""
    by_name = {n.name: n for n in fleet.nodes}
    flagged, checks = [], []
    for n in fleet.nodes:
        sibs = [by_name[s] for s in fleet.groups[n.group] if s != n.name]
        if not sibs:
            continue
        for metric, value_of in METRICS.items():
            for t in thread_points(n):
                v = value_of(n, t)
                others = [x for s in sibs if (x := value_of(s, t)) is not None]
                if v is None or not others:
                    continue
                med = statistics.median(others)
                low = v < (1 - OUTLIER) * med
                label = f"{metric} at {t} thread{'s' if t > 1 else ''}"
                if low:
                    flagged.append(Outlier(n.name, label, v, med, [s.name for s in sibs]))
                checks.append((n.name, label, v, med, f"OUTLIER: {1 - v / med:.0%} below" if low else _rel(v / med)))
    return flagged, checks


def efficiency(n: Node) -> dict[str, float]:
    """family -> median roofline efficiency of its ok rows; "all" over every family."""
    df = n.run.model_df
    if df is None:
        return {}
    ok = df[(df.status == "ok") & df.efficiency.notna()]
    out = {f: float(g.efficiency.median()) for f, g in ok.groupby("family")}
    if not ok.empty:
        out["all"] = float(ok.efficiency.median())
    return out


def best_variants(n: Node) -> dict[str, tuple[str, float, float | None, str]]:
    """family -> (variant[/isa], GFLOP/s, efficiency, case name) of its fastest ok case."""
    df = n.run.model_df
    if df is None:
        return {}
    ok = df[(df.status == "ok") & df.gflops.notna()]
    out = {}
    for fam, g in ok.groupby("family"):
        r = g.loc[g.gflops.idxmax()]
        eff = None if r.efficiency != r.efficiency else float(r.efficiency)
        out[fam] = (rd.variant_key(r), float(r.gflops), eff, r["name"])
    return out


# ----------------------------------------------------------------------------- tables

def _rel(x: float) -> str:
    """x - 1 as a signed percentage ("+3%", "-12%"; "±0%" when it rounds to nothing)."""
    return "±0%" if abs(x - 1) < 0.005 else f"{x - 1:+.0%}"


def _pair(v1, vt, t: int) -> str:
    """A ceiling at 1 thread and at the node's most threads t ("x / y"; one value when t is 1)."""
    return fmt_num(v1, 4) if t == 1 else f"{fmt_num(v1, 4)} / {fmt_num(vt, 4)}"


def machines_table(fleet: Fleet) -> tuple[list[str], list[list[str]]]:
    rows = []
    for n in fleet.nodes:
        h = n.host
        sibs = [s for s in fleet.groups[n.group] if s != n.name]
        rows.append([n.name, str(h.get("hostname", "?")), str(h.get("cpu", "?")), str(h.get("cpu_signature") or "—"),
                     ", ".join(h.get("isa", [])), f"{h.get('cores', '?')} / {h.get('threads', '?')}",
                     ", ".join(sibs) if sibs else "none (not compared)",
                     str(n.run.machine.get("created", "?")),
                     ", ".join(k for k in ("bench", "model") if k not in n.run.missing) or "machine.json only"])
    return ["node", "hostname", "CPU", "CPUID signature", "ISA", "cores / threads", "siblings", "characterized",
            "also has"], rows


def bandwidth_level_table(fleet: Fleet) -> tuple[list[str], list[list[str]]]:
    """Per node: the read kernel's GB/s at each level, at 1 thread and at its most threads."""
    cols = [(lv, t) for lv in LEVELS for t in ("1", "all")]
    rows = []
    for n in fleet.nodes:
        tp = {"1": 1, "all": most_threads(n)}
        rows.append([n.name] + [fmt_num(bandwidth(n, lv, DRAM_KERNEL, tp[t]), 4) for lv, t in cols])
    return ["node"] + [f"{lv} {'1T' if t == '1' else 'all T'}" for lv, t in cols], rows


def dram_table(fleet: Fleet) -> tuple[list[str], list[list[str]]]:
    """Per node: every DRAM kernel's GB/s at 1 thread and at its most threads."""
    kernels = sorted({k for n in fleet.nodes for k in n.run.machine_df["levels"].query("level == 'DRAM'").kernel},
                     key=lambda k: (rd.KERNEL_ORDER.index(k) if k in rd.KERNEL_ORDER else 99, k))
    rows = []
    for n in fleet.nodes:
        t = most_threads(n)
        rows.append([n.name, str(t)] + [_pair(bandwidth(n, "DRAM", k, 1), bandwidth(n, "DRAM", k, t), t)
                                        for k in kernels])
    return ["node", "most threads"] + [f"{k} (1T / all T)" for k in kernels], rows


def compute_tables(fleet: Fleet) -> list[tuple[str, list[str], list[list[str]]]]:
    """One table per ISA: each node that has it, its ceilings at 1 thread and at its most threads."""
    isas = [i for i in ("scalar", "avx2", "avx512")
            if any((n.run.machine_df["compute_by_isa"].isa == i).any() for n in fleet.nodes)]
    out = []
    for isa in isas:
        rows = []
        for n in fleet.nodes:
            if not (n.run.machine_df["compute_by_isa"].isa == isa).any():
                rows.append([n.name, "—"] + [f"no {isa}"] * len(COMPUTE_KEYS))
                continue
            t = most_threads(n)
            rows.append([n.name, str(t)] + [_pair(compute(n, isa, k, 1), compute(n, isa, k, t), t)
                                            for k in COMPUTE_KEYS])
        out.append((f"{isa} compute ceilings (GFLOP/s, 1 thread / most threads)", ["node", "most threads"] +
                    list(COMPUTE_KEYS), rows))
    return out


def families_table(fleet: Fleet) -> tuple[list[str], list[list[str]]]:
    best = {n.name: best_variants(n) for n in fleet.nodes}
    fams = sorted({f for b in best.values() for f in b})
    rows = []
    for f in fams:
        cells = []
        for n in fleet.nodes:
            b = best[n.name].get(f)
            cells.append("—" if b is None else f"{b[0]}: {fmt_num(b[1])} GFLOP/s"
                         + (f", eff {b[2]:.2f}" if b[2] is not None else ""))
        rows.append([f] + cells)
    return ["family"] + [n.name for n in fleet.nodes], rows


def efficiency_table(fleet: Fleet) -> tuple[list[str], list[list[str]], list[str]]:
    """Per node: the median efficiency of each family and of all; a node whose overall median is
    more than OUTLIER below its siblings' median is marked (the row class "slower")."""
    eff = {n.name: efficiency(n) for n in fleet.nodes}
    fams = sorted({f for e in eff.values() for f in e if f != "all"}) + ["all"]
    rows, classes = [], []
    for n in fleet.nodes:
        e = eff[n.name]
        sibs = [eff[s]["all"] for s in fleet.groups[n.group] if s != n.name and "all" in eff[s]]
        verdict, cls = ("no model.json" if n.run.model_df is None else "no sibling" if not sibs else ""), ""
        if "all" in e and sibs:
            med = statistics.median(sibs)
            low = e["all"] < (1 - OUTLIER) * med
            verdict, cls = (f"SLOW: {1 - e['all'] / med:.0%} below its siblings" if low else
                            f"{_rel(e['all'] / med)} vs its siblings"), ("slower" if low else "")
        rows.append([n.name] + [fmt_num(e.get(f), 3) for f in fams] + [verdict])
        classes.append(cls)
    return ["node"] + [f"{f} (median)" for f in fams] + ["vs siblings"], rows, classes


def outlier_lines(fleet: Fleet, flagged: list[Outlier]) -> list[str]:
    """The verdict sentences: each outlier, then the nodes that had nobody to be compared with."""
    lines = [f"{o.node}: {o.metric} {fmt_num(o.value, 4)} is {o.below:.0%} below its siblings' median "
             f"{fmt_num(o.siblings_median, 4)} ({', '.join(o.siblings)})" for o in flagged]
    alone = [n for n in fleet.nodes if len(fleet.groups[n.group]) == 1]
    for n in alone:
        lines.append(f"{n.name} has no sibling (the only node with CPU {n.group}): not compared, not an outlier")
    return lines


# ----------------------------------------------------------------------------- output

def title_of(fleet: Fleet) -> str:
    return f"rooflab fleet report — {len(fleet.nodes)} machines ({fleet.root.name})"


def _intro(fleet: Fleet) -> str:
    old = [n.name for n in fleet.nodes if n.group_source != SIGNATURE]
    return (f"{len(fleet.nodes)} machines in {len(fleet.groups)} CPU group(s). Outlier rule: a node whose DRAM "
            f"{DRAM_KERNEL} bandwidth or {FMA_KEY} peak (widest ISA), at 1 thread or at its most threads, is more "
            f"than {OUTLIER:.0%} below the median of its siblings (nodes with the same CPU: name and "
            "host.cpu_signature)."
            + (f" No host.cpu_signature (older machine.json) on {', '.join(old)}: grouped by CPU name, ISAs and "
               "L1 / L2 sizes instead." if old else ""))


def html_body(fleet: Fleet, out: Path) -> list[str]:
    flagged, checks = outliers(fleet)
    body = [f"<h1>{esc(title_of(fleet))}</h1>",
            f'<p class="meta">fleet directory: <code>{esc(fleet.root.resolve())}</code>. {esc(_intro(fleet))}</p>',
            "<h2>Outliers</h2>"]
    body += [note(s, "warn") for s in outlier_lines(fleet, flagged)[:len(flagged)]]
    if not flagged:
        body.append('<p class="meta">No node is more than '
                    f"{OUTLIER:.0%} below its siblings.</p>")
    body += [note(s) for s in outlier_lines(fleet, flagged)[len(flagged):]]
    if checks:
        body.append("<details><summary>Every comparison</summary>" + table(
            ["node", "metric", "value", "siblings' median", "verdict"],
            [[esc(a), esc(b), esc(fmt_num(c, 4)), esc(fmt_num(d, 4)), esc(e)] for a, b, c, d, e in checks],
            ["slower" if e.startswith("OUTLIER") else "" for *_, e in checks], num_cols={2, 3}, cls="compact")
            + "</details>")
    head, rows = machines_table(fleet)
    links = []
    for n, r in zip(fleet.nodes, rows):
        rep = fleet.root / n.name / "report" / "index.html"
        links.append([f'<a href="{esc(os.path.relpath(rep, out))}">{esc(r[0])}</a>' if rep.is_file() else esc(r[0])]
                     + [esc(c) for c in r[1:]])
    body += ["<h2>Machines</h2>", table(head, links, cls="compact")]
    head, rows, classes = efficiency_table(fleet)
    body += ["<h2>Efficiency per machine</h2>",
             '<p class="meta">Median roofline efficiency (predicted / measured time, model.json) of the ok cases, per '
             "family; a node more than 10% below its siblings' median is marked.</p>",
             table(head, [[esc(c) for c in r] for r in rows], classes, num_cols=set(range(1, len(head) - 1)))]
    head, rows = families_table(fleet)
    body += ["<h2>Best variant of each family per machine</h2>",
             '<p class="meta">The variant of the fastest ok case (GFLOP/s) and that case\'s roofline efficiency.</p>',
             text_table(head, rows, cls="compact") if rows else note("no node has a model.json")]
    head, rows = bandwidth_level_table(fleet)
    body += ["<h2>Ceilings</h2>", f"<h3>Bandwidth per level ({DRAM_KERNEL} kernel, GB/s)</h3>",
             text_table(head, rows, num_cols=set(range(1, len(head))))]
    head, rows = dram_table(fleet)
    body += ["<h3>DRAM bandwidth, every kernel (GB/s)</h3>", text_table(head, rows, num_cols=set(range(1, len(head))))]
    for title, head, rows in compute_tables(fleet):
        body += [f"<h3>{esc(title)}</h3>", text_table(head, rows, num_cols=set(range(1, len(head))))]
    return body


def markdown(fleet: Fleet) -> str:
    flagged, _ = outliers(fleet)
    out = [f"# {title_of(fleet)}", "", f"Fleet directory: `{fleet.root.resolve()}`", "", _intro(fleet), "",
           "## Outliers", ""]
    out += [f"- ⚠ {s}" for s in outlier_lines(fleet, flagged)[:len(flagged)]] or \
           [f"No node is more than {OUTLIER:.0%} below its siblings."]
    out += [f"- {s}" for s in outlier_lines(fleet, flagged)[len(flagged):]]
    head, rows, _ = efficiency_table(fleet)
    out += ["", "## Machines", "", md_table(*machines_table(fleet)), "", "## Efficiency per machine", "",
            md_table(head, rows)]
    head, rows = families_table(fleet)
    if rows:
        out += ["", "## Best variant of each family per machine", "", md_table(head, rows)]
    out += ["", f"## Bandwidth per level ({DRAM_KERNEL} kernel, GB/s)", "", md_table(*bandwidth_level_table(fleet)),
            "", "## DRAM bandwidth, every kernel (GB/s)", "", md_table(*dram_table(fleet))]
    for title, head, rows in compute_tables(fleet):
        out += ["", f"## {title}", "", md_table(head, rows)]
    return "\n".join(out) + "\n"


def build(root, out_dir=None) -> Path:
    out = Path(out_dir) if out_dir else Path(root) / "report"
    fleet = load_fleet(root, out)
    out.mkdir(parents=True, exist_ok=True)
    title = title_of(fleet)
    write_atomic(out / "report.md", markdown(fleet))
    return write_atomic(out / "index.html", page(title, [("index.html", "Fleet")], "index.html", html_body(fleet, out)))


__all__ = ["load_fleet", "build", "markdown", "outliers", "Fleet", "Node", "OUTLIER"]
