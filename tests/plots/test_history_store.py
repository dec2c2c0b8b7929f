"""`rooflab history` store and command line (issue 19): the fixture run's round trip through
SQLite and through a real PostgreSQL server (started and stopped here), idempotent add, a crash
or kill mid-add leaving the store as it was, migration of an older schema, Google Benchmark JSON
import, and the command line's errors. CTest runs the PostgreSQL cases as their own test
(plots.history_postgres, `-k postgres`), skipped with the reason when the server or the driver
is missing."""
from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from conftest import PLOTS, load, run_script, save

from rooflab.history import schema
from rooflab.history.store import Store, StoreError

TABLES = ("schema_version", "machines", "runs", "results", "counters")


# ----------------------------------------------------------------------------- PostgreSQL server

def _pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def pg_server():
    """A throwaway PostgreSQL server on a unix socket in a temporary directory -> a function
    that makes a new empty database and returns its URL. Run as the `postgres` user when this is
    root (the server refuses root); stopped, and its directory removed, whatever happens."""
    try:
        import psycopg2 as driver
    except ImportError:
        try:
            import psycopg as driver
        except ImportError:
            pytest.skip("no PostgreSQL driver for Python (Debian: python3-psycopg2)")
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server (Debian: postgresql; initdb not under /usr/lib/postgresql/*/bin)")
    as_user: list[str] = []
    top = Path(tempfile.mkdtemp(prefix="rooflab-pg-", dir="/tmp"))  # short: a socket path has 107 bytes
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(top)
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        os.chown(top, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = top / "data", _free_port()

    def sh(*cmd: str, check: bool = True) -> None:
        p = subprocess.run(as_user + list(cmd), capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            log = (top / "log").read_text() if (top / "log").exists() else ""
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stdout}{p.stderr}{log}")

    try:
        sh(str(bindir / "initdb"), "-D", str(data), "-U", "rooflab", "--auth=trust", "-E", "UTF8", "--no-sync")
        sh(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(top / "log"), "-w", "-t", "60",
           "-o", f"-c listen_addresses='' -k {top} -p {port} -c fsync=off", "start")
        base = f"postgresql://rooflab@/{{}}?host={top}&port={port}"
        admin = driver.connect(base.format("postgres"))
        admin.autocommit = True
        n = [0]

        def new_db() -> str:
            n[0] += 1
            admin.cursor().execute(f"CREATE DATABASE t{n[0]}")
            return base.format(f"t{n[0]}")

        yield new_db
        admin.close()
    finally:
        sh(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    """A URL of an empty store location on each back end."""
    if request.param == "sqlite":
        return str(tmp_path / "h.sqlite")
    return request.getfixturevalue("pg_server")()


# ----------------------------------------------------------------------------- helpers

def history(*args: str) -> subprocess.CompletedProcess:
    return run_script("history.py", *args)


def dump(url: str) -> dict:
    with Store(url, create=False) as s, s._tx():
        return {t: sorted(tuple(r) for r in s._exec(f"SELECT * FROM {t}").fetchall()) for t in TABLES}


def one_line_error(p: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rooflab history"), p.stderr
    assert "Traceback" not in p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def expected_fixture(run: Path) -> dict:
    """What the store must hold of the fixture run, read here independently of ingest.py."""
    bench, model, counters = load(run, "bench.json"), load(run, "model.json"), load(run, "counters.json")
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    samples, failed = {}, set()
    for b in bench["benchmarks"]:
        name = b["run_name"].removesuffix("/repeats:3")
        if b.get("error_occurred"):
            failed.add(name)
        elif b["run_type"] == "iteration":
            samples.setdefault(name, []).append(b["real_time"] * unit[b["time_unit"]])
    eff = {r["name"]: r["efficiency"] for r in model["rows"] if r.get("efficiency")}
    d1 = {r["name"]: r["events"]["D1mr"] + r["events"]["D1mw"] for r in counters["rows"]}
    ll = {r["name"]: r["events"]["DLmr"] + r["events"]["DLmw"] for r in counters["rows"]}
    return {"samples": samples, "failed": failed, "efficiency": eff, "d1_misses": d1, "ll_misses": ll,
            "timestamp": bench["context"]["date"].replace("+00:00", "Z")}


def check_round_trip(url: str, run: Path, commit: str) -> None:
    want = expected_fixture(run)
    with Store(url, create=False) as s:
        (r,) = s.runs()
        assert (r.commit, r.timestamp, r.benchmarks) == (commit, want["timestamp"], len(want["samples"]) + 1)
        facts = s.machines()[r.machine]
        machine = load(run, "machine.json")
        assert facts["cpu"] == machine["host"]["cpu"] and facts["isa"] == sorted(machine["host"]["isa"])
        assert facts["caches"] == {k: machine["caches"]["reported"][k] for k in ("L1", "L2", "L3")}
        with s._tx():
            stored = {row[0]: row[1:] for row in s._exec(
                "SELECT benchmark, status, samples, median_s, disturbed FROM results").fetchall()}
            run_row = s._exec("SELECT ceilings, build FROM runs").fetchone()
        series = {(x.benchmark, x.metric): x for x in s.series()}
    assert json.loads(run_row[0])["compute"] == machine["compute"]
    assert json.loads(run_row[1])["build_type"] == machine["build_type"]
    assert set(stored) == set(want["samples"]) | want["failed"]
    for name in want["failed"]:
        assert stored[name][0] == "failed" and json.loads(stored[name][1]) == []
        assert not any(b == name for b, _ in series)  # a failed result is never a point
    for name, xs in want["samples"].items():
        status, samples, median, disturbed = stored[name]
        assert status == "ok" and json.loads(samples) == pytest.approx(xs, rel=1e-15)
        assert median == pytest.approx(statistics.median(xs), rel=1e-15) and disturbed == 0
        (p,) = series[(name, "time")].points
        assert (p.run_id, p.commit, p.timestamp, p.value, p.disturbed) == (str(r.id), commit, r.timestamp, median, False)
        for metric in ("efficiency", "d1_misses", "ll_misses"):
            if name in want[metric]:
                assert series[(name, metric)].points[0].value == pytest.approx(want[metric][name])
            else:
                assert (name, metric) not in series
    assert not any(m == "instructions" for _, m in series)  # the fixture's counters have no Ir


# ----------------------------------------------------------------------------- round trip, idempotence

def test_round_trip(db, run_small):
    sha = "0123456789abcdef0123456789abcdef01234567"
    p = history("add", str(run_small), "--db", db, "--commit", sha)
    assert p.returncode == 0, p.stderr
    assert "stored as run" in p.stdout
    check_round_trip(db, run_small, sha)
    listed = history("list", "--db", db)
    assert listed.returncode == 0, listed.stderr
    assert sha[:12] in listed.stdout and "AMD EPYC 7B13" in listed.stdout and "1 run in" in listed.stdout


def test_add_twice_is_idempotent(db, run_small):
    assert history("add", str(run_small), "--db", db).returncode == 0
    before = dump(db)
    again = history("add", str(run_small), "--db", db, "--commit", "abcdef0")
    assert again.returncode == 0, again.stderr
    assert "already stored (unchanged): run 1" in again.stdout
    assert dump(db) == before
    assert len(before["runs"]) == 1 and len(before["results"]) == 8


def test_a_changed_run_is_another_run(tmp_path, run_copy):
    db = str(tmp_path / "h.sqlite")
    assert history("add", str(run_copy), "--db", db).returncode == 0
    bench = load(run_copy, "bench.json")
    bench["context"]["date"] = "2026-11-21T07:05:12+00:00"  # measured a day earlier
    bench["benchmarks"][0]["real_time"] *= 2
    save(run_copy, "bench.json", bench)
    assert history("add", str(run_copy), "--db", db).returncode == 0
    with Store(db) as s:
        runs = s.runs()
        (t,) = [x for x in s.series(["time"], benchmark_regex=r"typical/f64/128x128") if x.metric == "time"]
    # Run order is the runs' own time: the run added second was measured first.
    assert [r.id for r in runs] == [2, 1]
    assert [p.run_id for p in t.points] == ["2", "1"]
    assert t.points[0].value > t.points[1].value


def test_the_cpu_signature_tells_machines_with_one_model_name_apart(tmp_path, run_copy):
    # Under a hypervisor a Zen 3 and a Zen 5 can both be "AMD EPYC" with the same ISAs and caches
    # reported: CPUID's signature (host.cpu_signature) keeps their series apart.
    db = str(tmp_path / "h.sqlite")
    machine = load(run_copy, "machine.json")
    machine["host"]["cpu_signature"] = "AuthenticAMD family 25 model 1 stepping 1"
    save(run_copy, "machine.json", machine)
    assert history("add", str(run_copy), "--db", db).returncode == 0
    machine["host"]["cpu_signature"] = "AuthenticAMD family 26 model 2 stepping 1"
    save(run_copy, "machine.json", machine)
    bench = load(run_copy, "bench.json")
    bench["context"]["date"] = "2026-11-21T07:05:12+00:00"  # another run, not the same one again
    save(run_copy, "bench.json", bench)
    assert history("add", str(run_copy), "--db", db).returncode == 0
    with Store(db) as s:
        assert len(s.machines()) == 2


def test_series_filters(tmp_path, run_small):
    db = str(tmp_path / "h.sqlite")
    assert history("add", str(run_small), "--db", db).returncode == 0
    with Store(db) as s:
        (fp,) = s.machines()
        only = s.series(metrics=["time"], machine=fp[:6], benchmark_regex="^sinkhorn/c2r/")
        assert sorted(x.benchmark for x in only) == ["sinkhorn/c2r/f64/1024x1024/part:col/threads:1",
                                                     "sinkhorn/c2r/f64/1024x1024/part:col/threads:2"]
        assert {x.metric for x in only} == {"time"} and all(x.lower_is_better for x in only)
        assert s.series(machine="ffff" if not fp.startswith("ffff") else "0000") == []
        with pytest.raises(StoreError, match="not a regular expression"):
            s.series(benchmark_regex="(")
        with pytest.raises(StoreError, match="unknown metric"):
            s.series(metrics=["speed"])


# ----------------------------------------------------------------------------- crashes

def test_error_mid_add_leaves_the_store_as_it_was(db, run_small, run_copy, monkeypatch):
    assert history("add", str(run_small), "--db", db).returncode == 0
    bench = load(run_copy, "bench.json")
    bench["context"]["date"] = "2026-11-23T07:05:12+00:00"
    save(run_copy, "bench.json", bench)
    before = dump(db)
    from rooflab.history.ingest import read_run
    run = read_run(run_copy)
    real = Store._execmany

    def failing(self, q, rows):
        real(self, q, rows)  # the results are written, then the counters' insert fails
        if "INTO counters" in q:
            raise RuntimeError("simulated crash")

    monkeypatch.setattr(Store, "_execmany", failing)
    with Store(db) as s, pytest.raises(RuntimeError, match="simulated crash"):
        s.add(run)
    monkeypatch.undo()
    assert dump(db) == before
    with Store(db) as s:  # and the store still works
        assert s.add(run)[1] is True and len(s.runs()) == 2


def test_killed_mid_add_leaves_the_store_as_it_was(db, run_small, run_copy):
    assert history("add", str(run_small), "--db", db).returncode == 0
    bench = load(run_copy, "bench.json")
    bench["context"]["date"] = "2026-11-23T07:05:12+00:00"
    save(run_copy, "bench.json", bench)
    before = dump(db)
    # A process killed (SIGKILL: no handler runs) after the run's rows, before its commit.
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(PLOTS)!r})
        from rooflab.history.store import Store
        from rooflab.history.ingest import read_run
        real = Store._execmany
        def killing(self, q, rows):
            real(self, q, rows)
            if "INTO counters" in q:
                os.kill(os.getpid(), signal.SIGKILL)
        Store._execmany = killing
        Store({db!r}).add(read_run({str(run_copy)!r}))
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == -9, (p.returncode, p.stderr)
    assert dump(db) == before


# ----------------------------------------------------------------------------- schema versions

def test_migrates_a_version_1_store(tmp_path, run_small):
    db = str(tmp_path / "old.sqlite")
    with Store(db, upto=1) as s:  # the store as the first schema left it, with one run in it
        assert s.version == 1
        with s._tx(write=True):
            s._exec("INSERT INTO machines VALUES ('m0', '{\"name\": \"old box\"}')")
            s._exec("INSERT INTO runs (run_key, machine, timestamp, commit_sha, build, ceilings, source, added) "
                    "VALUES ('k0', 'm0', '2025-01-01T00:00:00Z', 'abc1234', '{}', '{}', 'old', '2025-01-01T00:00:00Z')")
            s._exec("INSERT INTO results VALUES (1, 'gemm/x/f64/8/threads:1', 'ok', '', '[1.0, 2.0, 3.0]', 2.0, 0, '', 0.5)")
        with pytest.raises(StoreError, match="no such table: counters"):
            with s._tx():
                s._exec("SELECT * FROM counters")
    with Store(db) as s:
        assert s.version == schema.LATEST == 2
        with s._tx():
            assert [r[0] for r in s._exec("SELECT version FROM schema_version ORDER BY version").fetchall()] == [1, 2]
        old = {(x.benchmark, x.metric): [p.value for p in x.points] for x in s.series()}
        assert old == {("gemm/x/f64/8/threads:1", "time"): [2.0], ("gemm/x/f64/8/threads:1", "efficiency"): [0.5]}
    assert history("add", str(run_small), "--db", db).returncode == 0
    with Store(db) as s:
        assert len(s.runs()) == 2 and any(x.metric == "d1_misses" for x in s.series())


def test_a_newer_store_is_refused(tmp_path, run_small):
    db = str(tmp_path / "new.sqlite")
    with Store(db) as s, s._tx(write=True):
        s._exec("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')")
    p = history("add", str(run_small), "--db", db)
    one_line_error(p, 1, "schema version 99", "update rooflab")


# ----------------------------------------------------------------------------- Google Benchmark JSON

def gbench_doc(times_ns: list[float], aggregates_only: bool = False) -> dict:
    name = "BM_memcpy/4096/repeats:3"
    rows = [] if aggregates_only else [
        {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name, "run_type": "iteration",
         "repetitions": 3, "repetition_index": i, "threads": 1, "iterations": 1000, "real_time": t, "cpu_time": t,
         "time_unit": "ns"} for i, t in enumerate(times_ns)]
    rows.append({"name": name + "_median", "family_index": 0, "per_family_instance_index": 0, "run_name": name,
                 "run_type": "aggregate", "repetitions": 3, "threads": 1, "aggregate_name": "median",
                 "aggregate_unit": "time", "iterations": 3, "real_time": statistics.median(times_ns),
                 "cpu_time": statistics.median(times_ns), "time_unit": "ns"})
    return {"context": {"date": "2024-05-01T10:00:00+02:00", "host_name": "laptop", "executable": "./bm",
                        "num_cpus": 8, "mhz_per_cpu": 3000, "cpu_scaling_enabled": False, "caches": [],
                        "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release"}, "benchmarks": rows}


def test_import_google_benchmark_json(tmp_path, run_small):
    db = str(tmp_path / "h.sqlite")
    (tmp_path / "a.json").write_text(json.dumps(gbench_doc([100.0, 120.0, 110.0])))
    (tmp_path / "b.json").write_text(json.dumps(gbench_doc([200.0, 220.0, 210.0], aggregates_only=True)))
    no_name = history("import", str(tmp_path / "a.json"), "--db", db)
    one_line_error(no_name, 1, "a.json", "--machine-name")
    assert not Path(db).exists()
    p = history("import", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--db", db, "--machine-name", "laptop")
    assert p.returncode == 0, p.stderr
    with Store(db) as s:
        runs = s.runs()
        (t,) = s.series(["time"])
    assert [r.timestamp for r in runs] == ["2024-05-01T08:00:00Z"] * 2 and all(r.cpu == "laptop" for r in runs)
    assert t.benchmark == "BM_memcpy/4096" and t.machine == runs[0].machine
    assert [p.value for p in t.points] == pytest.approx([110e-9, 210e-9])


# ----------------------------------------------------------------------------- command line

def test_help():
    for sub in ("add", "import", "list"):
        p = history(sub, "--help")
        assert p.returncode == 0 and "--db" in p.stdout, (sub, p.stderr)
    top = history("--help")
    assert top.returncode == 0 and all(c in top.stdout for c in ("add", "import", "list", "check"))


def test_check_without_the_check_module_says_so_in_one_line(tmp_path):
    import importlib.util
    if importlib.util.find_spec("rooflab.history.check") is not None:
        p = history("check", "--help")
        assert p.returncode == 0 and "--db" in p.stdout, p.stderr
    else:
        one_line_error(history("check", "--db", str(tmp_path / "h.sqlite")), 1, "rooflab.history.check")


@pytest.mark.parametrize("args,code,words", [
    ((), 2, ("usage",)),
    (("frob",), 2, ("unknown command",)),
    (("add",), 2, ("run directory is missing",)),
    (("add", "RUN", "--commit", "not-a-sha"), 2, ("--commit",)),
    (("import",), 2, ("DIR|FILE",)),
    (("add", "/nonexistent/run"), 1, ("/nonexistent/run", "no such run")),
    (("add", "RUN", "--db", "mysql://u@h/db"), 1, ("mysql://", "unknown kind of store")),
    (("add", "RUN", "--db", "postgresql://u:secret@127.0.0.1:1/db"), 1, ("postgresql://u:***@127.0.0.1:1/db",)),
    (("list", "--db", "DIR/absent.sqlite"), 1, ("no history store there",)),
    (("add", "RUN", "--db", "RUN/bench.json"), 1, ("not a usable SQLite store",)),
])
def test_cli_errors(args, code, words, run_copy, tmp_path):
    args = [a.replace("RUN", str(run_copy)).replace("DIR", str(tmp_path)) for a in args]
    p = history(*args)
    one_line_error(p, code, *words)
    assert "secret" not in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["run"]  # nothing written


def test_bad_run_files_write_nothing(tmp_path, run_copy, run_small):
    db = tmp_path / "h.sqlite"
    (run_copy / "bench.json").write_text((run_small / "bench.json").read_text()[:500])
    one_line_error(history("add", str(run_copy), "--db", str(db)), 1, "bench.json", "truncated")
    assert not db.exists()
    # import: every input is read before the store is touched
    one_line_error(history("import", str(run_small), str(run_copy), "--db", str(db)), 1, "bench.json")
    assert not db.exists()
    (run_copy / "bench.json").write_text((run_small / "bench.json").read_text())
    (run_copy / "model.json").write_text("{}")
    one_line_error(history("add", str(run_copy), "--db", str(db)), 1, "model.json", "schema")
    assert not db.exists()
    os.remove(run_copy / "machine.json")
    one_line_error(history("add", str(run_copy), "--db", str(db)), 1, "machine.json", "--machine-name")


def test_machine_name_replaces_the_fingerprint_not_the_ceilings(tmp_path, run_small):
    db = str(tmp_path / "h.sqlite")
    assert history("add", str(run_small), "--db", db, "--machine-name", "ci-pool").returncode == 0
    with Store(db) as s:
        (facts,) = s.machines().values()
        with s._tx():
            ceilings = json.loads(s._exec("SELECT ceilings FROM runs").fetchone()[0])
    assert facts == {"name": "ci-pool"}
    assert ceilings["compute"] == load(run_small, "machine.json")["compute"]


def test_a_counters_only_run_stores_the_counts(tmp_path, run_small):
    # `rooflab counters --out DIR` alone (no bench.json): cachegrind's counts, no time.
    run = tmp_path / "counted"
    run.mkdir()
    shutil.copy(run_small / "machine.json", run)
    doc = load(run_small, "counters.json")
    doc["updated"] = "2026-11-27T02:56:18Z"
    for i, r in enumerate(doc["rows"]):
        r["events"]["Ir"] = 1000.0 * (i + 1)
    doc["rows"][1] = {"name": doc["rows"][1]["name"], "backend": "cachegrind", "status": "failed",
                      "message": "valgrind crashed"}
    save(run, "counters.json", doc)
    db = str(tmp_path / "h.sqlite")
    p = history("add", str(run), "--db", db, "--commit", "abcdef0")
    assert p.returncode == 0 and "stored as run 1" in p.stdout, p.stderr
    with Store(db) as s:
        series = s.series()
        (stored,) = s.runs()
    ok = [r for r in doc["rows"] if r.get("status", "ok") == "ok"]
    assert stored.timestamp == "2026-11-27T02:56:18Z" and stored.commit == "abcdef0"
    assert {x.metric for x in series} == {"instructions", "d1_misses", "ll_misses"}
    inst = {x.benchmark: x.points[0].value for x in series if x.metric == "instructions"}
    assert inst == {r["name"]: r["events"]["Ir"] for r in ok}
    assert doc["rows"][1]["name"] not in inst  # the failed row has no count
    # The same counters.json again is the same run.
    assert "already stored (unchanged): run 1" in history("add", str(run), "--db", db).stdout
    # No date of its own and no machine.json to take one from: it cannot be placed.
    doc.pop("updated")
    save(run, "counters.json", doc)
    os.remove(run / "machine.json")
    one_line_error(history("add", str(run), "--db", db), 1, "machine.json", "--machine-name")
    one_line_error(history("add", str(run), "--db", db, "--machine-name", "vm"), 1, "counters.json", "no date")
    doc["updated"] = "2026-11-27T02:57:00Z"
    doc["rows"] = [dict(r, backend="papi") for r in ok]
    save(run, "counters.json", doc)
    one_line_error(history("add", str(run), "--db", db, "--machine-name", "vm"), 1, "no cachegrind rows")


def test_synthetic_store(tmp_path):
    from rooflab.history import synth_store
    db = str(tmp_path / "s.sqlite")
    assert synth_store.main(["--db", db, "--runs", "6", "--benchmarks", "4", "--step-every", "2",
                             "--step-at", "3", "--step-size", "0.5", "--cv", "0"]) == 0
    assert synth_store.fill(db, 6, 4, step_every=2, step_at=3, step_size=0.5, cv=0) == 0  # idempotent
    with Store(db) as s:
        series = s.series(["time", "instructions"])
        assert len(s.runs()) == 6
    assert len(series) == 8 and all(len(x.points) == 6 for x in series)
    for x in series:
        v = [p.value for p in x.points]
        stepped = x.metric == "time" and int(x.benchmark.split("/")[1][1:]) % 2 == 0
        assert v[3:] == pytest.approx([v[0] * (1.5 if stepped else 1.0)] * 3) and v[:3] == pytest.approx([v[0]] * 3)
