"""What `rooflab history add|import` stores of one run, read from a run directory (bench.json,
machine.json, model.json and counters.json where present) or from a Google Benchmark JSON file
made elsewhere. Everything is read and checked here, before the store opens a transaction, so a
bad input writes nothing.

The run's key (Run.key) is the SHA-256 of its bench.json (or Google Benchmark JSON) bytes: the
same measurement added twice has the same key, and the store keeps it once. A run directory with
counters.json and no bench.json (`rooflab counters --out DIR` alone: the deterministic counts
without timing, e.g. on a noisy CI runner) is a run of cachegrind counts only; its key is the
SHA-256 of counters.json.
"""
from __future__ import annotations

import hashlib
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rooflab.data.cpu_identity import cpu_identity
from rooflab.data.jsonfile import Checker, MalformedInput, RooflabDataError, canonical_text, check_schema, \
    read_document, read_schema_file
from rooflab.data.run import gbench_seconds

# Google Benchmark's name suffixes that say how a benchmark was run, not what it is: a series
# stays one series when the repetition count changes.
_RUN_SUFFIX = re.compile(r"/(repeats:\d+|min_time:[^/]+|min_warmup_time:[^/]+|iterations:\d+|real_time|"
                         r"manual_time|process_time)$")
COMMIT_RE = re.compile(r"[0-9a-f]{7,64}")


@dataclass
class Machine:
    fingerprint: str   # a stable hash of `facts`
    facts: dict        # the readable facts the hash is made of


@dataclass
class Result:
    benchmark: str
    status: str = "ok"                  # ok | failed
    message: str = ""
    samples: list[float] = field(default_factory=list)  # seconds per iteration, one per repetition
    median_s: float | None = None
    disturbed: bool = False
    disturbed_reason: str = ""
    efficiency: float | None = None     # model.json: attained / predicted
    counters: dict[str, float] = field(default_factory=dict)  # instructions, d1_misses, ll_misses
    counter_backend: str = ""


@dataclass
class Run:
    key: str
    source: str
    timestamp: str     # ISO 8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"
    commit: str
    build: dict
    machine: Machine
    ceilings: dict
    results: list[Result]


def canonical_name(name: str) -> str:
    while True:
        short = _RUN_SUFFIX.sub("", name)
        if short == name:
            return name
        name = short


def iso_utc(text: str, where: str) -> str:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise MalformedInput(f"{where}: {text!r} is not an ISO 8601 date") from None
    if t.tzinfo is None:  # Google Benchmark writes local time with its offset; none: take it as UTC
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fingerprint(facts: dict) -> Machine:
    digest = hashlib.sha256(canonical_text(facts).encode()).hexdigest()
    return Machine(digest[:16], facts)


def machine_of(path: Path, doc: dict) -> tuple[Machine, dict, dict]:
    """(machine, ceilings, build facts) of a machine.json. The fingerprint covers what makes two
    machines run a kernel alike: the CPU (data/cpu_identity.py's facts: model name, ISAs, the
    reported L1 / L2 sizes, host.cpu_signature where the file has it), and beyond the CPU its
    vendor, hardware threads and reported L3 size; not the host name (a CI pool of identical
    runners is one machine) nor the measured values. A hash cannot match a file without a
    signature to one with it, as same_cpu does: a machine characterized again after rooflab
    began recording signatures starts new series."""
    ck = Checker(path)
    host = ck.get(doc, "host", "$", (dict,))
    # required here (cpu_identity takes a file without them): a series needs a named machine
    ck.get(host, "cpu", "$.host", (str,))
    ck.items(host, "isa", "$.host", of=(str,))
    cpu = cpu_identity(doc, path)
    facts = {"cpu": cpu.name, "isa": sorted(cpu.isa),
             "threads": ck.opt(host, "threads", "$.host", (int,)),
             "vendor": ck.opt(host, "vendor", "$.host", (str,))
             or next((v for k, v in (("AMD", "AMD"), ("Intel", "Intel")) if k in cpu.name), "")}
    if cpu.signature:
        facts["signature"] = cpu.signature
    reported = ck.get(ck.get(doc, "caches", "$", (dict,)), "reported", "$.caches", (dict,))
    facts["caches"] = {lv: v for lv, v in (("L1", cpu.l1), ("L2", cpu.l2), ("L3", reported.get("L3")))
                       if isinstance(v, int)}
    bw = ck.opt(doc, "bandwidth", "$", (dict,), {})
    ceilings = {"compute": ck.opt(doc, "compute", "$", (dict,), {}),
                "bandwidth": {k: bw[k] for k in ("levels", "by_isa") if k in bw}}
    build = {k: doc[k] for k in ("rooflab_version", "build_type") if isinstance(doc.get(k), str)}
    return fingerprint(facts), ceilings, build


