"""The per-CPU-class peer table: rooflab vs the installed peers, from one run of
scripts/peer_table.sh, as results/peers/<cpu-class>.md, plus the index results/peers/README.md.

    python3 plots/peer_table.py RUN [--tables DIR] [--class NAME]

Reads JSON only: RUN/peer_run.json (rooflab.peer_run/1: the command, commit, the cases asked
for, each step's status), RUN/cpu.json (rooflab.cpuid/1: vendor, family, model, model name;
vendor, family and model from machine.json's host.cpu_signature where it has one),
RUN/machine.json (ISAs, caches, the per-ISA compute ceilings), RUN/bench.json (GEMM and
Floyd-Warshall) and RUN/pot_compare.json (Sinkhorn vs POT).

Definitions:
  value        the median of a case's repetitions (GFLOP/s = rooflab.flops / median time); with
               `--rounds N` that of the round it kept (bench's rule), and the range over its rounds;
               in an interleaved run (peer_run.json "interleaved", the script's default: every
               case's repetitions in random order among all cases'), the range of its repetitions.
  rooflab best of a work item, the fastest of rooflab's own kernels (rows without a vendor
               code path) that verified; a failed case is shown as FAILED with its message and
               never enters a best or a ratio.
  peer         a row whose bench.json rooflab.code_path names a vendor library (OpenBLAS, BLIS,
               oneDNN, LIBXSMM behind sfc_ca_libxsmm), or POT for Sinkhorn. Its code path is
               shown; one that is not the library's best for this CPU is flagged.
  ratio        rooflab best / peer in speed (GFLOP/s ratio, or peer time / rooflab time):
               above 1 rooflab is faster. In an interleaved run with >= 5 repetitions on both
               sides, a ratio the repetitions do not tell from 1 (two-sided Mann-Whitney U test,
               p >= 0.05) says so: "(n.s., p P)".
  % of ceiling the value over machine.json's compute ceiling named by the case's
               compute_ceiling (fma_* for GEMM, addmin_* for Floyd-Warshall) of the case's ISA
               (a library row: the widest ISA, what a library dispatches to) at its threads;
               after it, "run P%": the value over the median of the same loop's `peak` case timed
               in this run (peer_table.sh adds them; interleaved, it met the kernels' host states).
  run's peak   a peak/<op>/<isa>/<dtype>/... case of the run: characterize's loop of that ceiling,
               timed among the kernels (docs/families/peak.md); not a row of its own.
  CPU class    <vendor>-<microarchitecture or product line>-<widest ISA>, from cpu.json (CPUID
               vendor, family, model, brand string) and machine.json (host.isa).
Each class file starts with a marker line that the index is rebuilt from; a refresh rewrites
its own class file and the index only.
"""
from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

from rooflab import cli
from rooflab.data.jsonfile import Checker, RooflabDataError, read_schema_file, write_text_atomic
from rooflab.data.run import gbench_seconds, parse_name
from rooflab.gate import mann_whitney_p

PROG = "plots/peer_table.py"
HOW = "scripts/peer_table.sh"
MARKER = re.compile(r"^<!-- rooflab peer table: class=(\S+) date=(\S+) cpu=(.*) -->$")
LIBRARY_LABEL = {"sfc_ca_libxsmm": "LIBXSMM (rooflab SFC-CA on LIBXSMM)", "openblas": "OpenBLAS", "blis": "BLIS",
                 "onednn": "oneDNN"}


# ----------------------------------------------------------------------------- CPU class

