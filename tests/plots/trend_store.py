"""A small synthetic `rooflab history` store of the fixture run's benchmarks (tests/fixtures/
run_small), for the trends page's tests (test_report_trends.py) and its render check
(render_check.py): two machines, known steps, cachegrind counts on one benchmark."""
from __future__ import annotations

import hashlib
from pathlib import Path

from rooflab.history import synth
from rooflab.history.ingest import Result, Run, fingerprint
from rooflab.history.store import Store

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests/fixtures/run_small"
STEPPED = "sinkhorn/typical/f64/1024x1024/threads:1"  # its time steps +25% at STEP_AT on machine A
COUNTED = "floyd_warshall/blocked/f32/512/threads:1"  # cachegrind counts, instructions +8% at STEP_AT
OTHER = "synthetic/not/in/the/run/threads:1"          # in the store, not in the run: never drawn
OK_NAMES = ["sinkhorn/typical/f64/128x128/threads:1", STEPPED, "sinkhorn/c2r/f64/1024x1024/part:col/threads:1",
            COUNTED]
RUNS, STEP_AT = 30, 18
MACHINES = {"A": {"cpu": "Synthetic CPU A (Zen-ish)", "vendor": "AMD", "isa": ["avx2"], "threads": 8},
            "B": {"cpu": "Synthetic CPU B (Skylake-ish)", "vendor": "Intel", "isa": ["avx2", "avx512"], "threads": 4}}


def fill(db: str) -> None:
    """RUNS commits, each measured on machines A and B. Efficiency steps down 20% at STEP_AT on
    both (A's level 0.6, B's 0.4); STEPPED's time steps up 25% on A only; COUNTED has exact
    cachegrind counts on A, its instructions 8% higher from STEP_AT on. Noise of 0.2%: well
    under the check's smallest change (1%), so no false alarm can be drawn here (the detection
    rates are measured in docs/history_check.md)."""
    with Store(db) as store:
        for m, (key, facts) in enumerate(MACHINES.items()):
            machine = fingerprint(facts)
            level = {n: synth.values(RUNS, seed=10 * m + k, base=1e-3 * (k + 1), cv=0.002,
                                     steps=((STEP_AT, 0.25),) if (n == STEPPED and key == "A") else ())
                     for k, n in enumerate(OK_NAMES + [OTHER])}
            eff = synth.values(RUNS, seed=7 + m, base=0.6 if key == "A" else 0.4, cv=0.002, steps=((STEP_AT, -0.2),))
            for i in range(RUNS):
                results = []
                for n in OK_NAMES + [OTHER]:
                    r = Result(n, samples=[float(level[n][i])], median_s=float(level[n][i]), efficiency=float(eff[i]))
                    if n == COUNTED and key == "A":
                        r.counters = {"instructions": 1e6 * (1.08 if i >= STEP_AT else 1.0), "d1_misses": 5e3,
                                      "ll_misses": 40.0}
                        r.counter_backend = "cachegrind"
                    results.append(r)
                store.add(Run(key=hashlib.sha256(f"{key} {i}".encode()).hexdigest(), source=f"synthetic {key} {i}",
                              timestamp=synth.timestamp_of(i), commit=synth.commit_of(i), build={}, machine=machine,
                              ceilings={}, results=results))
