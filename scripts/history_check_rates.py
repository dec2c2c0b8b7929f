#!/usr/bin/env python3
"""Measures `rooflab history check` (plots/rooflab/history/check.py), for docs/history_check.md:
  --synthetic        detection rate and false alarms on seeded series with known steps, drifts
                     and single outliers, and how often flat series fail the gate (no timing)
  --real DIR         false alarms on real repeated runs of unchanged code: DIR/<i>/model.json
                     (scripts/history_repeat_bench.sh writes them)
  --timing           wall time of check.run on RUNS x BENCHMARKS synthetic series in memory, time
                     and efficiency each (run it under scripts/cpu_lock.sh time)
Prints Markdown tables."""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plots"))

from rooflab.history import changepoints, check, synth  # noqa: E402
from rooflab.history.series import Point, Series  # noqa: E402

N = 100          # runs per synthetic series
TOLERANCE = 3    # a change found this many runs from the true one still counts as found


def pairwise_alarm(v: np.ndarray, cv: float) -> list[int]:
    """What a pairwise gate sees: run i against run i-1, alarm beyond 3 sigma of their ratio."""
    r = v[1:] / v[:-1] - 1
    return [i + 1 for i in np.nonzero(np.abs(r) > 3 * np.sqrt(2) * cv)[0]]


def synthetic(trials: int) -> None:
    settings = changepoints.Settings()
    print(f"Settings: p-value {settings.pvalue}, {settings.permutations} permutations, "
          f"min {settings.min_points} runs a segment, min change {settings.min_change:.0%}; "
          f"{N} runs a series, {trials} series a cell; found = a change of the right direction "
          f"within {TOLERANCE} runs of the true one.\n")
    print("| injected | CV | found | extra change points a series | pairwise gate found |")
    print("|---|---|---|---|---|")
    seed = 0
    cases = [(f"step +{s:.0%}", dict(steps=((None, s),)), s) for s in (0.02, 0.05, 0.10, 0.20)]
    cases += [(f"drift +{s:.0%} over 40 runs", dict(drift=(None, None, s)), s) for s in (0.05, 0.10)]
    for label, kw, _ in cases:
        for cv in (0.01, 0.02, 0.03):
            found = extra = pw = 0
            for _ in range(trials):
                seed += 1
                rng = np.random.default_rng(seed)
                at = int(rng.integers(30, 71))
                if "steps" in kw:
                    v = synth.values(N, seed=seed, cv=cv, steps=((at, kw["steps"][0][1]),))
                    lo, hi = at - TOLERANCE, at + TOLERANCE
                else:
                    a = min(at, N - 45)
                    v = synth.values(N, seed=seed, cv=cv, drift=(a, a + 40, kw["drift"][2]))
                    lo, hi = a - TOLERANCE, a + 40 + TOLERANCE
                changes = changepoints.detect(v, settings)
                hit = [c for c in changes if lo <= c[0] <= hi and c[1] > 1]
                found += bool(hit)
                # A drift may be split into several steps: every change inside it is a true one.
                extra += len(changes) - (len(hit) if "drift" in kw else min(len(hit), 1))
                pw += any(lo <= i <= hi for i in pairwise_alarm(v, cv))
            print(f"| {label} | {cv:.0%} | {found / trials:.0%} ({found}/{trials}) | "
                  f"{extra / trials:.2f} | {pw / trials:.0%} |")
    print("\n| no change | CV | series with a false alarm | with one outlier run (x1.5 or x0.6) | pairwise gate alarmed (no outlier) |")
    print("|---|---|---|---|---|")
    for cv in (0.01, 0.02, 0.03):
        flat = out = pw = 0
        for _ in range(trials):
            seed += 1
            rng = np.random.default_rng(seed)
            v = synth.values(N, seed=seed, cv=cv)
            flat += bool(changepoints.detect(v, settings))
            pw += bool(pairwise_alarm(v, cv))
            o = ((int(rng.integers(0, N)), 1.5 if rng.random() < 0.5 else 0.6),)
            out += bool(changepoints.detect(synth.values(N, seed=seed, cv=cv, outliers=o), settings))
        print(f"| - | {cv:.0%} | {flat / trials:.0%} ({flat}/{trials}) | {out / trials:.0%} ({out}/{trials}) | {pw / trials:.0%} |")


