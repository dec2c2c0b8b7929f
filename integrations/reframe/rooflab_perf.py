"""The performance variables of rooflab's ReFrame tests, read from rooflab's own JSON.

Shared by the tests (rooflab_checks.py: what a run measured) and references.py (what a stored
run measured, written as references), so both name and read every value the same way. Plain
Python: no ReFrame import, so references.py runs without ReFrame.
"""
from __future__ import annotations

import json
import re

MACHINE_SCHEMA = "rooflab.machine/1"
BENCH_SCHEMA = "rooflab.bench/1"
MODEL_SCHEMA = "rooflab.model/1"
REFERENCES_SCHEMA = "rooflab.reframe_references/1"

# The ceilings a centre watches: read bandwidth from DRAM and L1, and per ISA the FMA peak
# (f64, f32) and add+min (the tropical semiring of Floyd-Warshall), each at every thread count
# characterize measured (1 and all threads with `--threads` left at its default).
BANDWIDTH_LEVELS = ("DRAM", "L1")
COMPUTE_OPS = ("fma_f64", "fma_f32", "addmin_f64", "addmin_f32")
# Per kernel, from model.json: efficiency = attained / roofline-predicted, GFLOP/s, median time.
KERNEL_METRICS = ("efficiency", "gflops", "time")
UNITS = {"efficiency": "attained/predicted", "gflops": "GFLOP/s", "time": "s"}


class RunError(ValueError):
    """A rooflab JSON file that is missing, unreadable or not of the expected schema."""


def load(path: str, schema: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise RunError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise RunError(f"{path}: schema {doc.get('schema') if isinstance(doc, dict) else None!r}, "
                       f"expected {schema!r}")
    return doc


def _by_threads(values: dict) -> list[tuple[str, float]]:
    return sorted(((t, v) for t, v in values.items() if isinstance(v, (int, float))),
                  key=lambda tv: int(tv[0]))


def ceiling_values(machine: dict) -> dict[str, tuple[float, str]]:
    """machine.json -> {variable: (value, unit)}, e.g. bw_DRAM_read_t1, fma_f64_avx512_t2."""
    out: dict[str, tuple[float, str]] = {}
    levels = machine.get("bandwidth", {}).get("levels", {})
    for level in BANDWIDTH_LEVELS:
        for t, v in _by_threads(levels.get(level, {}).get("read", {})):
            out[f"bw_{level}_read_t{t}"] = (float(v), "GB/s")
    compute = machine.get("compute", {})
    # compute.by_isa: one entry per ISA the CPU has; a machine.json from before per-ISA
    # ceilings has only compute.ceilings, measured with compute.isa.
    by_isa = compute.get("by_isa") or (
        {compute["isa"]: {"ceilings": compute.get("ceilings", {})}} if "isa" in compute else {})
    for isa, entry in by_isa.items():
        ceilings = entry.get("ceilings", {})
        for op in COMPUTE_OPS:
            for t, v in _by_threads(ceilings.get(op, {})):
                out[f"{op}_{isa}_t{t}"] = (float(v), "GFLOP/s")
    return out


def kernel_key(name: str) -> str:
    # ReFrame splits reference keys at ':' (system:partition:variable): a benchmark name's
    # key:value parameters are written key=value in the variable's name.
    return name.replace(":", "=")


def kernel_values(model: dict, select: str | None = None) -> dict[str, tuple[float, str]]:
    """model.json -> {<benchmark name with ':' as '='>/<metric>: (value, unit)}, for the rows
    measured and predicted (status ok) whose name matches the regex `select`."""
    pattern = re.compile(select) if select else None
    out: dict[str, tuple[float, str]] = {}
    for row in model.get("rows", []):
        name = row.get("name", "")
        if row.get("status") != "ok" or (pattern and not pattern.search(name)):
            continue
        values = {"efficiency": row.get("efficiency"),
                  # gflops is 0 for rows without flops (pure data movement): not a metric there.
                  "gflops": row.get("gflops") if row.get("flops") else None,
                  "time": row.get("median_s")}
        for metric in KERNEL_METRICS:
            v = values[metric]
            if isinstance(v, (int, float)) and v == v:  # v == v: not NaN
                out[f"{kernel_key(name)}/{metric}"] = (float(v), UNITS[metric])
    return out


def higher_is_better(variable: str) -> bool:
    return not variable.endswith("/time")


def bench_failures(bench: dict) -> list[str]:
    """The benchmarks of bench.json that failed (an error, or verification not ok): empty when
    every case was verified and timed."""
    bad = []
    for b in bench.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        ver = (b.get("rooflab") or {}).get("verification")
        if b.get("error_occurred") or not (isinstance(ver, dict) and ver.get("ok")):
            msg = b.get("error_message") or (ver or {}).get("detail") or "not verified"
            bad.append(f"{b.get('name', '?')}: {msg}")
    return bad


def references_for(refs: dict, test: str, partition_fullname: str) -> dict:
    """The part of a references file (references.py) for one test on one system:partition:
    the entry 'system:partition' if there is one, else 'system'; {} when neither."""
    systems = refs.get("systems", {})
    system = partition_fullname.split(":")[0]
    for scope in (partition_fullname, system):
        if scope in systems:
            return systems[scope].get(test, {})
    return {}
