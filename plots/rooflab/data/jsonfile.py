"""The one place plots/ parses and writes JSON.

read_document() turns every way a file can be unusable into one RooflabDataError line naming
the file and what is wrong: absent, a directory or other non-file, unreadable, empty, not UTF-8,
truncated, not JSON, NaN / Infinity / out-of-range numbers (Python's json module accepts them;
rooflab's C++ writers never produce them), a top level that is not an object, a schema of
another name or major version. Checker then gives typed access to the parsed document and names
the key path ($.rows[3].median_s) of a value of the wrong type. write_json_atomic() is the one
writer: standard JSON only (no NaN), written to a temporary file and renamed (write_text_atomic).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any


class RooflabDataError(Exception):
    """Bad or missing input; the message (one line) says what and how to fix it."""


class MalformedInput(RooflabDataError):
    """A file that is present but unusable as it is (unreadable, not JSON, wrong shape, wrong
    schema, NaN). An absent input may be a note where a part of the report is optional; a
    malformed one is an error (a warning with `report --keep-going`)."""


_TYPE_NAMES = {dict: "object", list: "array", str: "string", float: "number", int: "integer", bool: "boolean"}


def kind_of(v: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return _TYPE_NAMES.get(type(v), type(v).__name__)


class _Unusable:
    """Stands in for a number JSON cannot carry (NaN, +-Infinity, beyond float range) while the
    document is parsed, so the error can name where it is."""

    def __init__(self, token: str, why: str):
        self.token, self.why = token, why


def _find(v: Any, where: str = "$") -> tuple[str, _Unusable] | None:
    if isinstance(v, _Unusable):
        return where, v
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        hit = _find(x, f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}")
        if hit:
            return hit
    return None


def _parse(text: str, path: Path) -> Any:
    bad: list[_Unusable] = []

    def constant(tok: str):
        bad.append(_Unusable(tok, "where a number belongs (JSON has no NaN or Infinity)"))
        return bad[-1]

    def floating(tok: str):
        v = float(tok)
        if math.isfinite(v):
            return v
        bad.append(_Unusable(tok, "is out of the range of a double"))
        return bad[-1]

    def integer(tok: str):
        # Beyond 64 bits no rooflab writer produces it, and Python refuses > 4300 digits anyway.
        if len(tok.lstrip("-")) > 20:
            bad.append(_Unusable(tok[:24] + "...", "is out of the range of a 64-bit integer"))
            return bad[-1]
        return int(tok)

    try:
        doc = json.loads(text, parse_constant=constant, parse_float=floating, parse_int=integer)
    except json.JSONDecodeError as e:
        # An error at the very end, or a string that never closes (it runs to the end): cut short.
        if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
            raise MalformedInput(f"{path}: not valid JSON: the file ends at line {e.lineno} column {e.colno} "
                                 "before the document is complete (truncated?)") from None
        raise MalformedInput(f"{path}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise MalformedInput(f"{path}: not usable JSON (nested too deeply)") from None
    if bad:
        where, u = _find(doc) or ("$", bad[0])
        raise MalformedInput(f"{path}: {where}: {u.token} {u.why}")
    return doc


def read_document(path: str | Path, missing: str | None = None) -> Any:
    """The parsed JSON of `path`. `missing`: the message when the file is absent (default
    "<path> not found"); everything else that makes the file unusable is MalformedInput."""
    path = Path(path)
    if not path.exists():
        raise RooflabDataError(missing or f"{path} not found")
    if path.is_dir():
        raise MalformedInput(f"{path}: is a directory, expected a JSON file")
    if not path.is_file():  # a FIFO or a device would block or never end
        raise MalformedInput(f"{path}: not a regular file, expected a JSON file")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise MalformedInput(f"{path}: cannot read it ({e.strerror or e})") from None
    if not raw.strip():
        raise MalformedInput(f"{path}: the file is empty, not valid JSON")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MalformedInput(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}), so not "
                             "a JSON file rooflab wrote") from None
    return _parse(text, path)


def check_schema(doc: Any, path: Path, schema: str, major: int | str, how: str | None = None) -> dict:
    """doc must be an object whose "schema" is "<schema>/<major>[.minor]" (a newer minor
    version only adds keys, so it loads). `how`: the command that writes the file, as shown."""
    want = f"{schema}/{major}"
    rerun = f" (rerun {how})" if how else ""
    if not isinstance(doc, dict):
        raise MalformedInput(f"{path}: expected a JSON object with \"schema\": \"{want}\", got {kind_of(doc)}{rerun}")
    got = doc.get("schema")
    if not isinstance(got, str):
        raise MalformedInput(f'{path}: no "schema" key; expected "{want}"{rerun}')
    name, _, ver = got.partition("/")
    if name != schema:
        raise MalformedInput(f'{path}: schema is "{got}", expected "{want}"{rerun}')
    if ver.split(".")[0] != str(major):
        raise MalformedInput(f'{path}: unsupported schema version "{got}" (this plots/ reads major version {major})'
                             + (f"; regenerate it with {how} from the matching rooflab build" if how else ""))
    return doc


def read_schema_file(path: str | Path, schema: str, major: int | str = 1, how: str | None = None,
                     missing: str | None = None) -> dict:
    """read_document() + check_schema(): the common case of every rooflab output file."""
    path = Path(path)
    return check_schema(read_document(path, missing), path, schema, major, how)


@contextlib.contextmanager
def atomic_path(path: str | Path):
    """Yields a temporary path beside `path` to write; renamed over `path` when the block ends
    normally, removed otherwise (an interrupt included), so a reader never sees half a file and
    a failed write leaves the old one. An OSError is RooflabDataError naming `path`."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield tmp
        tmp.replace(path)
    except BaseException as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise RooflabDataError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def write_text_atomic(path: str | Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json_atomic(path: str | Path, doc: Any, indent: int | None = 1) -> Path:
    """Standard JSON (ValueError on NaN: a writer's bug, never a silent non-JSON file), written
    atomically."""
    return write_text_atomic(path, json.dumps(doc, indent=indent, allow_nan=False) + "\n")


def canonical_text(doc: Any) -> str:
    """One line of standard JSON with sorted keys (ValueError on NaN): the same document always
    gives the same text (a stored column, a hash's input)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


def parse_text(text: str, what: str) -> Any:
    """JSON that is not a file (a program's standard output), with the same checks."""
    if not text.strip():
        raise MalformedInput(f"{what}: no output, expected JSON")
    return _parse(text, Path(what))


# ----------------------------------------------------------------------------- typed access

def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _typenames(types: tuple) -> str:
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)


class Checker:
    """Typed access to a parsed document that names file and key path on error. types: a
    tuple of dict, list, str, float (any finite number, returned as float), int, bool."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def fail(self, where: str, what: str) -> MalformedInput:
        return MalformedInput(f"{self.path}: {where}: {what}")

    def value(self, v: Any, where: str, types: tuple, nullable: bool = False):
        """v itself checked against `types`."""
        if v is None and nullable:
            return None
        if isinstance(v, bool):
            ok = bool in types
        elif isinstance(v, (int, float)):
            ok = (float in types and math.isfinite(v)) or (int in types and isinstance(v, int))
            if ok and float in types and int not in types:
                v = float(v)
        else:
            ok = isinstance(v, tuple(t for t in types if t in (dict, list, str)))
        if ok:
            return v
        got = repr(v) if isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 40) else kind_of(v)
        raise self.fail(where, f"expected {_typenames(types)}{' or null' if nullable else ''}, got {got}")

    def get(self, obj: Any, key: str, where: str, types: tuple, nullable: bool = False):
        """A required key of the object `obj` (itself at `where`)."""
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {kind_of(obj)}")
        if key not in obj:
            raise self.fail(where, f'missing key "{key}"')
        return self.value(obj[key], f"{where}.{key}", types, nullable)

    def opt(self, obj: Any, key: str, where: str, types: tuple, default=None):
        """An optional key: absent or null gives `default`."""
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {kind_of(obj)}")
        v = obj.get(key)
        return default if v is None else self.value(v, f"{where}.{key}", types)

    def items(self, obj: Any, key: str, where: str, required: bool = True, of: tuple = (dict,)) -> list:
        """The array under `key` with each element checked against `of`. An optional one may be
        absent ([]); null is not an array (no rooflab writer puts null where a list belongs)."""
        if not required and isinstance(obj, dict) and key not in obj:
            return []
        v = self.get(obj, key, where, (list,))
        for i, x in enumerate(v):
            self.value(x, f"{where}.{key}[{i}]", of)
        return v
