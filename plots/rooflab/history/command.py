"""`rooflab history add|import|list|check` (plots/history.py runs this; docs/history.md)."""
from __future__ import annotations

import argparse
import importlib
import sys

from rooflab import cli
from rooflab.history.ingest import COMMIT_RE
from rooflab.history.store import DEFAULT_DB, Store

PROG = "rooflab history"
COMMANDS = {
    "add": "store one run directory",
    "import": "store run directories and Google Benchmark JSON files (a history from elsewhere)",
    "list": "the runs stored: id, time, commit, machine, number of benchmarks",
    "check": "change-point detection over each benchmark's series (exit 4 on a regression)",
}


def _db(p: cli.Parser) -> None:
    p.add_argument("--db", default=DEFAULT_DB, metavar="URL",
                   help=f"the store: a SQLite file path (default {DEFAULT_DB}) or postgresql://USER@HOST/DB")


def _commit(text: str) -> str:
    if not COMMIT_RE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a git commit (7 to 64 hex digits, lower case): {text!r}")
    return text


def _say_added(path: str, run_id: int, added: bool) -> None:
    print(f"{path}: {'stored as run' if added else 'already stored (unchanged): run'} {run_id}")


def cmd_add(a) -> int:
    from rooflab.history.ingest import read_run
    run = read_run(a.run, commit=a.commit or "", machine_name=a.machine_name)
    with Store(a.db) as store:
        _say_added(a.run, *store.add(run))
    return 0


def cmd_import(a) -> int:
    from rooflab.history.ingest import read_run
    # Every input is read and checked before the store is touched: a bad one writes nothing.
    runs = [read_run(p, machine_name=a.machine_name) for p in a.inputs]
    with Store(a.db) as store:
        for path, run in zip(a.inputs, runs):
            _say_added(path, *store.add(run))
    return 0


def cmd_list(a) -> int:
    with Store(a.db, create=False) as store:
        runs = store.runs()
    print(f"{'id':>5}  {'time':20}  {'commit':12}  {'machine':16}  {'benchmarks':>10}  cpu")
    for r in runs:
        print(f"{r.id:>5}  {r.timestamp:20}  {(r.commit or '-')[:12]:12}  {r.machine:16}  {r.benchmarks:>10}  {r.cpu}")
    print(f"{len(runs)} run{'s' if len(runs) != 1 else ''} in {store.db.where}")
    return 0


def parser_for(name: str, check=None) -> cli.Parser:
    prog = f"{PROG} {name}"
    if name == "add":
        p = cli.Parser(prog, "RUN [--db URL] [--commit SHA] [--machine-name NAME]", COMMANDS[name])
        p.add_run_argument("the run directory (bench.json; machine.json, model.json, counters.json when present)")
        p.add_argument("--commit", type=_commit, default=None,
                       help="the git commit the run measured (runs do not record one; default: none)")
    elif name == "import":
        p = cli.Parser(prog, "DIR|FILE... [--db URL] [--machine-name NAME]", COMMANDS[name])
        p.add_argument("inputs", nargs="+", metavar="DIR|FILE",
                       help="run directories, or Google Benchmark JSON files (--benchmark_out_format=json)")
    elif name == "list":
        p = cli.Parser(prog, "[--db URL]", COMMANDS[name])
    else:
        p = cli.Parser(prog, "[--db URL] [options]", COMMANDS[name])
        check.add_arguments(p)
    if name in ("add", "import"):
        p.add_argument("--machine-name", default="", metavar="NAME",
                       help="the machine's series key when there is no machine.json (Google Benchmark JSON from "
                            "elsewhere); replaces the fingerprint of machine.json when given")
    _db(p)
    return p


def cmd_check(check):
    def body(a) -> int:
        # Only the metrics the check will look at (it filters again, with its own default).
        metrics = getattr(a, "metric", None) or getattr(check, "DEFAULT_METRICS", None)
        with Store(a.db, create=False) as store:
            series = store.series(metrics)
        return check.run(series, a)
    return body


def run_command(name: str, rest: list[str]) -> int:
    if name == "check":
        try:
            check = importlib.import_module("rooflab.history.check")
            check.add_arguments, check.run  # noqa: B018 - both must exist
        except (ImportError, AttributeError) as e:
            cli.say(f"{PROG} check", "error", f"the change-point check is not in this rooflab "
                    f"(rooflab.history.check: {e})")
            return 1
        return cli.run(parser_for(name, check), cmd_check(check), rest)
    return cli.run(parser_for(name), {"add": cmd_add, "import": cmd_import, "list": cmd_list}[name], rest)


def main(argv: list[str] | None = None) -> int:
    return cli.command_group(PROG, "The results history: runs stored in SQLite or PostgreSQL, their per-benchmark "
                             "series, change points.", COMMANDS, run_command, sys.argv[1:] if argv is None else argv)
