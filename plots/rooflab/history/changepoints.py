"""Change points of one benchmark series: E-Divisive means from MongoDB's
signal-processing-algorithms (the detector), then the filters that keep one noisy run or a
change too small to matter from being reported.

The package is optional (plots/requirements-optional.txt): `missing()` says why it cannot import, and
`DetectorMissing` is raised when it is needed and absent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median
from typing import Sequence

from rooflab.history.series import Point, Series

PACKAGE = "signal-processing-algorithms"


class DetectorMissing(RuntimeError):
    pass


def _package():
    try:
        from signal_processing_algorithms.determinism import deterministic_numpy_random
        from signal_processing_algorithms.energy_statistics import energy_statistics
    except ImportError as e:
        raise DetectorMissing(f"the change-point detector needs the Python package {PACKAGE} "
                              f"(plots/requirements-optional.txt): {e}") from None
    return energy_statistics, deterministic_numpy_random


def missing() -> str | None:
    """Why the detector cannot run, or None when it can."""
    try:
        _package()
    except DetectorMissing as e:
        return str(e)
    return None


@dataclass(frozen=True)
class Settings:
    pvalue: float = 0.01       # E-Divisive's permutation-test cut-off, and the re-test's
    permutations: int = 100    # per test; the p-value's resolution is 1/(permutations+1)
    min_points: int = 3        # shortest segment: fewer runs than this are noise, not a level
    min_change: float = 0.01   # smallest |ratio of segment medians - 1| reported
    seed: int = 1              # the permutation tests' seed: same series, same answer


@dataclass(frozen=True)
class Change:
    index: int        # position of the first run of the new segment in the series' used points
    before: Point     # last run before the change
    after: Point      # first run after it
    ratio: float      # median of the segment after / median of the segment before
    pvalue: float     # energy test between the two segments (permutation test, seeded)
    regression: bool  # worse for this metric (lower_is_better decides the direction)
    resolution: float = 0.0  # 1/(permutations+1): a p-value of 0 means "below this"

    @property
    def kind(self) -> str:
        return "regression" if self.regression else "improvement"


@dataclass
class Result:
    series: Series
    changes: list[Change]
    used: int       # points the detection ran on
    disturbed: int  # points left out because the driver marked them disturbed


def _segments(n: int, cps: list[int]) -> list[tuple[int, int]]:
    bounds = [0] + cps + [n]
    return list(zip(bounds[:-1], bounds[1:]))


def _ratio(values: Sequence[float], left: tuple[int, int], right: tuple[int, int]) -> float:
    before = median(values[left[0]:left[1]])
    after = median(values[right[0]:right[1]])
    if before == 0:
        return math.inf if after > 0 else (-math.inf if after < 0 else 1.0)
    return after / before


def _drop_short_segments(values: Sequence[float], cps: list[int], min_points: int) -> list[int]:
    """A segment shorter than min_points (one noisy run, two) is merged into the neighbour whose
    median it is closer to: the boundary between them goes, the other boundary stays to be
    judged on its own by the size and significance filters."""
    cps = sorted(cps)
    while cps:
        segs = _segments(len(values), cps)
        short = [i for i, (a, b) in enumerate(segs) if b - a < min_points]
        if not short:
            break
        i = min(short, key=lambda k: segs[k][1] - segs[k][0])
        if i == 0:
            cps.pop(0)
        elif i == len(segs) - 1:
            cps.pop()
        else:
            m = median(values[segs[i][0]:segs[i][1]])
            left = abs(median(values[segs[i - 1][0]:segs[i - 1][1]]) - m)
            right = abs(median(values[segs[i + 1][0]:segs[i + 1][1]]) - m)
            cps.pop(i - 1 if left <= right else i)
    return cps


def detect(values: Sequence[float], settings: Settings = Settings()) -> list[tuple[int, float, float]]:
    """(index, ratio, p-value) of each change point of `values`, oldest first. E-Divisive finds
    the candidates; short segments are merged, then the weakest candidate is removed while one is
    smaller than min_change or not significant in the energy test between its two segments
    (after a merge the segments grow, so every remaining candidate is re-tested)."""
    energy_statistics, deterministic_numpy_random = _package()
    values = [float(v) for v in values]
    if len(values) < 2 * settings.min_points:
        return []
    with deterministic_numpy_random(settings.seed):
        cps = energy_statistics.e_divisive(values, pvalue=settings.pvalue,
                                           permutations=settings.permutations)
    cps = _drop_short_segments(values, cps, settings.min_points)
    tested: dict[tuple[int, int, int], float] = {}

    def pvalue(left, right) -> float:
        key = (left[0], left[1], right[1])
        if key not in tested:
            # Seeded per test so a p-value does not depend on which tests ran before it.
            with deterministic_numpy_random(settings.seed):
                stats = energy_statistics.get_energy_statistics_and_probabilities(
                    values[left[0]:left[1]], values[right[0]:right[1]],
                    permutations=settings.permutations)
            tested[key] = float(stats.t_pvalue)
        return tested[key]

    while True:
        segs = _segments(len(values), cps)
        scored = []
        for k, cp in enumerate(cps):
            r = _ratio(values, segs[k], segs[k + 1])
            size = abs(math.log(r)) if r > 0 and math.isfinite(r) else math.inf
            scored.append((cp, r, size, segs[k], segs[k + 1]))
        weak = [s for s in scored if s[2] < math.log1p(settings.min_change)]
        if not weak:
            weak = [s for s in scored if pvalue(s[3], s[4]) > settings.pvalue]
        if not weak:
            return [(cp, r, pvalue(left, right)) for cp, r, _, left, right in scored]
        cps.remove(min(weak, key=lambda s: s[2])[0])


def analyse(series: Series, settings: Settings = Settings()) -> Result:
    """Change points of a series. Runs the driver marked disturbed are left out: their time was
    measured under load, so it says nothing about the code."""
    used = [p for p in series.points if not p.disturbed and math.isfinite(p.value)]
    changes = []
    for index, ratio, p in detect([p.value for p in used], settings):
        worse = ratio > 1 if series.lower_is_better else ratio < 1
        changes.append(Change(index=index, before=used[index - 1], after=used[index],
                              ratio=ratio, pvalue=p, regression=worse,
                              resolution=1.0 / (settings.permutations + 1)))
    return Result(series=series, changes=changes, used=len(used),
                  disturbed=sum(1 for p in series.points if p.disturbed))