def gate(trials: int, runs: int = 200, recent: int = 10) -> None:
    """How often the exit status says "regression" on flat series of the default window's length:
    without --since (the latest change point is a regression) and with --since the run `recent`
    runs before the newest (a pull request's base)."""
    p = argparse.ArgumentParser()
    check.add_arguments(p)
    print(f"\n| no change, {runs} runs | CV | exit 4 without --since | exit 4 with --since {recent} runs back |")
    print("|---|---|---|---|")
    for k, cv in enumerate((0.01, 0.02, 0.03)):
        plain = since = 0
        for t in range(trials):
            s = synth.series(synth.values(runs, seed=10_000 + 1000 * k + t, cv=cv))
            with contextlib.redirect_stdout(io.StringIO()):
                plain += check.run([s], p.parse_args([])) == 4
                since += check.run([s], p.parse_args(["--since", synth.commit_of(runs - 1 - recent)])) == 4
        print(f"| - | {cv:.0%} | {plain / trials:.0%} ({plain}/{trials}) | {since / trials:.0%} ({since}/{trials}) |")


def real_series(root: Path) -> list[Series]:
    """time and efficiency series of every ok row of root/<i>/model.json, runs in numeric order."""
    from rooflab.data.run import model_frame, read_json
    runs = sorted((d for d in root.iterdir() if (d / "model.json").is_file()), key=lambda d: int(d.name))
    series: dict[tuple[str, str], Series] = {}
    for i, d in enumerate(runs):
        df = model_frame(read_json(d, "model"), d / "model.json")
        for r in df[df.status == "ok"].itertuples():
            for metric, value in (("time", r.median_s), ("efficiency", r.efficiency)):
                s = series.setdefault((r.name, metric), Series(machine="this", benchmark=r.name, metric=metric))
                s.points.append(Point(run_id=d.name, commit=f"{i:040x}", timestamp=f"{i:06d}",
                                      value=float(value), disturbed=bool(r.disturbed)))
    return list(series.values())


def real(root: Path) -> None:
    series = real_series(root)
    runs = max(len(s.points) for s in series)
    disturbed = sum(p.disturbed for s in series for p in s.points)
    total = sum(len(s.points) for s in series)
    cvs = [np.std(v) / np.mean(v) for s in series if s.metric == "time"
           for v in [np.array([p.value for p in s.points if not p.disturbed])] if len(v) > 1]
    print(f"{len(series)} series ({len(series) // 2} benchmarks x time, efficiency), {runs} runs, "
          f"{disturbed} of {total} points marked disturbed; run-to-run CV of the undisturbed times: "
          f"median {np.median(cvs):.1%}, max {np.max(cvs):.1%}.\n")
    print("| disturbed runs | series checked | series with a change point | change points |")
    print("|---|---|---|---|")
    for label, ss in (("left out (the check's rule)", series),
                      ("counted as ordinary runs", [Series(s.machine, s.benchmark, s.metric,
                                                           [Point(p.run_id, p.commit, p.timestamp, p.value)
                                                            for p in s.points]) for s in series])):
        results = [changepoints.analyse(s) for s in ss]
        checked = [r for r in results if r.used >= 2 * changepoints.Settings().min_points]
        alarms = [r for r in checked if r.changes]
        print(f"| {label} | {len(checked)} | {len(alarms)} | {sum(len(r.changes) for r in checked)} |")
        for r in alarms:
            for c in r.changes:
                print(f"|  | {r.series.benchmark} {r.series.metric} | run {c.index} | {c.ratio - 1:+.1%}, p {c.pvalue:.3f} |")


def timing(runs: int, benchmarks: int, last: int, sample: int) -> None:
    k = min(sample or benchmarks, benchmarks)
    series = []
    for b in range(k):
        steps = ((runs * 2 // 3, 0.05),) if b % 10 == 0 else ()
        for metric in ("time", "efficiency"):
            v = synth.values(runs, seed=b * 2 + (metric == "time"), cv=0.02, steps=steps)
            series.append(synth.series(v, benchmark=f"family/variant/{b}", metric=metric))
    p = argparse.ArgumentParser()
    check.add_arguments(p)
    args = p.parse_args(["--last", str(last)])
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        check.run(series, args)
    dt = time.perf_counter() - t0
    per = dt / len(series)
    print(f"| {runs} runs x {benchmarks} benchmarks x 2 metrics, --last {last} | {len(series)} series "
          f"timed | {per * 1e3:.1f} ms a series | {per * benchmarks * 2:.1f} s for all "
          f"{benchmarks * 2} series{'' if k == benchmarks else ' (extrapolated)'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--real", type=Path, metavar="DIR")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--benchmarks", type=int, default=300)
    ap.add_argument("--last", type=int, nargs="+", default=[200, 0])
    ap.add_argument("--sample", type=int, default=0, help="time this many benchmarks, extrapolate")
    a = ap.parse_args()
    why = changepoints.missing()
    if why:
        print(f"history_check_rates.py: {why}", file=sys.stderr)
        return 1
    if a.synthetic:
        synthetic(a.trials)
        gate(a.trials)
    if a.real:
        real(a.real)
    if a.timing:
        for last in a.last:
            timing(a.runs, a.benchmarks, last, a.sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())
