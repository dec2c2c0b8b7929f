"""The store's schema as an ordered list of migrations. A store records each version applied in
`schema_version`; opening it applies the missing ones in order, in one transaction. Migrations
are never edited once released: a change is a new one at the end.

The DDL is the subset SQLite and PostgreSQL share; `{id}` is the dialect's auto-numbered key.
Floats are DOUBLE PRECISION (PostgreSQL's REAL is 4 bytes), booleans 0/1 integers, samples and
machine facts JSON text.
"""
from __future__ import annotations

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "runs, machines and per-benchmark results", [
        """CREATE TABLE machines (
             fingerprint TEXT PRIMARY KEY,
             facts TEXT NOT NULL)""",
        """CREATE TABLE runs (
             id {id},
             run_key TEXT NOT NULL UNIQUE,
             machine TEXT NOT NULL REFERENCES machines (fingerprint),
             timestamp TEXT NOT NULL,
             commit_sha TEXT NOT NULL,
             build TEXT NOT NULL,
             ceilings TEXT NOT NULL,
             source TEXT NOT NULL,
             added TEXT NOT NULL)""",
        """CREATE TABLE results (
             run_id BIGINT NOT NULL REFERENCES runs (id),
             benchmark TEXT NOT NULL,
             status TEXT NOT NULL,
             message TEXT NOT NULL,
             samples TEXT NOT NULL,
             median_s DOUBLE PRECISION,
             disturbed INTEGER NOT NULL,
             disturbed_reason TEXT NOT NULL,
             efficiency DOUBLE PRECISION,
             PRIMARY KEY (run_id, benchmark))""",
    ]),
    (2, "cachegrind counters per result; runs indexed by machine and time", [
        """CREATE TABLE counters (
             run_id BIGINT NOT NULL REFERENCES runs (id),
             benchmark TEXT NOT NULL,
             backend TEXT NOT NULL,
             instructions DOUBLE PRECISION,
             d1_misses DOUBLE PRECISION,
             ll_misses DOUBLE PRECISION,
             PRIMARY KEY (run_id, benchmark))""",
        "CREATE INDEX runs_by_machine_time ON runs (machine, timestamp, id)",
    ]),
]
LATEST = MIGRATIONS[-1][0]
