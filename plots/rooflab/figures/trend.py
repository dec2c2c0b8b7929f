"""One benchmark's trend over the results history (the report's trends page; it draws from a
store's series, not from a run directory, so it is not one of NAMES): the median time per
machine, one axes each (times of different CPUs do not compare); the roofline efficiency of
every machine in one axes (attained / predicted with each run's own ceilings: comparable across
CPUs, so a mixed runner pool reads as one trend); cachegrind's simulated counts per machine,
relative to the first run shown, where the store has them. The x axis is the store's run order
(run time), shared by every panel; change points of `rooflab history check` are dashed lines
between the last run before and the first run after, red for a regression, green for an
improvement, with their size. Runs marked disturbed are hollow (the check leaves them out)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.history.changepoints import Change
from rooflab.history.series import Series

PER_ROW = 3  # per-machine panels side by side; more machines wrap to a new row
COUNTERS = {"instructions": "instructions", "d1_misses": "D1 misses", "ll_misses": "LL misses"}
COUNTER_STYLES = {"instructions": "-", "d1_misses": "--", "ll_misses": ":"}
KIND_COLORS = {True: "#c00000", False: "#1a8a1a"}  # regression, improvement
_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))


@dataclass
class Line:
    """One series as drawn, with the change points the check found in it (none when the
    detector is missing)."""
    series: Series
    changes: list[Change] = field(default_factory=list)


def _unit(values: list[float]) -> tuple[str, float]:
    v = sorted(values)[len(values) // 2] if values else 1.0
    return next(((u, f) for u, f in _UNITS if abs(v) >= f), _UNITS[-1])


def _draw(ax, line: Line, x_of: dict[str, int], color, scale: float = 1.0, label: str | None = None,
          style: str = "-", size_text: bool = True) -> None:
    pts = line.series.points
    xs = [x_of[p.run_id] for p in pts]
    ys = [p.value / scale for p in pts]
    ax.plot(xs, ys, style, color=color, lw=1.1, label=label, zorder=2)
    clean = [(x, y) for x, y, p in zip(xs, ys, pts) if not p.disturbed]
    bad = [(x, y) for x, y, p in zip(xs, ys, pts) if p.disturbed]
    if clean:
        ax.plot(*zip(*clean), "o", ms=2.6, color=color, zorder=3)
    if bad:
        ax.plot(*zip(*bad), "o", ms=4, mfc="white", mec=color, zorder=3)
    for c in line.changes:
        x = (x_of[c.before.run_id] + x_of[c.after.run_id]) / 2
        ax.axvline(x, color=KIND_COLORS[c.regression], ls="--", lw=1.2, zorder=1)
        if size_text:
            ax.text(x, 0.97, f" {(c.ratio - 1) * 100:+.1f}%", transform=ax.get_xaxis_transform(), va="top",
                    fontsize=8, color=KIND_COLORS[c.regression], weight="bold")


def _span(ax, values: list[float], frac: float = 0.03) -> None:
    """At least +-frac of the median on the y axis: noise of a few tenths of a percent is not
    blown up to look like the steps the dashed lines mark."""
    if not values:
        return
    mid = sorted(values)[len(values) // 2]
    lo, hi = ax.get_ylim()
    half = abs(mid) * frac
    ax.set_ylim(min(lo, mid - half), max(hi, mid + half))


def _ticks(ax, x_of: dict[str, int], tick_labels: dict[int, str], used: list[int]) -> None:
    if not used:
        return
    lo, hi = min(used), max(used)
    xs = sorted(x for x in set(used))
    step = max(1, math.ceil(len(xs) / 6))
    ticks = xs[::step]
    ax.set_xticks(ticks)
    ax.set_xticklabels([tick_labels.get(x, "") for x in ticks], fontsize=7.5)
    pad = max(1.0, 0.02 * (hi - lo))
    ax.set_xlim(lo - pad, hi + pad)
    ax.grid(True, alpha=0.3)


def plot(benchmark: str, time: list[Line], efficiency: list[Line], counters: list[Line],
         x_of: dict[str, int], tick_labels: dict[int, str], machine_labels: dict[str, str], out_path) -> Path:
    """time / efficiency / counters: the benchmark's series of those metrics (any machines);
    x_of: a run id -> its position in the store's run order; tick_labels: position -> text (the
    commit); machine_labels: fingerprint -> the legend's text."""
    machines = sorted({ln.series.machine for ln in time + efficiency + counters})
    colors = fc.series_colors(machines)
    time_m = sorted({ln.series.machine for ln in time})
    count_m = sorted({ln.series.machine for ln in counters})
    ncols = max(1, min(PER_ROW, max(len(time_m), len(count_m), 1)))
    rows: list[tuple[str, list[str]]] = []  # (kind, machines of that row)
    rows += [("time", time_m[i:i + ncols]) for i in range(0, len(time_m), ncols)]
    if efficiency:
        rows.append(("efficiency", []))
    rows += [("counters", count_m[i:i + ncols]) for i in range(0, len(count_m), ncols)]
    if not rows:
        return fc.note_figure(benchmark, ["no series of this benchmark in the history"], out_path)
    height = 0.5 + 2.3 * len(rows)
    fig = plt.figure(figsize=(11.5, height))
    # The page's caption names the benchmark; the image's own title too, for the PNG alone.
    gs = fig.add_gridspec(len(rows), ncols, hspace=0.6, wspace=0.22, left=0.07, right=0.98,
                          top=1 - 0.5 / height, bottom=0.45 / height)
    short = lambda m: machine_labels.get(m, m[:12])
    for r, (kind, ms) in enumerate(rows):
        if kind == "efficiency":
            ax = fig.add_subplot(gs[r, :])
            for ln in sorted(efficiency, key=lambda ln: ln.series.machine):
                _draw(ax, ln, x_of, colors[ln.series.machine], label=short(ln.series.machine),
                      size_text=len(efficiency) == 1)
            ax.set_title("roofline efficiency (attained / predicted), every machine" +
                         (" — change sizes: see the table" if len(efficiency) > 1 and
                          any(ln.changes for ln in efficiency) else ""), fontsize=9.5, loc="left")
            ax.legend(fontsize=7.5, loc="best", frameon=False, ncol=min(3, len(efficiency)))
            _span(ax, [p.value for ln in efficiency for p in ln.series.points])
            _ticks(ax, x_of, tick_labels, [x_of[p.run_id] for ln in efficiency for p in ln.series.points])
            ax.tick_params(axis="y", labelsize=7.5)
            continue
        for c, m in enumerate(ms):
            ax = fig.add_subplot(gs[r, c])
            if kind == "time":
                ln = next(ln for ln in time if ln.series.machine == m)
                unit, scale = _unit([p.value for p in ln.series.points])
                _draw(ax, ln, x_of, colors[m], scale)
                _span(ax, [p.value / scale for p in ln.series.points])
                ax.set_title(f"median time ({unit}) — {short(m)}", fontsize=9, loc="left")
                used = [x_of[p.run_id] for p in ln.series.points]
            else:
                mine = sorted((ln for ln in counters if ln.series.machine == m),
                              key=lambda ln: list(COUNTERS).index(ln.series.metric))
                used = []
                for ln in mine:
                    first = ln.series.points[0].value or 1.0
                    last = ln.series.points[-1].value
                    _draw(ax, ln, x_of, colors[m], first, style=COUNTER_STYLES[ln.series.metric],
                          label=f"{COUNTERS[ln.series.metric]} (latest {last:.4g})", size_text=len(mine) == 1)
                    used += [x_of[p.run_id] for p in ln.series.points]
                ax.set_title(f"cachegrind counts / first run's — {short(m)}", fontsize=9, loc="left")
                ax.legend(fontsize=7, loc="best", frameon=False)
                ax.ticklabel_format(axis="y", useOffset=False)
                _span(ax, [1.0])
            _ticks(ax, x_of, tick_labels, used)
            ax.tick_params(axis="y", labelsize=7.5)
    fig.suptitle(benchmark, fontsize=10, x=0.01, ha="left", y=1 - 0.08 / height, va="top")
    fig.text(0.99, 0.005, "x: runs in the store's order (commit); dashed: change points (red regression, "
             "green improvement); hollow: disturbed", fontsize=7, ha="right", va="bottom", color="0.35")
    return fc.save(fig, out_path)