def named_machine(name: str) -> Machine:
    return fingerprint({"name": name})


def _results(path: Path, doc: dict) -> dict[str, Result]:
    """bench.json or Google Benchmark JSON -> {canonical name: Result}; aggregates are skipped
    except a median when the file holds only aggregates (--benchmark_report_aggregates_only)."""
    ck = Checker(path)
    out: dict[str, Result] = {}
    agg_median: dict[str, float] = {}
    for i, b in enumerate(ck.items(doc, "benchmarks", "$")):
        w = f"$.benchmarks[{i}]"
        rl = ck.opt(b, "rooflab", w, (dict,), {})
        name = canonical_name(ck.opt(rl, "name", f"{w}.rooflab", (str,)) or ck.opt(b, "run_name", w, (str,))
                              or ck.get(b, "name", w, (str,)))
        run_type = ck.opt(b, "run_type", w, (str,), "iteration")
        r = out.setdefault(name, Result(name))
        if ck.opt(rl, "disturbed", f"{w}.rooflab", (bool,), False):
            r.disturbed = True
            r.disturbed_reason = ck.opt(rl, "disturbed_reason", f"{w}.rooflab", (str,)) or "disturbed"
        if ck.opt(b, "error_occurred", w, (bool,), False) or ck.opt(b, "skipped", w, (bool,), False):
            r.status, r.message = "failed", ck.opt(b, "error_message", w, (str,)) or "error"
        elif run_type == "iteration":
            r.samples.append(gbench_seconds(ck, b, w, name))
        elif run_type == "aggregate" and ck.opt(b, "aggregate_name", w, (str,)) == "median":
            agg_median[name] = gbench_seconds(ck, b, w, name)
    for name, r in out.items():
        if r.status != "ok":
            r.samples = []
        elif r.samples:
            r.median_s = statistics.median(r.samples)
        elif name in agg_median:
            r.median_s = agg_median[name]
        else:
            r.status, r.message = "failed", "no timed repetition"
    if not out:
        raise RooflabDataError(f"{path}: no benchmarks in it")
    return out


def _efficiencies(path: Path, results: dict[str, Result]) -> None:
    doc = read_schema_file(path, "rooflab.model", 1, "`rooflab model`")
    ck = Checker(path)
    for i, row in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        r = results.get(canonical_name(ck.get(row, "name", w, (str,))))
        eff = ck.opt(row, "efficiency", w, (float,))
        if r is not None and r.status == "ok" and eff is not None and eff > 0:
            r.efficiency = eff


def _counters(path: Path, results: dict[str, Result]) -> None:
    """cachegrind's simulated counts only: deterministic, unlike a hardware back end's."""
    doc = read_schema_file(path, "rooflab.counters", 1, "`rooflab counters`")
    ck = Checker(path)
    for i, row in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        if ck.get(row, "backend", w, (str,)) != "cachegrind" or ck.opt(row, "status", w, (str,), "ok") != "ok":
            continue
        r = results.get(canonical_name(ck.get(row, "name", w, (str,))))
        if r is None:
            continue
        ev = ck.get(row, "events", w, (dict,))
        for k, v in ev.items():
            ck.value(v, f"{w}.events.{k}", (float,))
        c = {}
        if "Ir" in ev:
            c["instructions"] = float(ev["Ir"])
        if "D1mr" in ev and "D1mw" in ev:
            c["d1_misses"] = float(ev["D1mr"] + ev["D1mw"])
        if "DLmr" in ev and "DLmw" in ev:
            c["ll_misses"] = float(ev["DLmr"] + ev["DLmw"])
        if c:
            r.counters, r.counter_backend = c, "cachegrind"


def _counters_only(path: Path) -> tuple[dict, dict[str, Result]]:
    """counters.json of a directory without bench.json -> (the document, a Result per cachegrind
    row): ok rows get their counts (below, as for a timed run), failed ones their message; no
    time, no efficiency."""
    doc = read_schema_file(path, "rooflab.counters", 1, "`rooflab counters`")
    ck = Checker(path)
    results: dict[str, Result] = {}
    for i, row in enumerate(ck.items(doc, "rows", "$")):
        w = f"$.rows[{i}]"
        if ck.get(row, "backend", w, (str,)) != "cachegrind":
            continue
        name = canonical_name(ck.get(row, "name", w, (str,)))
        r = results.setdefault(name, Result(name))
        if ck.opt(row, "status", w, (str,), "ok") != "ok":
            r.status, r.message = "failed", ck.opt(row, "message", w, (str,)) or "not counted"
    if not results:
        raise RooflabDataError(f"{path}: no cachegrind rows (only cachegrind's simulated counts are stored)")
    return doc, results


