"""The shape of plots/ (issue 15): imports go one way through the layers of the rooflab
package (no circle), JSON is parsed and written in one module, and every entry point answers
--help, a usage error in one line (exit 2) and an error in one line (exit 1), never a traceback."""
from __future__ import annotations

import ast
import io
import contextlib
from pathlib import Path

import pytest
from conftest import PLOTS, RUN_SMALL, run_script

from rooflab import cli

PKG = PLOTS / "rooflab"
# layer of each part of the package: a module may import its own layer or lower ones only
# (data.jsonfile, the one parser, and cli use the standard library only)
LAYERS = {"data.jsonfile": 0, "cli": 0, "data": 1, "figures": 2, "gate": 2, "history": 2, "claims": 3, "report": 4}


def module_name(path: Path) -> str:
    rel = path.relative_to(PLOTS).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The rooflab.* modules a file imports (at any depth of the file), resolved to modules."""
    names = {module_name(p) for p in PKG.rglob("*.py")}
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out |= {m for m in mods if m in names}
    return out


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) - {module_name(p)} for p in PKG.rglob("*.py")}


def part(mod: str) -> str:
    if mod == "rooflab.data.jsonfile":
        return "data.jsonfile"
    return mod.split(".")[1] if "." in mod else "package"


def test_no_import_circle():
    g = graph()
    done, stack = set(), []

    def visit(m):
        if m in stack:
            pytest.fail("import circle: " + " -> ".join(stack[stack.index(m):] + [m]))
        if m in done:
            return
        stack.append(m)
        for n in sorted(g.get(m, ())):
            visit(n)
        stack.pop()
        done.add(m)

    for m in sorted(g):
        visit(m)


def test_imports_go_down_the_layers():
    bad = [f"{m} -> {n}" for m, deps in graph().items() if part(m) in LAYERS
           for n in deps if part(n) in LAYERS and LAYERS[part(n)] > LAYERS[part(m)]]
    assert not bad, bad
    assert graph()["rooflab.cli"] <= {"rooflab.data.jsonfile"}  # standard library + the error type


def test_json_is_parsed_and_written_in_one_module():
    """Every other module reads through rooflab.data.jsonfile (its checks), never json itself."""
    users = []
    for p in list(PKG.rglob("*.py")) + list(PLOTS.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "json"
                    and node.attr in ("load", "loads", "dump", "dumps")):
                users.append(f"{p.relative_to(PLOTS)}:{node.lineno} json.{node.attr}")
    assert users and all(u.startswith("rooflab/data/jsonfile.py:") for u in users), users


ENTRIES = {  # entry file -> (prog, a usage error, a data error: args and what the message names)
    "report.py": ("rooflab report", ["--bogus"], ["/nonexistent/run"]),
    "claims.py": ("rooflab claims", [], ["/nonexistent/run"]),
    "compare.py": ("rooflab compare", ["only-one"], ["/nonexistent/a.json", "/nonexistent/b.json"]),
    "figure.py": ("plots/figure.py", ["no_such_figure", str(RUN_SMALL)], ["roofline", "/nonexistent/run"]),
    "gemm_summary.py": ("plots/gemm_summary.py", [], ["/nonexistent/run"]),
    "cpu_identity.py": ("plots/cpu_identity.py", [], ["/nonexistent/machine.json"]),
}


@pytest.mark.parametrize("entry", ENTRIES)
def test_entry_point_help_usage_and_error(entry):
    prog, usage, error = ENTRIES[entry]
    p = run_script(entry, "--help")
    assert p.returncode == 0 and p.stdout.startswith(f"usage: {prog} ") and p.stderr == "", p.stderr
    p = run_script(entry, *usage)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"{prog}: error: ") and f"usage: {prog}" in p.stderr
    p = run_script(entry, *error)
    assert p.returncode == 1 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"{prog}: error: ") and "/nonexistent/" in p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr


def test_run_positional_or_the_old_run_option():
    for entry in ("report.py", "claims.py"):
        p = run_script(entry, "--run", "/nonexistent/run")
        assert p.returncode == 1 and "does not exist" in p.stderr, p.stderr
        p = run_script(entry, "/nonexistent/a", "--run", "/nonexistent/b")
        assert p.returncode == 2 and "two run directories given" in p.stderr


def call(body, argv=()):
    ap = cli.Parser("rooflab test", "[X]", description="test")
    ap.add_argument("x", nargs="?")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.run(ap, body, list(argv))
    return rc, err.getvalue()


def test_an_unexpected_exception_is_one_line_not_a_traceback():
    def boom(_):
        raise KeyError("a reader's bug\nover two lines")
    rc, err = call(boom)
    assert rc == 1 and err.count("\n") == 1
    assert err.startswith("rooflab test: error: internal error, please report it: KeyError:")


def test_unwritable_output_and_usage_error_from_the_body(tmp_path):
    from rooflab.data.jsonfile import write_json_atomic
    rc, err = call(lambda _: write_json_atomic(tmp_path / "f" / "x.json", {}) and 0)
    assert rc == 0
    (tmp_path / "file").write_text("")
    rc, err = call(lambda _: write_json_atomic(tmp_path / "file" / "x.json", {}))
    assert rc == 1 and err.count("\n") == 1 and f"cannot write {tmp_path / 'file' / 'x.json'}" in err

    def usage(_):
        raise cli.UsageError("--a and --b exclude each other")
    with pytest.raises(SystemExit) as e:
        call(usage)
    assert e.value.code == 2


def test_a_python_without_the_packages_gets_one_line(capsys):
    assert cli.start("rooflab test", "rooflab.no_such_module") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot import rooflab.no_such_module" in err and "ROOFLAB_PYTHON" in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "x"])
def test_threshold_must_be_a_finite_number(value):
    p = run_script("compare.py", str(RUN_SMALL), str(RUN_SMALL), "--threshold", value)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--threshold" in p.stderr, p.stderr


@pytest.mark.parametrize("entry,args", [
    ("report.py", [str(RUN_SMALL), "--out", "FILE/report"]),
    ("figure.py", ["bandwidth", str(RUN_SMALL), "--out", "FILE/b.png"]),
    ("compare.py", [str(RUN_SMALL), str(RUN_SMALL), "--min-reps", "2", "--json-out", "FILE/c.json"]),
    ("gemm_summary.py", [str(RUN_SMALL), "--out", "FILE/s.json"])])
def test_an_output_path_under_a_file_is_one_line(tmp_path, entry, args):
    (tmp_path / "file").write_text("")
    p = run_script(entry, *[a.replace("FILE", str(tmp_path / "file")) for a in args])
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert str(tmp_path / "file") in p.stderr and "Traceback" not in p.stderr and "internal error" not in p.stderr
    assert [x.name for x in tmp_path.iterdir()] == ["file"]