def _amd_uarch(family: int | None, model: int | None) -> str:
    """AMD's Zen generations by CPUID family / model (AMD's published model ranges)."""
    if family == 0x17:
        return "zen2" if model is not None and model >= 0x30 else "zen"
    if family == 0x19:
        zen4 = model is not None and (0x10 <= model <= 0x1F or 0x60 <= model <= 0x7F or 0xA0 <= model <= 0xAF)
        return "zen4" if zen4 else "zen3"
    if family == 0x1A:
        return "zen5"
    return f"fam{family}" if family is not None else "unknown"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def cpu_class(cpu: dict | None, machine: dict) -> str:
    """<vendor>-<uarch or line>-<widest ISA>; cpu None (no cpu.json): the brand string's first
    two words stand for vendor and line."""
    isas = (machine.get("host") or {}).get("isa") or []
    widest = (machine.get("compute") or {}).get("isa") or (isas[-1] if isas else "unknown")
    brand = (cpu or {}).get("model_name") or (machine.get("host") or {}).get("cpu") or ""
    vendor = (cpu or {}).get("vendor") or ""
    if vendor == "AuthenticAMD":
        mid = "amd-" + _amd_uarch(cpu.get("family"), cpu.get("model"))
    elif vendor == "GenuineIntel":
        line = next((w for w in ("xeon", "core", "atom", "pentium", "celeron") if w in brand.lower()), None)
        mid = "intel-" + (line or f"fam{cpu.get('family')}-model{cpu.get('model')}")
    elif vendor:
        mid = _slug(vendor) + "-" + _slug(brand)
    else:
        mid = "-".join(_slug(brand).split("-")[:2])
    return f"{mid}-{_slug(widest)}"


# ----------------------------------------------------------------------------- inputs

_SIGNATURE = re.compile(r"^(\S+) family (\d+) model (\d+) stepping \d+$")


def cpu_facts(cpu: dict | None, machine: dict) -> dict | None:
    """Vendor, family and model from machine.json's host.cpu_signature (the one record of the CPU,
    written by rooflab characterize); cpu.json's for a machine.json written before it (older runs),
    which still gives the brand string."""
    sig = (machine.get("host") or {}).get("cpu_signature")
    hit = _SIGNATURE.match(sig) if isinstance(sig, str) else None
    if not hit:
        return cpu
    return {**(cpu or {}), "vendor": hit[1], "family": int(hit[2]), "model": int(hit[3])}


def _read_optional(path: Path, schema: str) -> dict | None:
    return read_schema_file(path, schema, 1, HOW) if path.exists() else None


def load(run: Path) -> dict:
    run = Path(run)
    pr = read_schema_file(run / "peer_run.json", "rooflab.peer_run", 1, HOW,
                          missing=f"{run / 'peer_run.json'} is missing: {run} is not a run of {HOW}")
    ck = Checker(run / "peer_run.json")
    for k in ("created", "commit", "command"):
        ck.get(pr, k, "$", (str,))
    ck.items(pr, "cases", "$", of=(str,))
    for i, s in enumerate(ck.items(pr, "steps", "$")):
        for k in ("id", "status", "message"):
            ck.get(s, k, f"$.steps[{i}]", (str,))
    machine = read_schema_file(run / "machine.json", "rooflab.machine", 1, "rooflab characterize")
    return {"run": run, "peer_run": pr, "cpu": cpu_facts(_read_optional(run / "cpu.json", "rooflab.cpuid"), machine),
            "machine": machine, "bench": _read_optional(run / "bench.json", "rooflab.bench"),
            "pot": _read_optional(run / "pot_compare.json", "rooflab.pot_compare")}


def step(doc: dict, sid: str) -> dict | None:
    return next((s for s in doc["peer_run"]["steps"] if s["id"] == sid), None)


