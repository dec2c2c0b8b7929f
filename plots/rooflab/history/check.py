"""`rooflab history check`: change points of every benchmark series of the store, reported as
regressions or improvements, with the exit status a CI gate needs (docs/history_check.md).

The command line (plots/history.py) builds the series and calls add_arguments / run:
- with --since COMMIT, exit 4 when a regression's first run comes after that commit's run;
- without it, exit 4 when a series' latest change point is a regression: the series sits in a
  regressed segment now.
"""
from __future__ import annotations

import argparse
import re
import sys

from rooflab.cli import finite_float, positive_int, say
from rooflab.history import changepoints
from rooflab.history.changepoints import Result, Settings
from rooflab.history.output import Verdict, junit, markdown, summary_line, table, write_atomically
from rooflab.history.series import LOWER_IS_BETTER, Series

DEFAULT_METRICS = ("time", "efficiency")
# Simulated by cachegrind: the same code gives the same count, so any change is a real one and
# the smallest change reported defaults to 0 for them.
DETERMINISTIC = ("instructions", "d1_misses", "ll_misses")
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REGRESSION = 0, 1, 2, 4
DEFAULT_LAST = 200  # runs of each series checked: recent enough to matter, 15 ms a series
PROG = "rooflab history check"


def _metrics(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in names if m not in LOWER_IS_BETTER]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown metric {','.join(bad) or text!r} (one of {', '.join(LOWER_IS_BETTER)})")
    return names


def _fraction(text: str) -> float:
    v = finite_float(text)
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError(f"{text} is not in [0, 1)")
    return v


def _count(text: str) -> int:
    return 0 if text.strip() == "0" else positive_int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = Settings()
    parser.add_argument("--since", metavar="COMMIT",
                        help="exit 4 if a regression starts after this commit's run (full or "
                             "abbreviated sha); without it, exit 4 if a series' latest change "
                             "point is a regression")
    parser.add_argument("--metric", metavar="M[,M]", type=_metrics, action="extend",
                        help=f"metrics to check, repeatable or comma-separated (default: "
                             f"{','.join(DEFAULT_METRICS)}; one of {', '.join(LOWER_IS_BETTER)})")
    parser.add_argument("--filter", metavar="REGEX", help="only benchmarks whose name matches (re.search)")
    parser.add_argument("--machine", metavar="FP", help="only series of this machine fingerprint (or its prefix)")
    parser.add_argument("--markdown", metavar="FILE", help="write a Markdown summary (a pull-request comment)")
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per checked series")
    parser.add_argument("--pvalue", type=_fraction, default=d.pvalue,
                        help=f"significance of a change point, E-Divisive's permutation test (default {d.pvalue})")
    parser.add_argument("--permutations", type=positive_int, default=d.permutations,
                        help=f"permutations per test (default {d.permutations})")
    parser.add_argument("--min-points", type=positive_int, default=d.min_points,
                        help=f"runs a segment needs to count as a level; shorter ones are noise (default {d.min_points})")
    parser.add_argument("--min-change", type=_fraction, default=None,
                        help=f"smallest change reported, as a fraction of the median (default "
                             f"{d.min_change} for time and efficiency, 0 for {', '.join(DETERMINISTIC)})")
    parser.add_argument("--last", type=_count, default=DEFAULT_LAST, metavar="N",
                        help=f"check the latest N runs of each series, 0: all (default {DEFAULT_LAST}; with "
                             "--since, the window reaches back to N/2 runs before that commit)")
    parser.add_argument("--seed", type=int, default=d.seed, help=argparse.SUPPRESS)


def _matches(commit: str, since: str) -> bool:
    return bool(commit) and commit.lower().startswith(since.lower())


def window(series: Series, last: int, since: str | None) -> Series:
    """The latest `last` runs of a series (0: all); with since, reaching back to last/2 runs
    before that commit's run."""
    pts = series.points
    if last <= 0 or len(pts) <= last:
        return series
    start = len(pts) - last
    if since:
        hits = [i for i, p in enumerate(pts) if _matches(p.commit, since)]
        if hits:
            start = min(start, max(0, hits[-1] - last // 2))
    return Series(machine=series.machine, benchmark=series.benchmark, metric=series.metric,
                  points=pts[start:])


def _gated(result: Result, since: str | None, since_time: str | None):
    regressions = [c for c in result.changes if c.regression]
    if since is None:
        return regressions[-1:] if result.changes and result.changes[-1].regression else []
    pts = result.series.points
    hits = [i for i, p in enumerate(pts) if _matches(p.commit, since)]
    if hits:
        # The series' own run order decides; the store keeps it.
        pos = {id(p): i for i, p in enumerate(pts)}
        return [c for c in regressions if pos[id(c.after)] > hits[-1]]
    # This benchmark has no run of that commit (added later, or failed then): by time.
    return [c for c in regressions if since_time is not None and c.after.timestamp > since_time]


def settings_for(metric: str, min_change: float | None = None, **kw) -> Settings:
    """The detector's settings for one metric; min_change None: the default, 0 for the
    deterministic counts."""
    if min_change is None:
        min_change = 0.0 if metric in DETERMINISTIC else Settings().min_change
    return Settings(min_change=min_change, **kw)


def evaluate(series_list: list[Series], last: int = DEFAULT_LAST, since: str | None = None,
             since_time: str | None = None, **settings) -> list[Verdict]:
    """The check of each series (its latest `last` runs), in (benchmark, metric, machine) order;
    settings: Settings' fields. Without since, a series is gated when its latest change point is
    a regression. Needs the detector (changepoints.missing() says whether it is there)."""
    out = []
    for s in sorted(series_list, key=lambda s: (s.benchmark, s.metric, s.machine)):
        result = changepoints.analyse(window(s, last, since), settings_for(s.metric, **settings))
        out.append(Verdict(result=result, gated=_gated(result, since, since_time)))
    return out


def run(series_list: list[Series], args) -> int:
    why = changepoints.missing()
    if why:
        say(PROG, "error", why)
        return EXIT_ERROR
    try:
        pattern = re.compile(args.filter) if args.filter else None
    except re.error as e:
        say(PROG, "error", f"--filter {args.filter!r} is not a regular expression: {e}")
        return EXIT_USAGE
    metrics = set(args.metric or DEFAULT_METRICS)
    chosen = [s for s in series_list
              if s.metric in metrics
              and (pattern is None or pattern.search(s.benchmark))
              and (not args.machine or s.machine.startswith(args.machine))]
    since = args.since
    since_time = None
    gate = "in the latest segment"
    if since:
        times = [p.timestamp for s in series_list for p in s.points if _matches(p.commit, since)]
        if not times:
            say(PROG, "error", f"--since {since}: no run of that commit in the history")
            return EXIT_USAGE
        since_time = max(times)
        gate = f"since {since[:10]}"
    verdicts = evaluate(chosen, args.last, since, since_time, pvalue=args.pvalue, permutations=args.permutations,
                        min_points=args.min_points, min_change=args.min_change, seed=args.seed)
    try:
        if args.markdown:
            write_atomically(args.markdown, markdown(verdicts, gate))
        if args.junit:
            write_atomically(args.junit, junit(verdicts, gate))
    except OSError as e:
        say(PROG, "error", f"cannot write {e.filename}: {e.strerror}")
        return EXIT_ERROR
    sys.stdout.write(table(verdicts))
    print(summary_line(verdicts, gate))
    return EXIT_REGRESSION if any(v.gated for v in verdicts) else EXIT_OK
