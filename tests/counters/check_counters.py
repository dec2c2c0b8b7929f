#!/usr/bin/env python3
"""CLI checks of `rooflab counters` (run by CTest, see tests/counters.cmake).

  check_counters.py cachegrind ROOFLAB OUTDIR MACHINE_JSON
  check_counters.py inprocess  ROOFLAB OUTDIR
"""
import json
import os
import shutil
import subprocess
import sys

C2R = "sinkhorn/c2r/f64/1024x200/part:col/threads:1"
TYPICAL = "sinkhorn/typical/f64/1024x200/part:col/threads:1"
AVX512 = "sinkhorn/microkernel/avx512/f64/64x48/part:col/threads:1"
AVX2 = "sinkhorn/microkernel/avx2/f64/64x48/part:col/threads:1"  # AVX512's sibling under valgrind
BIG = "sinkhorn/typical/f64/4096x4096/part:col/threads:1"  # ~30 s under valgrind


def run(exe, *args, expect):
    p = subprocess.run([exe, "counters", *args], capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    assert p.returncode in expect, f"exit {p.returncode}, expected {expect}: {args}"
    return p.returncode


def load(out):
    with open(os.path.join(out, "counters.json")) as f:
        doc = json.load(f)
    assert doc["schema"] == "rooflab.counters/1", doc["schema"]
    return doc


def rows_by_name(doc, backend):
    rows = [r for r in doc["rows"] if r["backend"] == backend]
    names = [r["name"] for r in rows]
    assert len(names) == len(set(names)), f"duplicate rows: {names}"
    return {r["name"]: r for r in rows}


def cachegrind(exe, out, machine):
    common = ["--backend", "cachegrind", "--machine", machine, "--runs", "2", "--out", out]
    run(exe, "--case", C2R, *common, expect={0})
    run(exe, "--case", TYPICAL, *common, expect={0})   # merged into the same file
    # AVX-512 cannot run under valgrind: the case is simulated as its avx2 sibling and says so;
    # written twice -> still one row.
    for _ in range(2):
        run(exe, "--case", AVX512, *common, expect={0})
    # In one invocation the sibling's simulation is reused for the avx512 row, not run twice.
    reuse = out + "-reuse"
    shutil.rmtree(reuse, ignore_errors=True)
    run(exe, "--case", AVX2, "--case", AVX512, *common[:-1], reuse, expect={0})
    pair = rows_by_name(load(reuse), "cachegrind")
    assert pair[AVX512]["simulated_as"] == AVX2 and "reused" in pair[AVX512]["note"], pair[AVX512]
    assert pair[AVX512]["events"] == pair[AVX2]["events"] and pair[AVX512]["elapsed_s"] == 0, pair
    assert "simulated_as" not in pair[AVX2], pair[AVX2]
    shutil.rmtree(reuse, ignore_errors=True)
    # A valgrind child past --timeout is killed and becomes a failed row.
    run(exe, "--case", BIG, *common, "--timeout", "1", expect={3})
    doc = load(out)
    backends = [b for b in doc["backends"] if b["name"] == "cachegrind"]
    assert len(backends) == 1, backends
    b = backends[0]
    assert b["available"] is True and b["reason"] == "", b
    assert b["config"]["D1"].startswith("32768,"), b["config"]
    assert b["config"]["LL"].startswith("33554432,"), b["config"]
    assert "measured" in b["config"]["D1_source"], b["config"]
    assert "callgrind" in b["config"]["method"]

    rows = rows_by_name(doc, "cachegrind")
    assert set(rows) == {C2R, TYPICAL, AVX512, BIG}, sorted(rows)
    a = rows[AVX512]
    assert a["status"] == "ok" and a["simulated_as"] == AVX2 and "AVX-512" in a["note"], a
    # The column pass reads every element twice and writes it once, 4 doubles per AVX2 access.
    assert a["events"]["Dr"] >= 2 * 64 * 48 / 4 and a["events"]["Dw"] >= 64 * 48 / 4, a
    assert rows[BIG]["status"] == "failed" and "timed out" in rows[BIG]["message"], rows[BIG]
    assert "events" not in rows[BIG]
    elems = 1024 * 200
    for name in (C2R, TYPICAL):
        r = rows[name]
        assert r["status"] == "ok", r
        assert r["runs"] == 2
        ev = r["events"]
        # A column pass reads every element twice (sum, scale) and writes it once.
        assert ev["Dr"] >= 2 * elems and ev["Dw"] >= elems, ev
        d = r["derived"]
        assert 0 <= d["LL_miss_rate"] <= d["L1_miss_rate"] <= 1, d
    c2r, typ = rows[C2R]["derived"], rows[TYPICAL]["derived"]
    print(f"L1 miss rate: c2r col {c2r['L1_miss_rate']:.4f}, typical col {typ['L1_miss_rate']:.4f}")
    # 1024 rows x 64-byte lines = 64 KiB > 32 KiB L1: every strided access of a column misses,
    # while c2r streams rows (one miss per 8 doubles).
    assert typ["L1_miss_rate"] > 3 * c2r["L1_miss_rate"], (typ, c2r)
    assert rows[TYPICAL]["events"]["D1mr"] > 0.5 * 2 * elems, rows[TYPICAL]["events"]


def inprocess(exe, out):
    case = "sinkhorn/c2r/f64/64x48/part:col/threads:1"
    env_has_likwid = all(os.environ.get(v) for v in ("LIKWID_MODE", "LIKWID_FILEPATH", "LIKWID_EVENTS"))
    for backend in ("papi", "likwid"):
        rc = run(exe, "--case", case, "--backend", backend, "--runs", "2", "--out", out, expect={0, 2})
        doc = load(out)
        entry = [b for b in doc["backends"] if b["name"] == backend]
        assert len(entry) == 1, entry
        rows = rows_by_name(doc, backend)
        if rc == 2:  # unavailable: a reason, no rows, never zeros
            assert entry[0]["available"] is False and entry[0]["reason"], entry
            assert rows == {}, rows
            print(f"{backend}: unavailable: {entry[0]['reason']}")
        else:
            assert entry[0]["available"] is True, entry
            ev = rows[case]["events"]
            assert ev and any(v > 0 for v in ev.values()), ev
            print(f"{backend}: {ev}")
        if backend == "likwid" and not env_has_likwid:
            # Built with likwid: it needs likwid-perfctr's environment; built without: it says so.
            built = os.environ.get("ROOFLAB_TEST_HAVE_LIKWID", "ON").upper() in ("ON", "1", "TRUE")
            want = "likwid-perfctr" if built else "built without likwid"
            assert rc == 2 and want in entry[0]["reason"], entry


def main():
    mode, exe, out = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(out, ignore_errors=True)
    if mode == "cachegrind":
        cachegrind(exe, out, sys.argv[4])
    elif mode == "inprocess":
        inprocess(exe, out)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