def read_run(path_arg: str | Path, commit: str = "", machine_name: str = "") -> Run:
    """A run directory (bench.json + machine.json, model.json and counters.json when present;
    or counters.json alone: cachegrind's counts without times) or a Google Benchmark JSON file.
    A file, or a directory without machine.json, needs machine_name (the series key of a
    machine rooflab did not characterize)."""
    path = Path(path_arg)
    if not path.exists():
        raise RooflabDataError(f"{path}: no such run directory or file")
    if path.is_dir() and not (path / "bench.json").exists() and (path / "counters.json").exists():
        return _read_counters_run(path, commit, machine_name)
    bench_path = path / "bench.json" if path.is_dir() else path
    doc = read_document(bench_path, missing=f"{bench_path} not found: a run directory needs the bench.json of "
                                            "`rooflab bench --out DIR`")
    ck = Checker(bench_path)
    if isinstance(doc, dict) and "schema" in doc:
        check_schema(doc, bench_path, "rooflab.bench", 1, "`rooflab bench`")
    elif not (isinstance(doc, dict) and isinstance(doc.get("context"), dict) and "benchmarks" in doc):
        raise MalformedInput(f"{bench_path}: neither a rooflab bench.json nor a Google Benchmark JSON "
                             "(--benchmark_out_format=json) file")
    results = _results(bench_path, doc)
    ctx = ck.get(doc, "context", "$", (dict,)) if "schema" not in doc else ck.opt(doc, "context", "$", (dict,), {})
    build = {k: v for k, v in (("profile", doc.get("profile")), ("filter", doc.get("filter")),
                               ("executable", ctx.get("executable")),
                               ("library_build_type", ctx.get("library_build_type"))) if isinstance(v, str)}
    machine_doc, machine, ceilings = _machine(path, bench_path, machine_name, build)
    if path.is_dir():
        for fname, read in (("model.json", _efficiencies), ("counters.json", _counters)):
            if (path / fname).exists():
                read(path / fname, results)
    when = (ck.opt(doc, "created", "$", (str,)) or ck.opt(ctx, "date", "$.context", (str,))
            or (machine_doc or {}).get("created"))
    if not isinstance(when, str):
        raise RooflabDataError(f"{bench_path}: no date (\"created\" or context.date): cannot place the run in "
                               "the history")
    recorded = ck.opt(doc, "commit", "$", (str,)) or ck.opt(ctx, "commit", "$.context", (str,)) or ""
    if commit and recorded and not recorded.startswith(commit) and not commit.startswith(recorded):
        raise RooflabDataError(f"{bench_path}: records commit {recorded}, not --commit {commit}")
    key = hashlib.sha256(bench_path.read_bytes()).hexdigest()
    return Run(key=key, source=str(path), timestamp=iso_utc(when, f"{bench_path}: date"),
               commit=commit or recorded, build=build, machine=machine, ceilings=ceilings,
               results=sorted(results.values(), key=lambda r: r.benchmark))


def _machine(path: Path, beside: Path, machine_name: str, build: dict) -> tuple[dict | None, Machine, dict]:
    """(machine.json's document or None, the machine, its ceilings) of a run directory; adds
    machine.json's build facts to `build`. --machine-name replaces the fingerprint."""
    machine_path = beside.parent / "machine.json"
    machine_doc = None
    if path.is_dir() and machine_path.exists():
        machine_doc = read_schema_file(machine_path, "rooflab.machine", 1, "`rooflab characterize`")
    ceilings: dict = {}
    machine = None
    if machine_doc is not None:
        machine, ceilings, mbuild = machine_of(machine_path, machine_doc)
        build.update(mbuild)
    if machine_name:
        machine = named_machine(machine_name)
    elif machine_doc is None:
        raise RooflabDataError(f"{path}: no machine.json beside {beside.name}: give --machine-name NAME "
                               "(the series key of that machine)")
    return machine_doc, machine, ceilings


def _read_counters_run(path: Path, commit: str, machine_name: str) -> Run:
    """A run directory of `rooflab counters` alone (no bench.json): the cachegrind counts."""
    counters_path = path / "counters.json"
    doc, results = _counters_only(counters_path)
    _counters(counters_path, results)
    build: dict = {"kind": "counters only"}
    machine_doc, machine, ceilings = _machine(path, counters_path, machine_name, build)
    when = doc.get("updated") if isinstance(doc.get("updated"), str) else (machine_doc or {}).get("created")
    if not isinstance(when, str):
        raise RooflabDataError(f"{counters_path}: no date (\"updated\"): cannot place the run in the history")
    return Run(key=hashlib.sha256(counters_path.read_bytes()).hexdigest(), source=str(path),
               timestamp=iso_utc(when, f"{counters_path}: updated"), commit=commit, build=build, machine=machine,
               ceilings=ceilings, results=sorted(results.values(), key=lambda r: r.benchmark))
