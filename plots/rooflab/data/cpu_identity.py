"""Which CPU a machine.json was characterized on, and whether two files come from the same CPU:
the one rule behind the fleet report's siblings (report/fleet.py), the perf gate's choice of
baseline (scripts/perf_gate.sh, through plots/cpu_identity.py) and the CPU part of the history's
machine fingerprint (history/ingest.py).

Two machine.json files are the same CPU when
  - both record host.cpu_signature (CPUID's vendor, family, model, stepping): the same model
    name (host.cpu) and the same signature. The signature tells apart generations that a
    hypervisor's generic name hides ("AMD EPYC" for a Zen 3 and a Zen 5); the name tells apart
    the SKUs of one die, which share a signature but not their cores, clocks or L3 (an EPYC 7313
    and a 7763 are both family 25 model 1 stepping 1);
  - otherwise (either file was written before the signature was recorded): the same name, ISAs
    and reported L1 / L2 sizes, which differ between the generations behind one generic name.

    python3 plots/cpu_identity.py FILE [OTHER]

prints FILE's CPU as compared with OTHER's (the signature form only when both have one); two
files are the same CPU exactly when each printed as compared with the other reads the same.
Standard library only: the perf gate may run it with a Python that lacks the plots' packages.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rooflab import cli
from rooflab.data.jsonfile import Checker, read_schema_file

PROG = "plots/cpu_identity.py"
SIGNATURE = "host.cpu_signature"
LEGACY = "no host.cpu_signature (older machine.json): CPU name, ISAs, L1 / L2 sizes"


@dataclass(frozen=True)
class CpuIdentity:
    name: str | None          # host.cpu
    signature: str | None     # host.cpu_signature; an empty one counts as absent
    isa: tuple[str, ...]      # host.isa, in the file's order
    l1: int | None            # caches.reported, bytes
    l2: int | None

    @property
    def source(self) -> str:
        """What identifies this CPU when it is compared with a file that has a signature."""
        return SIGNATURE if self.signature else LEGACY

    def legacy(self) -> str:
        return (f"{self.name or '?'}, {'+'.join(self.isa)}, L1 {'?' if self.l1 is None else self.l1}, "
                f"L2 {'?' if self.l2 is None else self.l2}")

    def describe(self, other: CpuIdentity | None = None) -> str:
        """This CPU as compared with `other` (None: on its own): "NAME [SIGNATURE]" when both
        record a signature, else "NAME, ISA+ISA, L1 BYTES, L2 BYTES"."""
        if self.signature and (other is None or other.signature):
            return f"{self.name or '?'} [{self.signature}]"
        return self.legacy()


def cpu_identity(machine: dict, where: str | Path = "machine.json") -> CpuIdentity:
    """The CPU of a parsed machine.json (`where` names it in errors). Absent facts are None (a
    file may predate them); a fact of the wrong type is MalformedInput."""
    ck = Checker(where)
    host = ck.opt(machine, "host", "$", (dict,), {})
    caches = ck.opt(ck.opt(machine, "caches", "$", (dict,), {}), "reported", "$.caches", (dict,), {})
    return CpuIdentity(name=ck.opt(host, "cpu", "$.host", (str,)),
                       signature=ck.opt(host, "cpu_signature", "$.host", (str,)) or None,
                       isa=tuple(ck.items(host, "isa", "$.host", required=False, of=(str,))),
                       l1=ck.opt(caches, "L1", "$.caches.reported", (int,)),
                       l2=ck.opt(caches, "L2", "$.caches.reported", (int,)))


def _ident(m: CpuIdentity | dict) -> CpuIdentity:
    return m if isinstance(m, CpuIdentity) else cpu_identity(m)


def same_cpu(a: CpuIdentity | dict, b: CpuIdentity | dict) -> bool:
    """Whether two machine.json files (parsed, or their cpu_identity) come from the same CPU."""
    a, b = _ident(a), _ident(b)
    return a.describe(b) == b.describe(a)


def group_by_cpu(machines: dict[str, CpuIdentity]) -> dict[str, list[str]]:
    """Machines (name -> identity, in the order given) in groups of the same CPU: label -> names.
    same_cpu is not transitive across the two forms (a file without a signature can match two
    files whose signatures differ), so the signature decides first: the files with one group by
    name and signature; a file without one joins the signature group all of whose members it
    matches when exactly one does (two would leave it ambiguous), else it groups with the other
    files without one by name, ISAs, L1 / L2. Labels are describe() on its own (the signature
    form for a signature group), so they do not collide."""
    groups: dict[str, list[str]] = {}
    for name, m in machines.items():
        if m.signature:
            groups.setdefault(m.describe(), []).append(name)
    signed = list(groups.items())
    for name, m in machines.items():
        if m.signature:
            continue
        fits = [label for label, names in signed if all(same_cpu(m, machines[n]) for n in names)]
        groups.setdefault(fits[0] if len(fits) == 1 else m.legacy(), []).append(name)
    order = {n: i for i, n in enumerate(machines)}
    return {label: sorted(names, key=order.__getitem__) for label, names in groups.items()}


def main(argv=None) -> int:
    p = cli.Parser(PROG, "FILE [OTHER]", description="FILE's CPU (a machine.json's) as compared with OTHER's: "
                   "two files are the same CPU when each, printed as compared with the other, reads the same.")
    p.add_argument("file", metavar="FILE", help="a machine.json")
    p.add_argument("other", metavar="OTHER", nargs="?", help="the machine.json it is compared with")

    def body(a) -> int:
        def read(path):
            return cpu_identity(read_schema_file(path, "rooflab.machine", 1, "rooflab characterize"), path)
        print(read(a.file).describe(read(a.other) if a.other else None))
        return 0

    return cli.run(p, body, argv)
