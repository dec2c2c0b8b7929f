"""The one shape a benchmark's history has between the store (which builds it) and the
change-point check and the report (which read it)."""
from __future__ import annotations

from dataclasses import dataclass, field

# Metrics a series can hold, and whether a lower value is the better one.
LOWER_IS_BETTER = {
    "time": True,           # median seconds per iteration
    "efficiency": False,    # attained / predicted (roofline), per-ISA ceilings
    "instructions": True,   # cachegrind: simulated, deterministic
    "d1_misses": True,
    "ll_misses": True,
}


@dataclass(frozen=True)
class Point:
    run_id: str        # the store's key of the run
    commit: str        # git commit (full sha), "" when the run did not record one
    timestamp: str     # ISO 8601 UTC of the run
    value: float
    disturbed: bool = False  # the driver marked the measurement as disturbed by load


@dataclass
class Series:
    machine: str       # machine fingerprint: series of different machines are never mixed
    benchmark: str     # rooflab name (README "Names")
    metric: str        # a key of LOWER_IS_BETTER
    points: list[Point] = field(default_factory=list)  # oldest first, in the store's run order

    @property
    def lower_is_better(self) -> bool:
        return LOWER_IS_BETTER[self.metric]
