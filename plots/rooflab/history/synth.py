"""Synthetic benchmark series with known changes, seeded: the change-point check's tests and its
detection-rate measurement (scripts/history_check_rates.py) use them."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import numpy as np

from rooflab.history.series import Point, Series

_T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def commit_of(i: int) -> str:
    """A fake full sha for run i, so commit ranges can be read back to run numbers."""
    return hashlib.sha1(f"run{i}".encode()).hexdigest()


def timestamp_of(i: int) -> str:
    """Run i's time: one hour after run i - 1."""
    return (_T0 + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def values(n: int, *, seed: int, base: float = 1.0, cv: float = 0.02,
           steps: tuple[tuple[int, float], ...] = (), drift: tuple[int, int, float] | None = None,
           outliers: tuple[tuple[int, float], ...] = ()) -> np.ndarray:
    """n runs of a level `base` with Gaussian noise of coefficient of variation `cv`.
    steps: (run, relative size): from that run on, the level is multiplied by 1+size.
    drift: (first run, last run, total relative size): the level grows linearly in between
    and stays there after. outliers: (run, factor): that one run's value is multiplied."""
    rng = np.random.default_rng(seed)
    level = np.full(n, float(base))
    for at, size in steps:
        level[at:] *= 1.0 + size
    if drift is not None:
        a, b, size = drift
        ramp = np.clip((np.arange(n) - a) / max(b - a, 1), 0.0, 1.0)
        level *= 1.0 + size * ramp
    v = level * (1.0 + cv * rng.standard_normal(n))
    for at, factor in outliers:
        v[at] *= factor
    return v


def series(vals, *, benchmark: str = "gemm/blocked/256x256x256", metric: str = "time",
           machine: str = "synthetic", disturbed: tuple[int, ...] = ()) -> Series:
    """A Series whose run i has commit commit_of(i) and a timestamp increasing with i."""
    pts = [Point(run_id=str(i), commit=commit_of(i),
                 timestamp=timestamp_of(i), value=float(v), disturbed=i in disturbed)
           for i, v in enumerate(vals)]
    return Series(machine=machine, benchmark=benchmark, metric=metric, points=pts)
