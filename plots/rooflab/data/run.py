"""A rooflab run directory's four core files (docs/json.md): machine.json, bench.json,
model.json and counters.json, checked and turned into DataFrames (Run, load_run).

Parsing is jsonfile.read_document's; here a file that is missing names the `rooflab` command
that writes it, an unknown schema major version is refused, and a documented key that is
missing or has the wrong type is reported with its path inside the file. Only documented keys
are read; extra keys are tolerated so a newer minor version of a file still loads.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rooflab.data.jsonfile import Checker, RooflabDataError, is_number, read_schema_file

# kind -> (file name, schema name, supported major version, command that writes it)
FILES = {
    "machine": ("machine.json", "rooflab.machine", 1, "rooflab characterize"),
    "bench": ("bench.json", "rooflab.bench", 1, "rooflab bench"),
    "model": ("model.json", "rooflab.model", 1, "rooflab model"),
    "counters": ("counters.json", "rooflab.counters", 1, "rooflab counters"),
}
LEVELS = ("L1", "L2", "L3", "DRAM")
CACHE_LEVELS = ("L1", "L2", "L3")
STATUSES = ("ok", "failed", "skipped")
# Google Benchmark's time units (benchmark::TimeUnit); any other is refused, never read as seconds.
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}



# ----------------------------------------------------------------------------- raw JSON

def read_json(run_dir: str | Path, kind: str) -> dict:
    """Parses <run_dir>/<kind>.json and checks its schema; raises RooflabDataError otherwise.
    machine.json comes with its sections joined (join_machine_sections)."""
    fname, schema, major, command = FILES[kind]
    run = Path(run_dir)
    if not run.is_dir():
        raise RooflabDataError(f"run directory {run} does not exist (create one with `rooflab characterize --out {run}`)")
    path = run / fname
    doc = read_schema_file(path, schema, major, f"`{command}`", missing=f"{path} not found: run `{command}` to produce it")
    return join_machine_sections(doc, path) if kind == "machine" else doc


# the command that measures each machine section (docs/json.md "Machine sections")
SECTION_COMMANDS = {"gpu": "rooflab gpu-characterize", "rtamm": "rooflab rtamm units",
                    "rtamm_calibration": "rooflab rtamm calibrate", "isa_choice": "rooflab isa-calibrate",
                    "mpi": "rooflab_mpi --pingpong --machine", "mpi_timeslice": "rooflab_mpi --timeslice --machine"}


def _revision(doc: dict) -> str:
    return doc.get("revision", doc.get("created", ""))


def join_machine_sections(machine: dict, path: Path) -> dict:
    """machine.json as rooflab reads it (harness read_machine_json): each machine.<section>.json
    beside it becomes the top-level key <section>, unless it was measured for an earlier
    machine.json (its machine_created differs), or it was fitted on another section ("fitted_on":
    the rtamm calibration on the rtamm units) that was rewritten since or is not joined itself:
    then it is named under "stale_sections" with the reason instead. A section file that is
    unusable, or whose "section" is not its name, is an error."""
    secs: dict[str, tuple[Path, dict]] = {}
    stale: dict[str, str] = {}
    for f in sorted(path.parent.glob("machine.?*.json")):
        section = f.name[len("machine."):-len(".json")]
        doc = read_schema_file(f, "rooflab.machine_section", 1, f"`{SECTION_COMMANDS.get(section, 'rooflab')}`")
        ck = Checker(f)
        if ck.get(doc, "section", "$", (str,)) != section or "value" not in doc:
            raise ck.fail("$.section", f'"{doc["section"]}" does not match the file name (expected "{section}", '
                                       'and a "value")')
        for dep in ck.opt(doc, "fitted_on", "$", (dict,), {}):
            ck.get(doc["fitted_on"], dep, "$.fitted_on", (str,))
        secs[section] = (f, doc)
        made = ck.opt(doc, "machine_created", "$", (str,), "")
        if made != machine.get("created", ""):
            stale[section] = f"{f.name} was measured for the machine.json of {made or '?'}; machine.json is now from " \
                             f"{machine.get('created', '?')}"
    changed = True
    while changed:  # a section fitted on a stale one is stale too
        changed = False
        for section, (f, doc) in secs.items():
            if section in stale:
                continue
            for dep, was in doc.get("fitted_on", {}).items():
                dep_file = f"machine.{dep}.json"
                if dep not in secs:
                    why = "" if was == "inline" and dep in machine else f"{dep_file} is missing"
                elif dep in stale:
                    why = f"{dep_file} is not used itself"
                elif _revision(secs[dep][1]) != was:
                    why = f"{dep_file} is now revision {_revision(secs[dep][1])}"
                else:
                    why = ""
                if why:
                    stale[section] = f"{f.name} was fitted on {dep_file} revision {was}; {why}"
                    changed = True
                    break
    for section, (f, doc) in secs.items():
        if section in stale:
            machine.setdefault("stale_sections", {})[section] = (
                f"{stale[section]} (rerun `{SECTION_COMMANDS.get(section, 'its command')}`)")
        else:
            machine[section] = doc["value"]
    return machine


def read_family_json(run_dir: str | Path, fname: str, schema: str, how: str) -> dict:
    """A family's own output file in a run directory (pot_compare.json, mpi_sweep.json,
    rtamm.json, gemm_knobs.json, ...): parsed, with its schema checked ("<name>/<major>");
    RooflabDataError naming `how` (the command that writes it) when absent, MalformedInput
    when unusable."""
    path = Path(run_dir) / fname
    name, _, major = schema.partition("/")
    return read_schema_file(path, name, major or 1, how, missing=f"{path} is missing: run {how}")


def gbench_seconds(ck: Checker, b: dict, where: str, name: str) -> float:
    """real_time of one Google Benchmark entry in seconds, from its time_unit (ns, us, ms, s);
    an unknown or absent unit is an error naming the benchmark, never a guess."""
    unit = ck.get(b, "time_unit", where, (str,))
    if unit not in TIME_UNITS:
        raise ck.fail(f"{where}.time_unit", f'benchmark {name}: unknown time unit "{unit}" '
                      f"(Google Benchmark writes one of {', '.join(TIME_UNITS)})")
    t = ck.get(b, "real_time", where, (float,))
    if t <= 0:
        raise ck.fail(f"{where}.real_time", f"benchmark {name}: a timed repetition needs a positive time, got {t}")
    return t * TIME_UNITS[unit]


# ----------------------------------------------------------------------------- tables

def _threads_table(ck: Checker, obj: Any, where: str) -> dict[int, float]:
    """{"1": 39.0, "2": 78.0} -> {1: 39.0, 2: 78.0}; an empty object means "not measured"."""
    if not isinstance(obj, dict):
        raise ck.fail(where, "expected an object of thread count -> value")
    out = {}
    for t, v in obj.items():
        if not str(t).isdigit() or int(t) < 1:
            raise ck.fail(where, f'thread count key "{t}" is not a positive integer')
        if not is_number(v):
            raise ck.fail(f"{where}.{t}", f"expected a number, got {v!r}")
        out[int(t)] = float(v)
    return out


def machine_frames(machine: dict, path: Path) -> dict[str, pd.DataFrame]:
    """machine.json -> DataFrames: caches, curves, levels, compute."""
    ck = Checker(path)
    caches = ck.get(machine, "caches", "$", (dict,))
    reported = ck.get(caches, "reported", "$.caches", (dict,))
    measured = ck.get(caches, "measured", "$.caches", (dict,))
    cache_rows = []
    for lv in CACHE_LEVELS:
        r = reported.get(lv)
        m = measured.get(lv)
        for side, v in (("reported", r), ("measured", m)):
            if v is not None and (not is_number(v) or v <= 0):
                raise ck.fail(f"$.caches.{side}.{lv}", f"expected a positive size in bytes, got {v!r}")
        if r is not None or m is not None:
            cache_rows.append({"level": lv, "reported": r, "measured": m})
    caches_df = pd.DataFrame(cache_rows, columns=["level", "reported", "measured"])

    bw = ck.get(machine, "bandwidth", "$", (dict,))
    curve_rows = []
    for i, c in enumerate(ck.get(bw, "curves", "$.bandwidth", (list,))):
        where = f"$.bandwidth.curves[{i}]"
        kernel = ck.get(c, "kernel", where, (str,))
        threads = ck.get(c, "threads", where, (int,))
        nt = ck.get(c, "nontemporal", where, (bool,))
        for j, p in enumerate(ck.get(c, "points", where, (list,))):
            pw = f"{where}.points[{j}]"
            curve_rows.append({"kernel": kernel, "threads": threads, "nontemporal": nt,
                               "bytes": ck.get(p, "bytes", pw, (float,)),
                               "gbps": ck.get(p, "gbps", pw, (float,))})
    curves_df = pd.DataFrame(curve_rows, columns=["kernel", "threads", "nontemporal", "bytes", "gbps"])

    level_rows = []
    levels = ck.get(bw, "levels", "$.bandwidth", (dict,))
    for lv, kernels in levels.items():
        if lv not in LEVELS:
            raise ck.fail("$.bandwidth.levels", f'unknown level "{lv}" (expected one of {", ".join(LEVELS)})')
        if not isinstance(kernels, dict):
            raise ck.fail(f"$.bandwidth.levels.{lv}", "expected an object of kernel -> threads -> GB/s")
        for kernel, per_t in kernels.items():
            for t, v in _threads_table(ck, per_t, f"$.bandwidth.levels.{lv}.{kernel}").items():
                level_rows.append({"level": lv, "kernel": kernel, "threads": t, "gbps": v})
    levels_df = pd.DataFrame(level_rows, columns=["level", "kernel", "threads", "gbps"])
    # In-cache levels per ISA (bandwidth.by_isa); absent in files from before it.
    bw_isa_rows = []
    for isa, tab in ck.opt(bw, "by_isa", "$.bandwidth", (dict,), {}).items():
        where = f"$.bandwidth.by_isa.{isa}"
        for lv, kernels in ck.get(tab, "levels", where, (dict,)).items():
            if not isinstance(kernels, dict):
                raise ck.fail(f"{where}.levels.{lv}", "expected an object of kernel -> threads -> GB/s")
            for kernel, per_t in kernels.items():
                for t, v in _threads_table(ck, per_t, f"{where}.levels.{lv}.{kernel}").items():
                    bw_isa_rows.append({"isa": isa, "level": lv, "kernel": kernel, "threads": t, "gbps": v})
    bw_isa_df = pd.DataFrame(bw_isa_rows, columns=["isa", "level", "kernel", "threads", "gbps"])

    comp = ck.get(machine, "compute", "$", (dict,))
    compute_rows = []
    for key, per_t in ck.get(comp, "ceilings", "$.compute", (dict,)).items():
        for t, v in _threads_table(ck, per_t, f"$.compute.ceilings.{key}").items():
            compute_rows.append({"key": key, "threads": t, "gflops": v})
    compute_df = pd.DataFrame(compute_rows, columns=["key", "threads", "gflops"])
    # Per ISA (compute.by_isa); a file from before it has the widest ISA's table only.
    by_isa = ck.opt(comp, "by_isa", "$.compute", (dict,), None)
    if by_isa is None:
        by_isa = {ck.opt(comp, "isa", "$.compute", (str,), "?"): {"ceilings": comp.get("ceilings", {})}}
    isa_rows = []
    for isa, tab in by_isa.items():
        where = f"$.compute.by_isa.{isa}"
        for key, per_t in ck.get(tab, "ceilings", where, (dict,)).items():
            for t, v in _threads_table(ck, per_t, f"{where}.ceilings.{key}").items():
                isa_rows.append({"isa": isa, "key": key, "threads": t, "gflops": v})
    compute_isa_df = pd.DataFrame(isa_rows, columns=["isa", "key", "threads", "gflops"])
    _machine_context(ck, machine)
    return {"caches": caches_df, "curves": curves_df, "levels": levels_df, "compute": compute_df,
            "compute_by_isa": compute_isa_df, "bandwidth_by_isa": bw_isa_df}


def _strings(ck: Checker, obj: dict, key: str, where: str) -> list[str]:
    return ck.items(obj, key, where, required=False, of=(str,))


def _machine_context(ck: Checker, m: dict) -> None:
    """The descriptive keys the report prints as they are: optional, but of the documented type
    when present (a list where an object belongs would otherwise fail deep in the report)."""
    host = ck.opt(m, "host", "$", (dict,), {})
    for k in ("hostname", "cpu", "hypervisor"):
        ck.opt(host, k, "$.host", (str,))
    for k in ("cores", "threads", "machine_cores"):
        ck.opt(host, k, "$.host", (int,))
    ck.items(host, "cpus", "$.host", required=False, of=(int,))
    ck.opt(host, "virtualized", "$.host", (bool,))
    _strings(ck, host, "isa", "$.host")
    _strings(ck, m, "diagnostics", "$")
    for k in ("build_type", "created", "rooflab_version", "profile"):
        ck.opt(m, k, "$", (str,))
    caches = m["caches"]
    _strings(ck, caches, "warnings", "$.caches")
    for side in ("reported", "measured"):
        ck.opt(caches[side], "source", f"$.caches.{side}", (str,))
    ck.opt(m["bandwidth"], "write_allocate_counted", "$.bandwidth", (bool,))
    ck.opt(m["compute"], "isa", "$.compute", (str,))
    lb = ck.opt(m, "likwid_bench", "$", (dict,), {})
    ck.opt(lb, "available", "$.likwid_bench", (bool,))
    ck.opt(lb, "reason", "$.likwid_bench", (str,))
    ck.opt(lb, "tolerance", "$.likwid_bench", (float,))
    _strings(ck, lb, "disagreements", "$.likwid_bench")
    for i, p in enumerate(ck.items(lb, "points", "$.likwid_bench", required=False)):
        w = f"$.likwid_bench.points[{i}]"
        for k in ("kernel", "test", "level"):
            ck.opt(p, k, w, (str,))
        ck.opt(p, "threads", w, (int,))
        ck.opt(p, "agrees", w, (bool,))
        for k in ("bytes", "gbps", "rooflab_gbps", "rooflab_ceiling_gbps", "ratio"):
            ck.opt(p, k, w, (float,))
    _strings(ck, m["bandwidth"], "warnings", "$.bandwidth")
    ck.opt(m, "method", "$", (dict,))
    for k in ck.opt(m, "stale_sections", "$", (dict,), {}):
        ck.get(m["stale_sections"], k, "$.stale_sections", (str,))
    gpu = ck.opt(m, "gpu", "$", (dict,))
    if gpu is not None:  # `rooflab gpu-characterize`'s section: numbers where the GPU figures read them
        ck.opt(gpu, "schema", "$.gpu", (str,))
        ck.opt(ck.opt(gpu, "device", "$.gpu", (dict,), {}), "name", "$.gpu.device", (str,))
        for k in ck.opt(gpu, "compute", "$.gpu", (dict,), {}):
            ck.get(gpu["compute"], k, "$.gpu.compute", (float,), nullable=True)
        for lv, per_k in ck.opt(gpu, "bandwidth", "$.gpu", (dict,), {}).items():
            for k in ck.value(per_k, f"$.gpu.bandwidth.{lv}", (dict,)):
                ck.get(per_k, k, f"$.gpu.bandwidth.{lv}", (float,), nullable=True)


def _or(v, default):
    return default if v is None else v


def parse_name(name: str) -> dict:
    """The fields a benchmark name carries (README "Names"): family, variant, isa, dtype, dims,
    params, threads; what the name lacks is None. Fills the null fields of a failed row."""
    parts = name.split("/")
    out = {"family": parts[0], "variant": parts[1] if len(parts) > 1 else "", "isa": None, "dtype": None,
           "dims": [], "params": {}, "threads": None}
    rest = parts[2:]
    if rest and rest[0] in ("scalar", "avx2", "avx512"):
        out["isa"], rest = rest[0], rest[1:]
    if rest and rest[0] in ("f32", "f64"):
        out["dtype"], rest = rest[0], rest[1:]
    if rest and all(x.isdigit() for x in rest[0].split("x")):
        out["dims"], rest = [int(x) for x in rest[0].split("x")], rest[1:]
    for p in rest:
        k, _, v = p.partition(":")
        if k == "threads" and v.isdigit():
            out["threads"] = int(v)
        elif v:
            out["params"][k] = v
    return out


MODEL_COLUMNS = ["name", "family", "variant", "isa", "dtype", "dims", "params", "threads", "status",
                 "message", "median_s", "cv", "repetitions", "flops", "bytes", "intensity", "gflops",
                 "gbps", "predicted_s", "bound", "level", "ceiling_gflops", "compute_isa", "ceiling_gbps",
                 "efficiency", "disturbed", "disturbed_reason", "ecm_s", "ecm_fallback"]
# Measured fields: required numbers on an "ok" row, null (or absent) otherwise.
_MEASURED = ("median_s", "gflops", "gbps")
# Prediction fields: null when no machine.json was available to `rooflab model`.
_PREDICTED = ("predicted_s", "ceiling_gflops", "ceiling_gbps", "efficiency")


def model_frame(model: dict, path: Path) -> pd.DataFrame:
    """model.json rows -> DataFrame with MODEL_COLUMNS (missing numbers are NaN). A failed or
    skipped row needs only name, status and message: `rooflab model` writes null for what the
    case never got (a case whose model or setup threw has no dims, flops, ...); its family and
    variant then come from the name."""
    ck = Checker(path)
    rows = []
    for i, r in enumerate(ck.get(model, "rows", "$", (list,))):
        w = f"$.rows[{i}]"
        status = ck.get(r, "status", w, (str,))
        if status not in STATUSES:
            raise ck.fail(f"{w}.status", f'"{status}" is not one of {", ".join(STATUSES)}')
        ok = status == "ok"
        name = ck.get(r, "name", w, (str,))
        # Identity and work fields: required on an ok row; on a failed or skipped row null or
        # absent, and then taken from the name where it has them.
        field = lambda k, types: ck.get(r, k, w, types, nullable=not ok) if (ok or k in r) else None
        named = parse_name(name) if not ok else {}
        row = {
            "name": name,
            "family": _or(field("family", (str,)), named.get("family")),
            "variant": _or(field("variant", (str,)), named.get("variant")),
            "isa": ck.get(r, "isa", w, (str,), nullable=True) if (ok or "isa" in r) else None,
            "dtype": _or(field("dtype", (str,)), named.get("dtype")),
            "dims": _or(field("dims", (list,)), named.get("dims")),
            "params": _or(field("params", (dict,)), named.get("params")),
            "threads": _or(field("threads", (int,)), _or(named.get("threads"), 1)),
            "status": status,
            "message": ck.get(r, "message", w, (str,)) if ok else ck.opt(r, "message", w, (str,), ""),
            "flops": field("flops", (float,)),
            "bytes": field("bytes", (float,)),
            # null on an ok row too when it moves no bytes (the peak family's register loops)
            "intensity": (ck.get(r, "intensity", w, (float,), nullable=True) if ok and r.get("bytes") == 0
                          else field("intensity", (float,))),
        }
        for k in _MEASURED + ("cv",):
            row[k] = (ck.get(r, k, w, (float,), nullable=(k == "cv")) if ok
                      else ck.get(r, k, w, (float,), nullable=True) if k in r else None)
        row["repetitions"] = ck.get(r, "repetitions", w, (int,)) if ok else ck.opt(r, "repetitions", w, (int,))
        # Absent = null: `rooflab model` without machine.json has nothing to predict with.
        for k in _PREDICTED:
            row[k] = ck.get(r, k, w, (float,), nullable=True) if k in r else None
        for k in ("bound", "level", "compute_isa"):
            row[k] = ck.get(r, k, w, (str,), nullable=True) if k in r else None
        # The ECM prediction beside the roofline (model.json rows' "ecm"; null or absent: none).
        ecm = ck.opt(r, "ecm", w, (dict,), None) if r.get("ecm") is not None else None
        row["ecm_s"] = ck.get(ecm, "time_s", f"{w}.ecm", (float,)) if ecm else None
        row["ecm_fallback"] = bool(ck.opt(ecm, "fallback", f"{w}.ecm", (bool,), False)) if ecm else False
        # A measurement that stayed disturbed (load, spread): not a good number (absent = false).
        row["disturbed"] = bool(ck.opt(r, "disturbed", w, (bool,), False))
        row["disturbed_reason"] = ck.opt(r, "disturbed_reason", w, (str,), "") or ""
        if ok and row["median_s"] <= 0:
            raise ck.fail(f"{w}.median_s", f"an ok row needs a positive median time, got {row['median_s']}")
        for j, d in enumerate(row["dims"] or []):
            if isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise ck.fail(f"{w}.dims[{j}]", f"expected a size (a non-negative integer), got {d!r}")
        rows.append(row)
    df = pd.DataFrame(rows, columns=MODEL_COLUMNS)
    df["disturbed"] = df["disturbed"].astype(bool)
    df["ecm_fallback"] = df["ecm_fallback"].astype(bool)
    for k in _MEASURED + _PREDICTED + ("cv", "flops", "bytes", "intensity", "ecm_s"):
        df[k] = pd.to_numeric(df[k], errors="coerce").astype(float)
    return df


def disturbed_line(row) -> str:
    """The not-plotted line of an ok row whose measurement stayed disturbed."""
    return f"{row['name']}: disturbed measurement" + (f" ({row.disturbed_reason})" if row.disturbed_reason else "")


def family_rows(model: pd.DataFrame, family: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """(ok rows, not-plotted lines) of one family (None: every family) from model_frame(): failed
    and skipped rows, and measurements that stayed disturbed, are never plotted or used, only
    listed with why."""
    fam = model if family is None else model[model.family == family]
    omitted = [f"{r['name']}: {r.status}" + (f" ({r.message})" if r.message else "")
               for _, r in fam.iterrows() if r.status != "ok"]
    ok = fam[fam.status == "ok"]
    omitted += [disturbed_line(r) for _, r in ok[ok.disturbed].iterrows()]
    return ok[~ok.disturbed].copy(), omitted


COUNTER_COLUMNS = ["name", "backend", "runs", "status", "message", "simulated_as", "note"]


def counters_frames(counters: dict, path: Path) -> dict[str, pd.DataFrame]:
    """counters.json -> DataFrames: backends (name, available, reason) and rows (one per
    case and back end: COUNTER_COLUMNS, then events and derived values as columns, NaN where a
    back end lacks them). A failed or skipped row (status + message, no events: verification,
    a valgrind crash or timeout, a case not run) is kept with NaN numbers, never zeros; a row
    without "status" (files older than the key) is "ok". "simulated_as" names the case that was
    simulated instead (an AVX-512 case's avx2 sibling under valgrind), "" otherwise."""
    ck = Checker(path)
    backends = []
    for i, b in enumerate(ck.get(counters, "backends", "$", (list,))):
        w = f"$.backends[{i}]"
        backends.append({"name": ck.get(b, "name", w, (str,)),
                         "available": ck.get(b, "available", w, (bool,)),
                         "reason": ck.get(b, "reason", w, (str,)),
                         "config": ck.opt(b, "config", w, (dict,), {})})
    backends_df = pd.DataFrame(backends, columns=["name", "available", "reason", "config"])
    available = {b["name"] for b in backends if b["available"]}
    rows, event_keys, derived_keys = [], [], []
    for i, r in enumerate(ck.get(counters, "rows", "$", (list,))):
        w = f"$.rows[{i}]"
        backend = ck.get(r, "backend", w, (str,))
        status = ck.get(r, "status", w, (str,)) if "status" in r else "ok"
        if status not in STATUSES:
            raise ck.fail(f"{w}.status", f'"{status}" is not one of {", ".join(STATUSES)}')
        ok = status == "ok"
        if ok and backend not in available:
            # An unavailable back end must not contribute numbers (they would be fake zeros).
            raise ck.fail(f"{w}.backend", f'back end "{backend}" is not listed as available in "backends"')
        row = {"name": ck.get(r, "name", w, (str,)), "backend": backend,
               "runs": ck.get(r, "runs", w, (int,)) if ok else ck.opt(r, "runs", w, (int,)),
               "status": status, "message": ck.opt(r, "message", w, (str,), ""),
               "simulated_as": ck.opt(r, "simulated_as", w, (str,), ""), "note": ck.opt(r, "note", w, (str,), "")}
        if not ok:
            row["message"] = row["message"] or f"{status} (the row gives no reason)"
            rows.append(row)  # its events, if any, are not a measurement
            continue
        for group, keys in (("events", event_keys), ("derived", derived_keys)):
            for k, v in ck.get(r, group, w, (dict,)).items():
                if not is_number(v):
                    raise ck.fail(f"{w}.{group}.{k}", f"expected a number, got {v!r}")
                if k not in keys:
                    keys.append(k)
                row[(group, k)] = float(v)
        rows.append(row)
    cols = COUNTER_COLUMNS + [("events", k) for k in event_keys] + [("derived", k) for k in derived_keys]
    rows_df = pd.DataFrame(rows, columns=cols)
    rows_df.attrs["event_keys"] = event_keys
    rows_df.attrs["derived_keys"] = derived_keys
    return {"backends": backends_df, "rows": rows_df}


def bench_frame(bench: dict, path: Path) -> pd.DataFrame:
    """bench.json benchmarks -> one row per entry (iterations and aggregates) with the
    rooflab identity fields; the figures use model.json, this serves the report's context."""
    ck = Checker(path)
    _strings(ck, bench, "diagnostics", "$")
    for k in ("profile", "filter", "machine"):
        ck.opt(bench, k, "$", (str,))
    ctx = ck.opt(bench, "context", "$", (dict,), {})
    for k in ("host_name", "executable", "date"):
        ck.opt(ctx, k, "$.context", (str,))
    rows = []
    for i, b in enumerate(ck.get(bench, "benchmarks", "$", (list,))):
        w = f"$.benchmarks[{i}]"
        rl = ck.get(b, "rooflab", w, (dict,))
        name = ck.get(b, "name", w, (str,))
        run_type = ck.opt(b, "run_type", w, (str,))
        error = ck.opt(b, "error_occurred", w, (bool,), False)
        ck.opt(b, "repetitions", w, (int,))
        rows.append({"name": name, "run_type": run_type, "aggregate_name": ck.opt(b, "aggregate_name", w, (str,)),
                     "error_occurred": error, "error_message": ck.opt(b, "error_message", w, (str,), ""),
                     "seconds": gbench_seconds(ck, b, w, name) if run_type == "iteration" and not error else None,
                     "family": ck.get(rl, "family", f"{w}.rooflab", (str,)),
                     "variant": ck.get(rl, "variant", f"{w}.rooflab", (str,)),
                     "threads": ck.get(rl, "threads", f"{w}.rooflab", (int,)),
                     "flops": ck.get(rl, "flops", f"{w}.rooflab", (float,)),
                     "bytes": ck.get(rl, "bytes", f"{w}.rooflab", (float,))})
    return pd.DataFrame(rows, columns=["name", "run_type", "aggregate_name", "error_occurred", "error_message",
                                       "seconds", "family", "variant", "threads", "flops", "bytes"])


# ----------------------------------------------------------------------------- the run

@dataclass
class Run:
    """A loaded run directory. Raw documents are None where the file is absent; the
    *_frames / frame attributes are None in the same cases."""
    run_dir: Path
    machine: dict | None
    bench: dict | None
    model: dict | None
    counters: dict | None
    machine_df: dict[str, pd.DataFrame] | None
    model_df: pd.DataFrame | None
    counters_df: dict[str, pd.DataFrame] | None
    bench_df: pd.DataFrame | None
    missing: dict[str, str]  # kind -> message naming the command that writes it
    invalid: dict[str, str] = None  # kind -> why the file was not read (load_run(lenient=True) only)

    def __post_init__(self):
        self.invalid = self.invalid or {}

    def require(self, *kinds: str) -> None:
        """Raises with the commands to run when any of the named files is absent."""
        msgs = [self.missing[k] for k in kinds if k in self.missing]
        if msgs:
            raise RooflabDataError("; ".join(msgs))


def load_run(run_dir: str | Path, required: tuple[str, ...] = (), lenient: bool = False) -> Run:
    """Loads every file present in run_dir; files in `required` must exist. A present file
    that is malformed raises, whether it is required or not; with `lenient` (the report of
    ./run_all.sh, which must be written whatever one step left behind) it is treated as absent
    and its error is kept in Run.invalid (and Run.missing)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise RooflabDataError(f"run directory {run} does not exist or is not a directory "
                               f"(produce one with `rooflab characterize --out {run}`, then `rooflab bench`, "
                               f"`rooflab model`, `rooflab counters`)")
    docs: dict[str, dict | None] = {}
    frames: dict[str, Any] = {}
    missing: dict[str, str] = {}
    invalid: dict[str, str] = {}
    to_frames = {"machine": machine_frames, "model": model_frame, "counters": counters_frames, "bench": bench_frame}
    for kind, (fname, _, _, command) in FILES.items():
        docs[kind] = frames[kind] = None
        if not (run / fname).exists():  # a directory or other non-file there is malformed, not absent
            missing[kind] = f"{run / fname} not found: run `{command}` to produce it"
            continue
        try:
            docs[kind] = read_json(run, kind)
            frames[kind] = to_frames[kind](docs[kind], run / fname)
        except RooflabDataError as e:
            if not lenient:
                raise
            docs[kind] = None
            missing[kind] = invalid[kind] = f"{e} (not used; rerun `{command}`)"
    r = Run(run_dir=run, machine=docs["machine"], bench=docs["bench"], model=docs["model"],
            counters=docs["counters"], machine_df=frames["machine"], model_df=frames["model"],
            counters_df=frames["counters"], bench_df=frames["bench"], missing=missing, invalid=invalid)
    r.require(*required)
    return r
