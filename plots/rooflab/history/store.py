"""The results store of `rooflab history`: SQLite (one file, the default results/history.sqlite)
or PostgreSQL (`postgresql://...`, a team's shared store) behind one small SQL layer.

Rules (docs/history.md):
- Schema versioned (schema.py): opening a store applies the migrations it lacks, in order, in
  one transaction; a store newer than this code is refused.
- One transaction per run added: a crash or error mid-add leaves the store as it was.
- A run's key is the SHA-256 of its bench.json: adding it again changes nothing and says so.
- Run order (series, list): the run's own timestamp (when it was measured), then insertion
  order. Importing old runs after newer ones therefore still gives a history in time order.
"""
from __future__ import annotations

import gc
import re
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rooflab.data.jsonfile import RooflabDataError, canonical_text, parse_text
from rooflab.history import schema
from rooflab.history.ingest import Run
from rooflab.history.series import LOWER_IS_BETTER, Point, Series

DEFAULT_DB = "results/history.sqlite"
COUNTER_METRICS = ("instructions", "d1_misses", "ll_misses")


class StoreError(RooflabDataError):
    """The store cannot be opened or written; the message (one line) says which and why."""


def redact(url: str) -> str:
    """A URL as it may be printed: without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


class _SQLite:
    name = "sqlite"

    def __init__(self, path: Path, create: bool):
        self.created = False
        if not path.exists():
            if not create:
                raise StoreError(f"{path}: no history store there (`rooflab history add RUN --db {path}` makes one)")
            if path.parent.exists() and not path.parent.is_dir():
                raise StoreError(f"{path}: {path.parent} is not a directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            self.created = True
        elif path.is_dir():
            raise StoreError(f"{path}: is a directory, not a history store")
        self.path, self.where = path, str(path)
        self.errors = (sqlite3.Error,)
        self.integrity = sqlite3.IntegrityError
        try:
            # isolation_level None: no implicit transactions; each write is one explicit BEGIN.
            self.conn = sqlite3.connect(path, isolation_level=None, timeout=60)
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as e:
            self.drop_if_created()
            raise StoreError(f"{path}: not a usable SQLite store ({_first_line(e)})") from None

    def sql(self, q: str) -> str:
        return q

    def id_column(self) -> str:
        return "INTEGER PRIMARY KEY"

    def begin(self, write: bool) -> None:
        self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def lock_versions(self) -> None:
        pass  # BEGIN IMMEDIATE already serializes writers

    def drop_if_created(self) -> None:
        """A new file whose set-up failed is removed: nothing half-made stays behind."""
        if self.created:
            try:
                if getattr(self, "conn", None) is not None:
                    self.conn.close()
                self.path.unlink(missing_ok=True)
            except OSError:
                pass

    def close(self) -> None:
        self.conn.close()


class _PostgreSQL:
    name = "postgresql"
    created = False

    def __init__(self, url: str):
        self.where = redact(url)
        try:
            import psycopg2 as driver
        except ImportError:
            try:
                import psycopg as driver
            except ImportError:
                raise StoreError(f"--db {self.where}: PostgreSQL needs the psycopg2 module (Debian: python3-psycopg2; "
                                 "scripts/install_deps.sh installs it)") from None
        self.errors = (driver.Error,)
        self.integrity = driver.IntegrityError
        try:
            self.conn = driver.connect(url, connect_timeout=10)
        except driver.Error as e:
            raise StoreError(f"--db {self.where}: cannot connect ({redact(_first_line(e))})") from None
        except Exception as e:  # noqa: BLE001 - the drivers raise ProgrammingError/ValueError on a bad URL
            raise StoreError(f"--db {self.where}: not a usable PostgreSQL URL ({redact(_first_line(e))})") from None

    def sql(self, q: str) -> str:
        return q.replace("?", "%s")

    def id_column(self) -> str:
        return "BIGSERIAL PRIMARY KEY"

    def begin(self, write: bool) -> None:
        pass  # the driver opens a transaction at the first statement

    def commit(self) -> None:
        self.conn.commit()

    def rollback(self) -> None:
        self.conn.rollback()

    def lock_versions(self) -> None:
        self.conn.cursor().execute("LOCK TABLE schema_version IN EXCLUSIVE MODE")

    def drop_if_created(self) -> None:
        pass

    def close(self) -> None:
        self.conn.close()


@dataclass
class StoredRun:
    id: int
    timestamp: str
    commit: str
    machine: str
    cpu: str
    benchmarks: int
    source: str


class Store:
    """Opens (and migrates) the store at `url`: a file path or sqlite:///PATH, or
    postgresql://... . create=False refuses to make a new SQLite file. upto: migrate only that
    far (tests: a store as an older rooflab left it)."""

    def __init__(self, url: str = DEFAULT_DB, create: bool = True, upto: int = schema.LATEST):
        if re.match(r"postgres(ql)?://", url):
            self.db = _PostgreSQL(url)
        elif url.startswith("sqlite://"):
            self.db = _SQLite(Path(url[len("sqlite://"):]), create)
        elif re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url):
            raise StoreError(f"--db {redact(url)}: unknown kind of store (a file path, sqlite:///PATH or "
                             "postgresql://USER@HOST/DB)")
        else:
            self.db = _SQLite(Path(url), create)
        try:
            self._migrate(upto)
        except BaseException:
            if self.db.created:
                self.db.drop_if_created()
            else:
                self.db.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ SQL plumbing
    def _exec(self, q: str, params: tuple = ()):
        cur = self.db.conn.cursor()
        cur.execute(self.db.sql(q), params)
        return cur

    def _execmany(self, q: str, rows: list[tuple]) -> None:
        if rows:
            self.db.conn.cursor().executemany(self.db.sql(q), rows)

    @contextmanager
    def _tx(self, write: bool = False):
        """One transaction: committed when the block ends, rolled back on anything that escapes
        (an interrupt included); a database error becomes one StoreError line."""
        try:
            self.db.begin(write)
            yield
            self.db.commit()
        except BaseException as e:
            try:
                self.db.rollback()
            except self.db.errors:
                pass
            if isinstance(e, self.db.errors):
                raise StoreError(f"{self.db.where}: {_first_line(e)}") from None
            raise

    def _migrate(self, upto: int) -> None:
        with self._tx(write=True):
            self._exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                       "description TEXT NOT NULL, applied TEXT NOT NULL)")
            self.db.lock_versions()
            have = self._exec("SELECT max(version) FROM schema_version").fetchone()[0] or 0
            if have > schema.LATEST:
                raise StoreError(f"{self.db.where}: the store has schema version {have}; this rooflab knows versions "
                                 f"up to {schema.LATEST} (update rooflab)")
            for version, what, statements in schema.MIGRATIONS:
                if have < version <= upto:
                    for s in statements:
                        self._exec(s.replace("{id}", self.db.id_column()))
                    self._exec("INSERT INTO schema_version (version, description, applied) VALUES (?, ?, ?)",
                               (version, what, _now()))

    # ------------------------------------------------------------------ the store's API
    @property
    def version(self) -> int:
        with self._tx():
            return self._exec("SELECT max(version) FROM schema_version").fetchone()[0] or 0

    def add(self, run: Run) -> tuple[int, bool]:
        """Stores `run` in one transaction -> (its id, True); a run stored before (same key)
        -> (the stored id, False), nothing written."""
        def stored():
            row = self._exec("SELECT id FROM runs WHERE run_key = ?", (run.key,)).fetchone()
            return row and int(row[0])

        try:
            with self._tx(write=True):
                old = stored()
                if old:
                    return old, False
                self._exec("INSERT INTO machines (fingerprint, facts) VALUES (?, ?) ON CONFLICT (fingerprint) DO NOTHING",
                           (run.machine.fingerprint, _json(run.machine.facts)))
                run_id = int(self._exec(
                    "INSERT INTO runs (run_key, machine, timestamp, commit_sha, build, ceilings, source, added) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (run.key, run.machine.fingerprint, run.timestamp, run.commit, _json(run.build),
                     _json(run.ceilings), run.source, _now())).fetchone()[0])
                self._execmany(
                    "INSERT INTO results (run_id, benchmark, status, message, samples, median_s, disturbed, "
                    "disturbed_reason, efficiency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, r.benchmark, r.status, r.message, _json(r.samples), r.median_s, int(r.disturbed),
                      r.disturbed_reason, r.efficiency) for r in run.results])
                self._execmany(
                    "INSERT INTO counters (run_id, benchmark, backend, instructions, d1_misses, ll_misses) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(run_id, r.benchmark, r.counter_backend, *(r.counters.get(m) for m in COUNTER_METRICS))
                     for r in run.results if r.counters])
                return run_id, True
        except StoreError:
            # Another writer stored the same run between our check and our insert (PostgreSQL).
            with self._tx():
                old = stored()
            if old:
                return old, False
            raise

    def runs(self) -> list[StoredRun]:
        with self._tx():
            rows = self._exec(
                "SELECT r.id, r.timestamp, r.commit_sha, r.machine, m.facts, r.source, "
                "(SELECT count(*) FROM results x WHERE x.run_id = r.id) "
                "FROM runs r JOIN machines m ON m.fingerprint = r.machine ORDER BY r.timestamp, r.id").fetchall()
        out = []
        for rid, ts, commit, machine, facts, source, n in rows:
            f = parse_text(facts, f"{self.db.where}: machines.facts of run {rid}")
            out.append(StoredRun(int(rid), ts, commit, machine, f.get("cpu") or f.get("name", ""), int(n), source))
        return out

    def machines(self) -> dict[str, dict]:
        """fingerprint -> the readable facts it was made of."""
        with self._tx():
            rows = self._exec("SELECT fingerprint, facts FROM machines").fetchall()
        return {fp: parse_text(f, f"{self.db.where}: machines.facts of {fp}") for fp, f in rows}

    def series(self, metrics=None, machine: str | None = None, benchmark_regex: str | None = None) -> list[Series]:
        """Every (machine, benchmark, metric) series with at least one point, oldest point first
        (run timestamp, then insertion order). Failed results have no point; a metric the run
        did not record (no model.json, no cachegrind counts) has none either. machine: a
        fingerprint or a prefix of one."""
        metrics = list(LOWER_IS_BETTER) if metrics is None else list(metrics)
        unknown = [m for m in metrics if m not in LOWER_IS_BETTER]
        if unknown:
            raise StoreError(f"unknown metric {unknown[0]!r} (one of {', '.join(LOWER_IS_BETTER)})")
        try:
            pattern = re.compile(benchmark_regex) if benchmark_regex else None
        except re.error as e:
            raise StoreError(f"{benchmark_regex!r} is not a regular expression ({e})") from None
        q = ("SELECT r.id, r.commit_sha, r.timestamp, r.machine, x.benchmark, x.disturbed, x.median_s, x.efficiency, "
             "c.instructions, c.d1_misses, c.ll_misses FROM runs r JOIN results x ON x.run_id = r.id "
             "LEFT JOIN counters c ON c.run_id = x.run_id AND c.benchmark = x.benchmark WHERE x.status = 'ok'")
        params: tuple = ()
        if machine:
            q += " AND r.machine LIKE ?"
            params = (machine + "%",)
        with self._tx():
            rows = self._exec(q + " ORDER BY r.timestamp, r.id", params).fetchall()
        column = {"time": 6, "efficiency": 7, "instructions": 8, "d1_misses": 9, "ll_misses": 10}
        wanted = [(m, column[m]) for m in metrics]
        out: dict[tuple[str, str, str], Series] = {}
        # A million Points of a large store are long-lived: the cyclic collector's passes over
        # them while they are made would cost more than making them.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._points(rows, wanted, pattern, out)
        finally:
            if was_enabled:
                gc.enable()
        order = {m: i for i, m in enumerate(LOWER_IS_BETTER)}
        return [out[k] for k in sorted(out, key=lambda k: (k[0], k[1], order[k[2]]))]

    @staticmethod
    def _points(rows, wanted, pattern, out) -> None:
        keep: dict[str, bool] = {}
        for row in rows:
            bench = row[4]
            ok = keep.get(bench)
            if ok is None:
                ok = keep[bench] = pattern is None or pattern.search(bench) is not None
            if not ok:
                continue
            for metric, col in wanted:
                v = row[col]
                if v is None:
                    continue
                s = out.get((row[3], bench, metric))
                if s is None:
                    s = out[(row[3], bench, metric)] = Series(row[3], bench, metric)
                s.points.append(Point(str(row[0]), row[1], row[2], float(v), bool(row[5])))


def _json(v) -> str:
    return canonical_text(v)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
