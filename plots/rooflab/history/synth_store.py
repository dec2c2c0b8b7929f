"""A synthetic history store, written through Store.add like real runs: for timing the store and
`rooflab history check` at scale (1000 runs x 300 benchmarks), seeded so it is reproducible.

  python -m rooflab.history.synth_store --runs 1000 --benchmarks 300 --db PATH
        [--seed N] [--cv 0.02] [--step-every K --step-at RUN --step-size 0.2]

Each benchmark has its own level and Gaussian noise of coefficient of variation --cv; with
--step-every K, every K-th benchmark's time (and efficiency, inversely) steps by --step-size
from run --step-at on. Counters (instructions, D1/LL misses) are exact: constant per benchmark,
as cachegrind's are for unchanged code. Run i has synth.py's timestamp_of(i) and commit_of(i).
"""
from __future__ import annotations

import hashlib
import random
import sys

from rooflab import cli
from rooflab.history.ingest import Result, Run, fingerprint
from rooflab.history.store import Store
from rooflab.history.synth import commit_of, timestamp_of


def make_run(i: int, benchmarks: int, rng: random.Random, cv: float, step_every: int, step_at: int,
             step_size: float, repetitions: int = 3) -> Run:
    commit = commit_of(i)
    machine = fingerprint({"name": "synthetic"})
    results = []
    for b in range(benchmarks):
        level = 1e-3 * (1 + b % 17)
        if step_every and b % step_every == 0 and i >= step_at:
            level *= 1 + step_size
        samples = [level * (1 + cv * rng.gauss(0, 1)) for _ in range(repetitions)]
        median = sorted(samples)[len(samples) // 2]
        results.append(Result(f"synth/b{b:04d}/f64/{64 * (1 + b % 17)}/threads:1", samples=samples,
                              median_s=median, efficiency=0.5 * 1e-3 * (1 + b % 17) / median,
                              counters={"instructions": 1e6 * (1 + b), "d1_misses": 1e3 * (1 + b),
                                        "ll_misses": 10.0 * (1 + b)}, counter_backend="cachegrind"))
    return Run(key=hashlib.sha256(f"synthetic {i} {commit}".encode()).hexdigest(), source=f"synthetic run {i}",
               timestamp=timestamp_of(i), commit=commit,
               build={"profile": "synthetic"}, machine=machine, ceilings={}, results=results)


def fill(db: str, runs: int, benchmarks: int, seed: int = 1, cv: float = 0.02, step_every: int = 0,
         step_at: int = 0, step_size: float = 0.2) -> int:
    """Adds the runs to the store at db -> how many were new."""
    rng = random.Random(seed)
    added = 0
    with Store(db) as store:
        for i in range(runs):
            added += store.add(make_run(i, benchmarks, rng, cv, step_every, step_at, step_size))[1]
    return added


def main(argv: list[str] | None = None) -> int:
    p = cli.Parser("python -m rooflab.history.synth_store", "--db URL [--runs N] [--benchmarks N] [options]",
                   "Fills a history store with synthetic runs (for timing the store and the check).")
    p.add_argument("--db", required=True, metavar="URL", help="the store (SQLite path or postgresql://...)")
    p.add_argument("--runs", type=cli.positive_int, default=1000)
    p.add_argument("--benchmarks", type=cli.positive_int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cv", type=cli.finite_float, default=0.02, help="noise: coefficient of variation")
    p.add_argument("--step-every", type=int, default=0, metavar="K", help="every K-th benchmark steps (0: none)")
    p.add_argument("--step-at", type=int, default=0, metavar="RUN", help="the first run with the step")
    p.add_argument("--step-size", type=cli.finite_float, default=0.2, help="relative size of the step in time")

    def body(a) -> int:
        n = fill(a.db, a.runs, a.benchmarks, a.seed, a.cv, a.step_every, a.step_at, a.step_size)
        print(f"{a.db}: {n} synthetic runs added ({a.runs} x {a.benchmarks} benchmarks asked)")
        return 0
    return cli.run(p, body, argv)


if __name__ == "__main__":
    sys.exit(main())
