"""The variant registry as figures need it (docs/json.md#list): each family's variants in table
order, own kernel or vendor baseline (and which library), their ISAs, and the ISA order.
Figures take these facts from here, never from a list of their own.

Where from, for a run directory DIR:
  1. DIR/list.json (`rooflab list --json`, written by run_all.sh next to bench.json): the
     registry of the build that measured the run, so a copied run directory draws without a
     build;
  2. else `rooflab list --json` of this checkout's build ($ROOFLAB_BIN, else run_all.sh's
     build/release/rooflab, else `rooflab` on PATH): run directories written before list.json
     existed still draw;
  3. else an error naming both ways.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rooflab.data.jsonfile import Checker, MalformedInput, RooflabDataError, check_schema, parse_text, read_document

REGISTRY_FILE = "list.json"
SCHEMA, MAJOR = "rooflab.list", 1
KINDS = ("own", "baseline")
REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class VariantInfo:
    name: str
    kind: str              # "own" kernel or a vendor library "baseline"
    library: str | None    # the library a baseline calls (openblas, blis, onednn, ...)
    isas: tuple[str, ...]  # in the registry's ISA order; empty: not ISA-specific
    description: str


@dataclass(frozen=True)
class Registry:
    source: str                                     # the file or command it was read from
    isa_order: tuple[str, ...]
    families: dict[str, tuple[VariantInfo, ...]]

    def variants(self, family: str) -> tuple[VariantInfo, ...]:
        if family not in self.families:
            raise RooflabDataError(f"{self.source}: no family {family!r} in the registry "
                                   f"(known: {', '.join(self.families) or 'none'})")
        return self.families[family]

    def variant_order(self, family: str) -> list[str]:
        """The family's variant names in table order."""
        return [v.name for v in self.variants(family)]

    def baselines(self, family: str) -> tuple[str, ...]:
        """The family's vendor-library baselines, in table order."""
        return tuple(v.name for v in self.variants(family) if v.kind == "baseline")


def parse_registry(doc, where: str | Path) -> Registry:
    """The registry of a `rooflab list --json` document; MalformedInput naming the key when
    the families block is absent or of the wrong shape."""
    doc = check_schema(doc, Path(where), SCHEMA, MAJOR, "`rooflab list --json`")
    ck = Checker(where)
    if "families" not in doc or "isa_order" not in doc:
        raise MalformedInput(f"{where}: no \"families\" / \"isa_order\" block: written by a rooflab older than "
                             "its registry block; rebuild rooflab and rerun `rooflab list --json`")
    isa_order = tuple(ck.items(doc, "isa_order", "$", of=(str,)))
    families: dict[str, tuple[VariantInfo, ...]] = {}
    for i, f in enumerate(ck.items(doc, "families", "$")):
        w = f"$.families[{i}]"
        name = ck.get(f, "name", w, (str,))
        variants = []
        for j, v in enumerate(ck.items(f, "variants", w)):
            vw = f"{w}.variants[{j}]"
            kind = ck.get(v, "kind", vw, (str,))
            if kind not in KINDS:
                raise ck.fail(f"{vw}.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
            library = ck.get(v, "library", vw, (str,), nullable=True)
            if (kind == "baseline") != bool(library):
                raise ck.fail(f"{vw}.library", f"a {kind} variant {'needs a' if kind == 'baseline' else 'has no'} "
                                               f"library, got {library!r}")
            isas = tuple(ck.items(v, "isas", vw, of=(str,)))
            unknown = [x for x in isas if x not in isa_order]
            if unknown:
                raise ck.fail(f"{vw}.isas", f"ISA {unknown[0]!r} is not in $.isa_order {list(isa_order)}")
            variants.append(VariantInfo(ck.get(v, "name", vw, (str,)), kind, library, isas,
                                        ck.get(v, "description", vw, (str,))))
        families[name] = tuple(variants)
    return Registry(str(where), isa_order, families)


def rooflab_binary() -> str | None:
    """The rooflab of this checkout: $ROOFLAB_BIN, run_all.sh's build, or one on PATH."""
    env = os.environ.get("ROOFLAB_BIN")
    if env:
        return env
    built = REPO / os.environ.get("ROOFLAB_BUILD_DIR", "build/release") / "rooflab"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built)
    return shutil.which("rooflab")


@functools.lru_cache(maxsize=None)
def _from_binary(binary: str) -> Registry:
    cmd = [binary, "list", "--json", "--profile", "smoke"]
    what = " ".join(cmd)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RooflabDataError(f"cannot run {what}: {getattr(e, 'strerror', None) or e}") from None
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise RooflabDataError(f"{what} failed (exit {p.returncode}): {last}")
    return parse_registry(parse_text(p.stdout, f"the output of {what}"), f"the output of {what}")


def load_registry(run_dir) -> Registry:
    """The registry for the run in `run_dir` (see the module's docstring for where from)."""
    path = Path(run_dir) / REGISTRY_FILE
    if path.exists():
        return parse_registry(read_document(path), path)
    binary = rooflab_binary()
    if binary is None:
        raise RooflabDataError(f"{path} not found and no rooflab binary to ask (set ROOFLAB_BIN): the variant "
                               f"facts come from `rooflab list --json > {path}`")
    return _from_binary(binary)
