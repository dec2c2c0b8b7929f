"""plots/rooflab/data/cpu_identity.py: the one rule for "the same CPU" that the fleet report, the
perf gate and the history share. Signature against signature (name and signature decide),
files without one (name, ISAs, L1 / L2 decide: generic hypervisor names told apart by their
caches), one of each, the grouping of a fleet, bad input, and plots/cpu_identity.py."""
from __future__ import annotations

import json
import re

import pytest
from conftest import REPO, run_script

from rooflab.data.cpu_identity import LEGACY, SIGNATURE, cpu_identity, group_by_cpu, same_cpu
from rooflab.data.jsonfile import MalformedInput

MILAN = "AuthenticAMD family 25 model 1 stepping 1"
TURIN = "AuthenticAMD family 26 model 2 stepping 0"


def machine(cpu="AMD EPYC", sig=None, isa=("scalar", "avx2"), l1=32768, l2=524288) -> dict:
    host = {"cpu": cpu, "isa": list(isa), "threads": 2}
    if sig is not None:
        host["cpu_signature"] = sig
    return {"schema": "rooflab.machine/1", "host": host, "caches": {"reported": {"L1": l1, "L2": l2, "L3": 1 << 25}}}


ZEN3 = dict(isa=("scalar", "avx2"), l1=32768, l2=524288)            # results/baselines/gate
ZEN5 = dict(isa=("scalar", "avx2", "avx512"), l1=49152, l2=1048576)  # results/baselines/gate-zen5


def test_signatures_decide_when_both_have_one():
    # the same die with AVX-512 masked by a hypervisor on one side: still one CPU
    assert same_cpu(machine(sig=MILAN, **ZEN3), machine(sig=MILAN, **ZEN5))
    # one generic name, same ISAs and caches, another signature: two CPUs
    assert not same_cpu(machine(sig=MILAN, **ZEN3), machine(sig=TURIN, **ZEN3))
    # one signature, two SKUs of that die (other cores, clocks, L3): two CPUs
    assert not same_cpu(machine("AMD EPYC 7313 16-Core Processor", MILAN),
                        machine("AMD EPYC 7763 64-Core Processor", MILAN))
    a = cpu_identity(machine(sig=MILAN))
    assert a.describe() == a.describe(cpu_identity(machine(sig=TURIN))) == f"AMD EPYC [{MILAN}]"
    assert a.source == SIGNATURE


def test_files_without_a_signature_use_name_isas_and_private_caches():
    # under a hypervisor "AMD EPYC" names a Zen 3 and a Zen 5: their caches and ISAs tell them apart
    assert not same_cpu(machine(**ZEN3), machine(**ZEN5))
    assert not same_cpu(machine(**ZEN3), machine(**{**ZEN3, "l2": 1048576}))
    assert not same_cpu(machine(**ZEN3), machine("AMD EPYC 7B13", **ZEN3))
    assert same_cpu(machine(**ZEN3), machine(**ZEN3))
    b = cpu_identity(machine(**ZEN5))
    assert b.describe() == "AMD EPYC, scalar+avx2+avx512, L1 49152, L2 1048576" and b.source == LEGACY
    # absent facts read "?" (an old or hand-made file), on both sides alike
    bare = cpu_identity({"host": {}})
    assert bare.describe() == "?, , L1 ?, L2 ?" and same_cpu(bare, {"host": {}})


def test_one_file_with_a_signature_and_one_without():
    old, new = machine(**ZEN3), machine(sig=MILAN, **ZEN3)
    assert same_cpu(old, new) and same_cpu(new, old)
    assert not same_cpu(machine(**ZEN5), new)
    # described as compared with the older file: the legacy form on both sides
    assert cpu_identity(new).describe(cpu_identity(old)) == "AMD EPYC, scalar+avx2, L1 32768, L2 524288"
    # an empty signature is no signature
    assert cpu_identity(machine(sig="", **ZEN3)).signature is None
    assert not same_cpu(machine(sig="", **ZEN5), new)


@pytest.mark.parametrize("a,b", [(machine(sig=MILAN), machine(sig=MILAN, **ZEN5)), (machine(**ZEN3), machine(**ZEN5)),
                                 (machine(sig=MILAN), machine()), (machine(sig=TURIN), machine(sig=MILAN))])
