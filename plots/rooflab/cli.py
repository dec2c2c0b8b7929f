"""The command-line shape every entry point of plots/ shares (`rooflab report|claims|compare`,
plots/figure.py, plots/gemm_summary.py): `--help` on each; a usage error is one line on stderr
and exit 2; an error is one line `<prog>: error: ...` and exit 1; never a traceback (start()
and run() turn whatever escapes into one line). Standard library only, so that a Python
without the plots' packages still gets a one-line answer.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable


class UsageError(Exception):
    """A bad combination of options found after parsing: exit 2, like argparse's own."""


def finite_float(text: str) -> float:
    """argparse type: a finite number (float() alone takes "nan" and "inf")."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return v


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be positive, got {v}")
    return v


def one_line(msg) -> str:
    return " ".join(str(msg).split())


def say(prog: str, what: str, msg) -> None:
    print(f"{prog}: {what}: {one_line(msg)}", file=sys.stderr)


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) that still show the command's synopsis."""

    def __init__(self, prog: str, synopsis: str, description: str, **kw):
        super().__init__(prog=prog, usage=f"{prog} {synopsis}", description=description, **kw)
        self._synopsis = f"{prog} {synopsis}"

    def error(self, message: str):  # argparse's own: usage block + message, two lines or more
        say(self.prog, "error", f"{message} (usage: {self._synopsis}; see --help)")
        sys.exit(2)

    def add_run_argument(self, help: str, required: bool = True) -> None:
        """RUN, the run directory, positional; `--run RUN` is kept as an alias for old command
        lines (not in --help). parse_args() leaves it in .run."""
        self.add_argument("run_pos", nargs="?", metavar="RUN", help=help)
        self.add_argument("--run", help=argparse.SUPPRESS)
        self._run_required = required

    def parse_args(self, args=None, namespace=None):
        a = super().parse_args(args, namespace)
        if hasattr(a, "run_pos"):
            if a.run and a.run_pos and a.run != a.run_pos:
                self.error(f"two run directories given: {a.run_pos} and --run {a.run}")
            a.run = a.run or a.run_pos
            del a.run_pos
            if not a.run and self._run_required:
                self.error("the run directory is missing")
        return a


def run(parser: Parser, body: Callable[[argparse.Namespace], int], argv: list[str] | None = None) -> int:
    """Parses argv and runs body(args): UsageError is a usage error (exit 2); a data error is one
    line and exit 1, as is anything unexpected (named as an internal error, so it gets reported
    rather than mistaken for bad input)."""
    from rooflab.data.jsonfile import RooflabDataError

    a = parser.parse_args(argv)
    prog = parser.prog
    try:
        return body(a)
    except UsageError as e:
        parser.error(str(e))
    except RooflabDataError as e:
        say(prog, "error", e)
    except KeyboardInterrupt:
        say(prog, "error", "interrupted")
        return 130
    except BrokenPipeError:  # `... | head`: nothing more to say, and nowhere to say it
        sys.stderr.close()
    except OSError as e:
        say(prog, "error", f"{e.filename}: {e.strerror}" if e.filename else e)
    except Exception as e:  # noqa: BLE001 - the last guard: one line, never a traceback
        say(prog, "error", f"internal error, please report it: {type(e).__name__}: {e}")
    return 1


def start(prog: str, module: str) -> int:
    """What a file under plots/ runs: module.main(), with a Python that lacks the plots'
    packages (or a module that fails to import) answered in one line."""
    try:
        main = importlib.import_module(module).main
    except ImportError as e:
        say(prog, "error", f"cannot import {e.name or e} ({sys.executable}): install plots/requirements.txt "
            "(./run_all.sh makes .venv) or set ROOFLAB_PYTHON")
        return 1
    except Exception as e:  # noqa: BLE001
        say(prog, "error", f"internal error, please report it: {type(e).__name__}: {e}")
        return 1
    return main()


def command_group(prog: str, about: str, commands: dict[str, str], run_command: Callable[[str, list[str]], int],
                  argv: list[str], hidden: tuple[str, ...] = ()) -> int:
    """A command of subcommands (`rooflab history|fleet COMMAND ...`): --help lists `commands`
    (name: summary) under `about`; a missing or unknown one is a usage error (exit 2); else
    run_command(name, the rest of argv). `hidden` names run without being listed."""
    if argv and argv[0] in ("-h", "--help", "help"):
        rows = "\n".join(f"  {n:8} {what}" for n, what in commands.items())
        print(f"usage: {prog} COMMAND [options]   ({prog} COMMAND --help for its options)\n\n{about}\n\n"
              f"commands:\n{rows}")
        return 0
    name, rest = (argv[0], argv[1:]) if argv else ("", [])
    if name not in commands and name not in hidden:
        what = f"unknown command {name!r}" if name else "the command is missing"
        say(prog, "error", f"{what} (usage: {prog} {'|'.join(commands)} ...; see --help)")
        return 2
    return run_command(name, rest)
