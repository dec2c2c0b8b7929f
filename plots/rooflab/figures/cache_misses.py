"""L1 and last-level cache misses per benchmark (counts per timed run and miss rates), one
row of panels per counter back end, from counters.json. Back ends that were unavailable are
listed with their reason; with none available the figure says so instead of drawing axes.
Failed and skipped rows are listed under the figure with their message, never drawn as bars;
a row simulated as another case (an AVX-512 case as its avx2 sibling under valgrind) is
labelled with the ISA that ran."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import load_run

# Which events of a back end add up to its L1 and last-level data misses (reads + writes).
# Back ends not listed here get only the miss-rate panel (from the documented `derived`).
MISS_EVENTS = {
    "cachegrind": {"L1": ("D1mr", "D1mw"), "LL": ("DLmr", "DLmw")},
    "papi": {"L1": ("PAPI_L1_DCM",), "LL": ("PAPI_L3_TCM",)},
    "perf": {"L1": ("L1-dcache-load-misses",), "LL": ("LLC-load-misses",)},
}
RATES = ("L1_miss_rate", "LL_miss_rate")
BAR_COLORS = {"L1": "#1b9e77", "LL": "#7570b3"}


@dataclass
class CacheMissResult:
    out_path: Path
    has_data: bool
    data: pd.DataFrame      # backend, name, label, L1_misses, LL_misses, L1_miss_rate, LL_miss_rate (NaN = not reported)
    unavailable: list[tuple[str, str]] = field(default_factory=list)  # (back end, reason)
    not_counted: list[str] = field(default_factory=list)  # "back end: name: status (message)" of failed/skipped rows


def label(name: str, simulated_as: str) -> str:
    """The bar label: the case, and for a substituted simulation the ISA that actually ran."""
    if not simulated_as:
        return name
    ran = [p for p in simulated_as.split("/") if p in ("scalar", "avx2", "avx512")]
    return f"{name} (simulated as {ran[0] if ran else simulated_as})"


def _table(rows: pd.DataFrame) -> pd.DataFrame:
    """The ok rows only: failed / skipped rows have no numbers to draw."""
    out = []
    for _, r in rows[rows.status == "ok"].iterrows():
        rec = {"backend": r.backend, "name": r["name"], "label": label(r["name"], r.simulated_as)}
        events = MISS_EVENTS.get(r.backend, {})
        for lv in ("L1", "LL"):
            cols = [("events", e) for e in events.get(lv, ())]
            have = [c for c in cols if c in rows.columns and pd.notna(r[c])]
            rec[f"{lv}_misses"] = float(sum(r[c] for c in have)) if cols and len(have) == len(cols) else np.nan
        for k in RATES:
            rec[k] = r[("derived", k)] if ("derived", k) in rows.columns else np.nan
        out.append(rec)
    return pd.DataFrame(out, columns=["backend", "name", "label", "L1_misses", "LL_misses", *RATES])


def _bars(ax, names: list[str], values: dict[str, np.ndarray], xlabel: str, log: bool):
    y = np.arange(len(names))
    h = 0.38
    for i, (lv, vals) in enumerate(values.items()):
        pos = y + (i - 0.5) * h
        ax.barh(pos, np.where(np.isfinite(vals), vals, 0), height=h, color=BAR_COLORS[lv], label=lv)
        for p, v in zip(pos, vals):
            # Every bar carries its value: a measured zero is a real value a log axis cannot
            # show, and small rates vanish beside large ones.
            if not np.isfinite(v) or (log and v == 0):
                ax.text(0.005, p, f"{lv}: {'n/a' if not np.isfinite(v) else '0'}",
                        transform=ax.get_yaxis_transform(), va="center", fontsize=7.5, color=BAR_COLORS[lv])
            else:
                ax.text(v, p, f" {v:.3g}", va="center", fontsize=7, color="0.2")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    ax.margins(x=0.12)
    ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False)


def plot(run_dir, out_path) -> CacheMissResult:
    run = load_run(run_dir, required=("counters",))
    backends, rows = run.counters_df["backends"], run.counters_df["rows"]
    unavailable = [(b["name"], b.reason) for _, b in backends.iterrows() if not b.available]
    data = _table(rows)
    not_counted = [f"{r.backend}: {r['name']}: {r.status} ({r.message})" for _, r in rows[rows.status != "ok"].iterrows()]
    used = [b for b in backends.name[backends.available] if (data.backend == b).any()]
    if not used:
        lines = [f"{n}: {reason or 'no reason given'}" for n, reason in unavailable]
        lines += [f"{n}: available but recorded no counted rows" for n in backends.name[backends.available]]
        lines += [f"not counted: {x}" for x in not_counted]
        out = fc.note_figure(f"Cache misses — no counter data in {run.run_dir.name}/counters.json",
                             lines or ["counters.json lists no back ends"], out_path)
        return CacheMissResult(out_path=out, has_data=False, data=data, unavailable=unavailable,
                               not_counted=not_counted)

    footer = len(unavailable) + (len(not_counted) + 1 if not_counted else 0)
    heights = [max(2.0, 0.42 * (data.backend == b).sum() + 1.2) for b in used]
    total = sum(heights) + 1.4 + 0.18 * footer
    fig, axes = plt.subplots(len(used), 2, figsize=(13, total), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    fig.subplots_adjust(left=0.30, right=0.98, top=1 - 0.75 / total,
                        bottom=(0.35 + 0.18 * footer + (0.18 if unavailable else 0)) / total, wspace=0.08, hspace=0.5)
    for (ax_n, ax_r), b in zip(axes, used):
        d = data[data.backend == b]
        names = d.label.tolist()
        counts = {lv: d[f"{lv}_misses"].to_numpy(float) for lv in ("L1", "LL")}
        if all(np.isnan(v).all() for v in counts.values()):
            ax_n.text(0.5, 0.5, f"no L1/LL miss events known for back end {b}", ha="center", va="center",
                      transform=ax_n.transAxes, fontsize=9)
            ax_n.set_yticks(range(len(names)))
            ax_n.set_yticklabels(names, fontsize=8)
        else:
            _bars(ax_n, names, counts, "misses per timed run (log)", log=True)
        _bars(ax_r, names, {lv: d[f"{lv}_miss_rate"].to_numpy(float) for lv in ("L1", "LL")},
              "miss rate (misses / data accesses)", log=False)
        ax_r.set_yticklabels([])
        ax_n.set_title(f"back end: {b} — miss counts", fontsize=10, loc="left")
        ax_r.set_title(f"back end: {b} — miss rates", fontsize=10, loc="left")
    fig.suptitle(f"Cache misses per benchmark — {run.run_dir.name}", fontsize=12)
    foot = []
    if unavailable:
        foot += ["unavailable back ends (no data, not zeros):"] + [f"  {n}: {r}" for n, r in unavailable]
    if not_counted:
        foot += ["not counted (failed or skipped; no bars, not zeros):"] + [f"  {x}" for x in not_counted]
    if foot:
        fig.text(0.01, 0.01, "\n".join(x if len(x) <= 190 else x[:187] + "..." for x in foot),
                 fontsize=8, va="bottom", color="#a00000")
    out = fc.save(fig, out_path)
    return CacheMissResult(out_path=out, has_data=True, data=data, unavailable=unavailable, not_counted=not_counted)