def test_same_cpu_is_symmetric_and_is_what_the_gate_compares(a, b):
    ia, ib = cpu_identity(a), cpu_identity(b)
    assert same_cpu(a, b) == same_cpu(b, a) == (ia.describe(ib) == ib.describe(ia))


def test_group_by_cpu():
    ids = {n: cpu_identity(m) for n, m in {
        "a-old": machine(**ZEN3),            # no signature; matches the one Milan group: joins it
        "b-milan": machine(sig=MILAN, **ZEN3),
        "c-milan": machine(sig=MILAN, **ZEN3),
        "d-turin": machine(sig=TURIN, **ZEN5),
        "e-zen5-old": machine(**ZEN5),       # matches the Turin group by name, ISAs, caches: joins it
        "f-7b13": machine("AMD EPYC 7B13", **ZEN3),  # matches nobody
        "g-7b13": machine("AMD EPYC 7B13", **ZEN3),
    }.items()}
    assert group_by_cpu(ids) == {f"AMD EPYC [{MILAN}]": ["a-old", "b-milan", "c-milan"],
                                 f"AMD EPYC [{TURIN}]": ["d-turin", "e-zen5-old"],
                                 "AMD EPYC 7B13, scalar+avx2, L1 32768, L2 524288": ["f-7b13", "g-7b13"]}


def test_group_by_cpu_leaves_an_ambiguous_old_file_out():
    # two signatures behind the same name, ISAs and caches: the old file could be either
    ids = {"old": cpu_identity(machine(**ZEN3)), "m1": cpu_identity(machine(sig=MILAN, **ZEN3)),
           "m2": cpu_identity(machine(sig="AuthenticAMD family 25 model 33 stepping 0", **ZEN3))}
    groups = group_by_cpu(ids)
    assert groups["AMD EPYC, scalar+avx2, L1 32768, L2 524288"] == ["old"] and len(groups) == 3
    # a signature group whose members differ in ISAs (one masked) takes no old file
    ids = {"old": cpu_identity(machine(**ZEN3)), "m1": cpu_identity(machine(sig=MILAN, **ZEN3)),
           "m2": cpu_identity(machine(sig=MILAN, **ZEN5))}
    assert group_by_cpu(ids) == {f"AMD EPYC [{MILAN}]": ["m1", "m2"],
                                 "AMD EPYC, scalar+avx2, L1 32768, L2 524288": ["old"]}


@pytest.mark.parametrize("edit,where", [
    (lambda m: m["host"].update(cpu_signature=25), "$.host.cpu_signature"),
    (lambda m: m["host"].update(isa="avx2"), "$.host.isa"),
    (lambda m: m["caches"]["reported"].update(L1="32K"), "$.caches.reported.L1"),
    (lambda m: m.update(host=[]), "$.host")])
def test_wrong_types_are_named(edit, where):
    m = machine(sig=MILAN)
    edit(m)
    with pytest.raises(MalformedInput, match="^" + re.escape(f"node-a/machine.json: {where}:")):
        cpu_identity(m, "node-a/machine.json")


def test_the_script_the_gate_runs(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(machine(**ZEN3)))
    new.write_text(json.dumps(machine(sig=MILAN, **ZEN3)))
    out = [run_script("cpu_identity.py", *args) for args in ([str(new)], [str(new), str(old)], [str(old), str(new)])]
    assert [(p.returncode, p.stdout, p.stderr) for p in out] == [
        (0, f"AMD EPYC [{MILAN}]\n", ""), (0, "AMD EPYC, scalar+avx2, L1 32768, L2 524288\n", ""),
        (0, "AMD EPYC, scalar+avx2, L1 32768, L2 524288\n", "")]
    gate = REPO / "results" / "baselines"
    p = run_script("cpu_identity.py", str(gate / "gate-zen5" / "machine.json"), str(gate / "gate" / "machine.json"))
    assert p.stdout == "AMD EPYC, scalar+avx2+avx512, L1 49152, L2 1048576\n"
    (tmp_path / "bench.json").write_text('{"schema": "rooflab.bench/1"}')
    p = run_script("cpu_identity.py", str(tmp_path / "bench.json"))
    assert p.returncode == 1 and p.stdout == "" and p.stderr.count("\n") == 1 and "rooflab.machine" in p.stderr