def ceiling(machine: dict, isa: str | None, key: str | None, threads: int) -> float | None:
    """GFLOP/s of `key` for `isa` (None: the widest) at `threads`, or None when not measured."""
    comp = machine.get("compute") or {}
    isa = isa or comp.get("isa")
    table = ((comp.get("by_isa") or {}).get(isa) or {}).get("ceilings")
    if table is None and isa == comp.get("isa"):
        table = comp.get("ceilings")
    v = ((table or {}).get(key or "") or {}).get(str(threads))
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def case_rows(doc: dict) -> list[dict]:
    """One row per case asked for: its identity, status (ok / failed / absent), the median time
    and GFLOP/s of its repetitions, its code path, the % of its ceiling."""
    bench, machine = doc["bench"], doc["machine"]
    ck = Checker(doc["run"] / "bench.json")
    entries = ck.get(bench, "benchmarks", "$", (list,)) if bench else []
    rows = []
    for name in doc["peer_run"]["cases"]:
        mine = [b for b in entries if isinstance(b, dict) and (b.get("run_name") or b.get("name")) is not None
                and ((b.get("run_name") or b["name"]) == name or (b.get("run_name") or b["name"]).startswith(name + "/"))]
        row = {"name": name, "status": "absent", "message": "not in bench.json", "rl": {}}
        parts = name.split("/")
        row["family"], row["variant"] = parts[0], parts[1]
        if not bench:
            s = step(doc, "bench")
            row["message"] = f"not measured ({s['message'] if s and s['message'] else 'no bench.json'})"
        failed = [b for b in mine if b.get("error_occurred")]
        iters = [b for b in mine if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred")]
        if mine:
            rl = ck.get(mine[0], "rooflab", "$.benchmarks[]", (dict,))
            row["rl"] = rl
        if failed:
            row.update(status="failed", message=failed[0].get("error_message") or "failed")
        elif iters:
            secs = [gbench_seconds(ck, b, "$.benchmarks[]", name) for b in iters]
            med = statistics.median(secs)
            rl = row["rl"]
            gflops = float(rl.get("flops") or 0) / med / 1e9
            ceil = ceiling(machine, rl.get("isa"), rl.get("compute_ceiling"), int(rl.get("threads") or 0))
            row.update(status="ok", message="", seconds=med, gflops=gflops, reps=len(secs),
                       disturbed=bool(rl.get("disturbed")), ceiling=ceil,
                       fraction=gflops / ceil if ceil and gflops > 0 else None)
            # `bench --rounds N`: every round's median (the row's own is the kept round's)
            rounds = [float(x["median_s"]) for x in rl.get("rounds") or []
                      if isinstance(x, dict) and (x.get("median_s") or 0) > 0]
            if len(rounds) > 1:
                row["round_seconds"] = rounds
            elif doc["peer_run"].get("interleaved") is True and len(secs) > 1:
                row["rep_seconds"] = secs
            # bench kept a re-measurement's rows (timed after the pass, among the re-measured cases only)
            row["remeasured"] = int(rl.get("kept_retry") or 0) > 0
        rl = row["rl"]
        row["isa"] = rl.get("isa") if rl else (parts[2] if len(parts) > 2 and parts[2] in ("scalar", "avx2", "avx512") else None)
        row["code_path"] = rl.get("code_path") if isinstance(rl.get("code_path"), dict) else None
        row["peer"] = row["code_path"] is not None or row["variant"] in LIBRARY_LABEL
        row["dtype"] = rl.get("dtype") or next((p for p in parts if p in ("f32", "f64")), "?")
        row["dims"] = next((p for p in parts if re.fullmatch(r"\d+(x\d+)+", p)), "?")
        row["params"] = "/".join(p for p in parts[2:] if ":" in p and not p.startswith("threads:"))
        row["threads"] = int(parts[-1].split(":")[1]) if parts[-1].startswith("threads:") else None
        rows.append(row)
    peaks = run_peaks(rows)
    widest = (machine.get("compute") or {}).get("isa")
    for r in rows:
        if r["family"] == "peak" or r["status"] != "ok" or not r["gflops"]:
            continue
        pk = peaks.get((r["rl"].get("compute_ceiling"), r["isa"] or widest, r["threads"]))
        if pk:
            r.update(run_peak=pk, run_fraction=r["gflops"] / pk)
    return rows


def run_peaks(rows: list[dict]) -> dict[tuple, float]:
    """{(ceiling name, ISA, threads): median GFLOP/s} of the run's verified peak cases."""
    return {(r["rl"].get("compute_ceiling"), r["isa"], r["threads"]): r["gflops"]
            for r in rows if r["family"] == "peak" and r["status"] == "ok" and r["gflops"] > 0}


# ----------------------------------------------------------------------------- formatting

def _num(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def _impl(r: dict) -> str:
    label = LIBRARY_LABEL.get(r["variant"]) if r["peer"] else None
    if label:
        return label
    return r["variant"] + (f"/{r['isa']}" if r["isa"] else "") + (f" ({r['params']})" if r["params"] else "")


def _path_cell(r: dict) -> str:
    cp = r["code_path"]
    if not cp:
        return "rooflab's own" if not r["peer"] else "—"
    cell = f"{cp.get('library') or '?'}: {cp.get('ran') or '?'}"
    if cp.get("representative") is False:
        cell += f" — **not its best** (best: {cp.get('best') or '?'}; {cp.get('reason') or 'no reason given'})"
    return cell.replace("|", "/")


def _value_cell(r: dict, fmt) -> str:
    if r["status"] == "failed":
        return f"**FAILED**: {cli.one_line(r['message'])}".replace("|", "/")
    if r["status"] != "ok":
        return f"— ({cli.one_line(r['message'])})".replace("|", "/")
    cell = fmt(r)

    def spread(what: str, secs: list[float], remeasured: str) -> str:  # " (what worst–best[, remeasured])"
        flops = float(r["rl"].get("flops") or 0)
        worst, best = (fmt({**r, "seconds": t, "gflops": flops / t / 1e9}) for t in (max(secs), min(secs)))
        return f" ({what} {worst}–{best}" + (f", {remeasured}" if r.get("remeasured") else "") + ")"
    if r.get("round_seconds"):
        cell += spread("rounds", r["round_seconds"], "kept: a later re-measurement")
    elif r.get("rep_seconds"):
        cell += spread("reps", r["rep_seconds"], "re-measured after the interleaved pass")
    return cell + (f" ({r['reps']} reps, disturbed)" if r.get("disturbed") else "")


def _seconds(r: dict) -> str:
    return f"{r['seconds']:.3f}"


ABOVE_CEILING = 1.05  # a measured rate this far above its ceiling means the ceiling is wrong


def _pct(r: dict) -> str:
    run = f"run {100 * r['run_fraction']:.0f}%" if r.get("run_fraction") else ""
    if not r.get("fraction"):
        return run or "—"
    pct = f"{100 * r['fraction']:.0f}%"
    # Never a silent impossible number: the ceiling was measured low (machine.json
    # compute.warnings says when the threads shared a core), not the kernel above the peak.
    if r["fraction"] > ABOVE_CEILING:
        pct += " (**above the measured ceiling**: see the note above the tables)"
    return f"{pct} · {run}" if run else pct


SIGNIFICANCE = 0.05  # a ratio whose repetitions' U test gives p at or above this is marked n.s.
MIN_TEST_REPS = 5    # fewer: the U test cannot reach p < 0.05 (3 vs 3: p >= 0.1)


def _significance(best: dict, r: dict) -> str:
    """" (n.s., p P)" when the interleaved repetitions of rooflab's best and the peer do not
    differ by the U test; "" when they do, or when there are too few to test."""
    a, b = best.get("rep_seconds"), r.get("rep_seconds")
    if not a or not b or min(len(a), len(b)) < MIN_TEST_REPS:
        return ""
    try:
        p = mann_whitney_p(a, b)
    except RooflabDataError:  # no scipy: the ratio without its test
        return ""
    return f" (n.s., p {p:.2f})" if p >= SIGNIFICANCE else ""


def _best(rows: list[dict]) -> dict | None:
    own = [r for r in rows if not r["peer"] and r["status"] == "ok"]
    return max(own, key=lambda r: r["gflops"]) if own else None


def gemm_section(rows: list[dict]) -> list[str]:
    g = [r for r in rows if r["family"] == "gemm"]
    if not g:
        return []
    out = ["## GEMM (C = A·B, GFLOP/s, median of the repetitions)", "",
           "| work | implementation | code path | GFLOP/s | % of FMA ceiling | rooflab best / this |",
           "|---|---|---|---|---|---|"]
    for dtype, name in (("f32", "SGEMM"), ("f64", "DGEMM")):
        for dims in sorted({r["dims"] for r in g if r["dtype"] == dtype}, key=lambda d: [int(x) for x in d.split("x")]):
            item = [r for r in g if r["dtype"] == dtype and r["dims"] == dims]
            best = _best(item)
            n = dims.split("x")
            work = f"{name} {n[0]}^3" if len(set(n)) == 1 else f"{name} {dims}"
            work += f", {item[0]['threads']} threads" if item[0]["threads"] else ""
            own = sorted((r for r in item if not r["peer"]), key=lambda r: (r["status"] != "ok", -r.get("gflops", 0)))
            for r in own + [r for r in item if r["peer"]]:
                impl = _impl(r)
                if r is best:
                    impl = f"**{impl}** (rooflab best)"
                ratio = "—"
                if r["peer"] and best and r["status"] == "ok":
                    ratio = f"{best['gflops'] / r['gflops']:.2f}" + _significance(best, r)
                out.append(f"| {work} | {impl} | {_path_cell(r)} | {_value_cell(r, lambda x: _num(x['gflops']))} "
                           f"| {_pct(r) if r['status'] == 'ok' else '—'} | {ratio} |")
            if not best:
                out.append(f"| {work} | rooflab best | — | **no rooflab case verified and timed** | — | — |")
    out.append("")
    return out


def fw_section(rows: list[dict]) -> list[str]:
    f = [r for r in rows if r["family"] == "floyd_warshall"]
    if not f:
        return []
    out = ["## Floyd-Warshall (all-pairs shortest paths; time of one solve, median of the repetitions)", "",
           "No Floyd-Warshall peer is installed here (neither Debian nor PyPI packages one): rooflab's "
           "own variants only.", "",
           "| work | implementation | s | GFLOP/s (add+min) | % of add+min ceiling | peer |", "|---|---|---|---|---|---|"]
    # the best per work item: the 1-thread recursive rows (for the scaling below) are their own
    items: dict[tuple, list[dict]] = {}
    for r in f:
        items.setdefault((r["dtype"], r["dims"], r["threads"] or 0), []).append(r)
    for key in sorted(items, key=lambda k: (k[0], k[1], -k[2])):
        item = items[key]
        best = _best(item)
        for r in sorted(item, key=lambda r: (r["status"] != "ok", -r.get("gflops", 0))):
            n = r["dims"].split("x")[0]
            work = f"FW {r['dtype']} N={n}" + (f", {r['threads']} thread{'s' if r['threads'] != 1 else ''}" if r["threads"] else "")
            impl = _impl(r)
            if r is best:
                impl = f"**{impl}** (rooflab best)"
            out.append(f"| {work} | {impl} | {_value_cell(r, _seconds)} "
                       f"| {_num(r['gflops']) if r['status'] == 'ok' else '—'} | {_pct(r) if r['status'] == 'ok' else '—'} "
                       f"| none installed |")
    out.append("")
    return out + fw_scaling(f)


def fw_scaling(f: list[dict]) -> list[str]:
    """Issue 17's two Floyd-Warshall schedule checks, per ISA: the recursive schedule's speed-up
    from 1 thread to the run's threads (asked: >= 1.7x at 2) and its time over the blocked one's
    at those threads (asked: within 10%), each against the rows of the same tile size."""
    ok = [r for r in f if r["status"] == "ok" and r["threads"]]

    def tile(r: dict) -> str | None:
        return parse_name(r["name"])["params"].get("bs")

    lines = []
    for r in sorted((r for r in ok if "sched:rec" in r["params"] and r["threads"] > 1),
                    key=lambda r: (r["dtype"], r["dims"], r["isa"] or "", int(tile(r) or 0))):
        def twin(threads: int, sched: str) -> dict | None:
            return next((o for o in ok if o["isa"] == r["isa"] and o["dtype"] == r["dtype"] and o["dims"] == r["dims"]
                         and o["threads"] == threads and f"sched:{sched}" in o["params"] and tile(o) == tile(r)), None)
        one, blocked = twin(1, "rec"), twin(r["threads"], "blocked")
        if not one and not blocked:
            continue
        what = f"regblock/{r['isa']} {r['dtype']} N={r['dims'].split('x')[0]}" + (f" bs:{tile(r)}" if tile(r) else "") + ":"
        if one:
            what += (f" recursive, 1 → {r['threads']} threads {one['seconds']:.3f} → {r['seconds']:.3f} s, "
                     f"**{one['seconds'] / r['seconds']:.2f}x**")
        if blocked:
            what += (("," if one else "") + f" recursive / blocked at {r['threads']} threads "
                     f"**{r['seconds'] / blocked['seconds']:.2f}** in time")
        lines.append(f"- {what}")
    if not lines:
        return []
    return ["Schedules (issue 17 asks the recursive one to scale >= 1.7x from 1 to 2 threads and to run within "
            "10% of the blocked one's time):", ""] + lines + [""]


def pot_section(doc: dict) -> list[str]:
    s = step(doc, "pot")
    out = ["## Sinkhorn vs POT (balanced OT, f64, time per iteration; scripts/pot_compare.py)", ""]
    if s is None and doc["pot"] is None:
        return []
    if s is not None and s["status"] != "ok":
        out += [f"**FAILED**: {cli.one_line(s['message'])}".replace("|", "/"), ""]
        return out
    pot = doc["pot"]
    if pot is None:
        return out + ["— (no pot_compare.json)", ""]
    ck = Checker(doc["run"] / "pot_compare.json")
    rows = ck.items(pot, "rows", "$")
    out += [f"POT {pot.get('pot_version')}, reg {pot.get('reg')}, {pot.get('iters')} and {2 * int(pot.get('iters') or 0)} "
            "iterations per solve (POT's per-iteration time is their difference), best of "
            f"{pot.get('reps')}.", "",
            "| work | implementation | ms / iteration | GB/s (its DRAM traffic) | rooflab best / this |",
            "|---|---|---|---|---|"]
    for n in sorted({int(r["N"]) for r in rows}):
        item = [r for r in rows if int(r["N"]) == n]
        for i, r in enumerate(item):
            ck.get(r, "seconds_per_iteration", f"$.rows[{i}]", (float,))
        own = sorted((r for r in item if r["impl"] == "rooflab"), key=lambda r: r["seconds_per_iteration"])
        peers = [r for r in item if r["impl"] != "rooflab"]
        best = own[0] if own else None
        work = f"Sinkhorn f64 {n}x{n}, {item[0].get('threads')} threads"
        for r in own + peers:
            if r["impl"] == "rooflab":
                # the prefetch target only where it is not the default, as in a case name
                impl = r["variant"] + (f"/{r['isa']}" if r.get("isa") else "") + \
                    (f"/pf:{r['prefetch']}" if r.get("prefetch") not in (None, "l2") else "")
                impl = f"**{impl}** (rooflab best)" if r is best else impl
            else:
                impl = f"POT {r['variant']} (NumPy/BLAS)"
            ratio = f"{r['seconds_per_iteration'] / best['seconds_per_iteration']:.2f}" if best and r["impl"] != "rooflab" else "—"
            out.append(f"| {work} | {impl} | {1e3 * r['seconds_per_iteration']:.2f} | {_num(r.get('gbps') or 0)} | {ratio} |")
    out.append("")
    return out + sinkhorn_order(rows)


def sinkhorn_order(rows: list[dict]) -> list[str]:
    """Issue 17's Sinkhorn check: the COFFEE paper's blocked variant never slower than c2r (their
    times per iteration at each size and thread count, blocked / c2r: asked <= 1)."""
    lines = []
    for key in sorted({(int(r["N"]), r.get("threads")) for r in rows}, key=lambda k: (k[0], k[1] or 0)):
        def one(variant: str) -> dict | None:
            return next((r for r in rows if r["impl"] == "rooflab" and r["variant"] == variant
                         and (int(r["N"]), r.get("threads")) == key), None)
        blocked, c2r = one("blocked"), one("c2r")
        if blocked and c2r:
            lines.append(f"- Sinkhorn f64 {key[0]}x{key[0]}, {key[1]} threads: blocked / c2r "
                         f"{1e3 * blocked['seconds_per_iteration']:.2f} / {1e3 * c2r['seconds_per_iteration']:.2f} ms, "
                         f"**{blocked['seconds_per_iteration'] / c2r['seconds_per_iteration']:.2f}** in time")
    if not lines:
        return []
    return ["Variant order (issue 17 asks `blocked` never to be slower than `c2r`, the COFFEE paper's order):", ""] + lines + [""]


def _kib(v) -> str:
    if not isinstance(v, (int, float)) or v <= 0:
        return "?"
    return f"{v / 2**20:.3g} MiB" if v >= 2**20 else f"{v / 2**10:.3g} KiB"


def render(doc: dict, cls: str) -> str:
    pr, m, cpu = doc["peer_run"], doc["machine"], doc["cpu"] or {}
    host = m.get("host") or {}
    caches = m.get("caches") or {}
    rep, meas = caches.get("reported") or {}, caches.get("measured") or {}
    brand = cpu.get("model_name") or host.get("cpu") or "?"
    date = pr["created"]
    rows = case_rows(doc)
    comp = m.get("compute") or {}
    ceils = []
    threads = sorted({r["threads"] for r in rows if r["threads"]})
    for isa in [i for i in host.get("isa") or [] if i != "scalar"]:
        for t in threads:
            vals = [f"{k} {_num(c, 0)}" for k in ("fma_f32", "fma_f64", "addmin_f32")
                    if (c := ceiling(m, isa, k, t)) is not None]
            if vals:
                ceils.append(f"{isa} at {t} threads: " + ", ".join(vals))
    lines = [f"<!-- rooflab peer table: class={cls} date={date} cpu={brand} -->",
             f"# rooflab vs the installed peers: {cls}", "",
             "Written by `scripts/peer_table.sh` (plots/rooflab/peers.py); do not edit by hand. Ratios are "
             "rooflab's best over the peer in speed: above 1 rooflab is faster.", "",
             f"- CPU: {brand} ({cpu.get('vendor') or '?'} family {cpu.get('family', '?')} model {cpu.get('model', '?')}), "
             f"ISAs {', '.join(host.get('isa') or ['?'])}, {host.get('cores', '?')} cores / {host.get('threads', '?')} "
             f"threads{', ' + host['hypervisor'] + ' guest' if host.get('virtualized') and host.get('hypervisor') else ''}",
             f"- caches: L1d {_kib(rep.get('L1'))}, L2 {_kib(rep.get('L2'))}, L3 {_kib(rep.get('L3'))} "
             f"({rep.get('source', 'reported')}); measured L1 {_kib(meas.get('L1'))}, L2 {_kib(meas.get('L2'))}, "
             f"L3 {_kib(meas.get('L3'))}",
             f"- ceilings (GFLOP/s, machine.json {m.get('profile') or '?'} profile, {m.get('created', '?')}): "
             + ("; ".join(ceils) if ceils else "not measured"),
             f"- run: {date}, commit {pr['commit']}, {pr.get('wall_seconds', '?')} s",
             f"- command: `{pr['command']}`" + (" (under `scripts/cpu_lock.sh time`" if pr.get("locked", True)
                                               else " (`--no-lock`: under the caller's lock")
             + ", with " + " and ".join(pr.get("env_unset") or []) + " unset)", ""]
    for w in comp.get("warnings") or []:
        lines.append(f"- machine.json compute warning: {cli.one_line(w)}")
    if any((r.get("fraction") or 0) > ABOVE_CEILING for r in rows):
        lines.append(f"- **Some rows run above their measured ceiling** (more than {ABOVE_CEILING - 1:.0%}): "
                     "that ceiling was measured while the threads did not each have a core, so those "
                     "percentages are not efficiencies; the GFLOP/s and ratios stand. Run the table again.")
    if comp.get("warnings") or any((r.get("fraction") or 0) > ABOVE_CEILING for r in rows):
        lines.append("")
    rounds = (doc["bench"] or {}).get("rounds")
    nrounds = rounds.get("n") if isinstance(rounds, dict) else None
    if nrounds and nrounds > 1:
        lines += [f"- rounds: every case was timed in {nrounds} rounds, every other one in reverse order "
                  "(`rooflab bench --rounds`): a value is the median of the round the case kept (its fastest "
                  "undisturbed one, or a later re-measurement of a disturbed case), with its rounds' range "
                  "(worst–best) in brackets; ratios compare the kept values.", ""]
    peaks = run_peaks(rows)
    if peaks:
        vals = []
        for (key, isa, t), g in sorted(peaks.items(), key=lambda kv: (kv[0][1] or "", kv[0][2] or 0, kv[0][0] or "")):
            c = ceiling(m, isa, key, t or 0)
            vals.append(f"{isa} {key} at {t} thread{'s' if t != 1 else ''} {_num(g, 0)}"
                        + (f" ({100 * g / c:.0f}% of machine.json's)" if c else ""))
        lines += ["- the run's peaks (GFLOP/s, median; characterize's loops timed among the cases, "
                  "docs/families/peak.md): " + "; ".join(vals) + ". \"run P%\" after a % of ceiling: the value "
                  "over the run's peak of the same loop, ISA and threads — the host's speed then, not at "
                  "characterize's time, in the denominator.", ""]
    if pr.get("interleaved") is True:
        lines += ["- interleaved: every case's repetitions ran in random order among all cases' (Google Benchmark's "
                  "random interleaving), so each median spans the whole run and rooflab and each peer met the same "
                  "host states; ratios compare those medians; brackets give a case's repetitions' range (worst–best)"
                  + (" or, with rounds, its rounds' range" if nrounds and nrounds > 1 else "")
                  + "; \"n.s., p P\" after a ratio: the two cases' repetitions do not differ by a two-sided "
                  f"Mann-Whitney U test (p >= {SIGNIFICANCE}), the ratio is within this run's noise.", ""]
    failed = [s for s in pr["steps"] if s["status"] != "ok"]
    for s in failed:
        lines.append(f"- step {s['id']} **{s['status']}**: {cli.one_line(s['message'])}")
    if failed:
        lines.append("")
    lines += gemm_section(rows) + fw_section(rows) + pot_section(doc)
    return "\n".join(lines).rstrip() + "\n"


def write_index(tables: Path) -> Path:
    """README.md from the marker line of every class file in `tables`."""
    entries = []
    for p in sorted(tables.glob("*.md")):
        if p.name == "README.md":
            continue
        first = p.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        mk = MARKER.match(first)
        if mk:
            entries.append(f"- [{mk.group(1)}]({p.name}): {mk.group(2)}, {mk.group(3)}")
    text = ("# results/peers — rooflab vs the installed peers, one table per CPU class\n\n"
            "Refresh the table of the CPU at hand with `scripts/peer_table.sh` (one timing run of a few minutes; "
            "the other classes' tables stay as they are; each case's repetitions run in random order among all "
            "cases', so rooflab and each peer meet the same host states: on a host whose speed drifts, give it "
            "more of them, e.g. `--reps 9`).\n\n" + "\n".join(entries) + "\n")
    return write_text_atomic(tables / "README.md", text)


def main(argv=None) -> int:
    p = cli.Parser(PROG, "RUN [--tables DIR] [--class NAME]", description=__doc__,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_run_argument("a run directory of scripts/peer_table.sh")
    p.add_argument("--tables", default="results/peers", help="where <class>.md and README.md go (default results/peers)")
    p.add_argument("--class", dest="cls", default=None, help="the CPU class name (default: derived)")

    def body(a) -> int:
        if a.cls is not None and not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", a.cls):
            raise cli.UsageError(f"--class must be lower-case letters, digits, '.', '_', '-', got {a.cls!r}")
        doc = load(Path(a.run))
        cls = a.cls or cpu_class(doc["cpu"], doc["machine"])
        tables = Path(a.tables)
        try:
            tables.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RooflabDataError(f"{tables}: cannot create it ({e.strerror or e})") from None
        text = render(doc, cls)
        path = write_text_atomic(tables / f"{cls}.md", text)
        write_index(tables)
        print(f"wrote {path} and {tables / 'README.md'}")
        return 0

    return cli.run(p, body, argv)
