"""A small fleet (rooflab report --fleet) from the stored gate runs (results/baselines/gate: AMD
Zen 3, gate-zen5: AMD Zen 5): four nodes, three of them siblings (same CPU), one alone.
  zen3-a      the Zen 3 run as stored
  zen3-slow   its copy with every DRAM bandwidth lowered by 20%: the outlier rule must flag it
  zen3-near   its copy lowered by 5%: within the 10% rule, must not be flagged
  zen5-a      the Zen 5 run: no sibling, not compared
The copies get a host.cpu_signature of their own CPU's family (the stored Zen 3 file predates it)
only where `signature` is given; without it the siblings are found by CPU name, ISAs, L1 / L2."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / "results" / "baselines" / "gate"
GATE_ZEN5 = REPO / "results" / "baselines" / "gate-zen5"


def copy_run(src: Path, dst: Path, dram_scale: float = 1.0, hostname: str | None = None) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for f in ("machine.json", "bench.json", "model.json"):
        shutil.copy(src / f, dst / f)
    m = json.loads((dst / "machine.json").read_text())
    for kernel, per_t in m["bandwidth"]["levels"]["DRAM"].items():
        for t in per_t:
            per_t[t] *= dram_scale
    m["host"]["hostname"] = hostname or dst.name
    (dst / "machine.json").write_text(json.dumps(m))
    return dst


def make_fleet(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    copy_run(GATE, root / "zen3-a")
    copy_run(GATE, root / "zen3-slow", 0.80)
    copy_run(GATE, root / "zen3-near", 0.95)
    copy_run(GATE_ZEN5, root / "zen5-a")
    return root
