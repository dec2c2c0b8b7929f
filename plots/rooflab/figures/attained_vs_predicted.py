"""Predicted time vs measured median time per benchmark (log-log), with y = x and the
2x bands; points below the line ran faster than the model, above it slower."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import load_run


@dataclass
class AttainedResult:
    out_path: Path
    points: pd.DataFrame                              # name, family, predicted_s, median_s, disturbed
    omitted: list[str] = field(default_factory=list)  # failed/skipped/unpredicted rows and why


def plot(run_dir, out_path) -> AttainedResult:
    run = load_run(run_dir, required=("model",))
    model = run.model_df
    omitted = [f"{r['name']}: {r.status}" + (f" ({r.message})" if r.message else "")
               for _, r in model[model.status != "ok"].iterrows()]
    ok = model[model.status == "ok"]
    nopred = ok[~(ok.predicted_s > 0)]
    omitted += [f"{n}: no prediction in model.json (`rooflab model` had no machine.json)" for n in nopred.name]
    drawn = ok[ok.predicted_s > 0]
    points = drawn[["name", "family", "predicted_s", "median_s", "disturbed"]].reset_index(drop=True)

    fig, ax = plt.subplots(figsize=(10, 8))
    fig.subplots_adjust(left=0.10, right=0.97, top=0.84, bottom=0.10)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if points.empty:
        ax.text(0.5, 0.5, "no row has both a measurement and a prediction", transform=ax.transAxes,
                ha="center", va="center", fontsize=13, color="#a00000")
        lo, hi = 1e-6, 1.0
    else:
        vals = np.concatenate([points.predicted_s, points.median_s])
        lo, hi = vals.min() / 4, vals.max() * 4
    x = np.array([lo, hi])
    ax.fill_between(x, x / 2, x * 2, color="0.85", alpha=0.6, lw=0, label="within 2x of the model")
    ax.plot(x, x, color="k", lw=1.2, label="measured = predicted")
    ax.plot(x, 2 * x, color="0.45", lw=0.9, ls="--", label="2x slower / faster")
    ax.plot(x, x / 2, color="0.45", lw=0.9, ls="--")
    colors = fc.series_colors(points.family.tolist())
    for fam, g in points[~points.disturbed].groupby("family", sort=True):
        ax.scatter(g.predicted_s, g.median_s, s=46, color=colors[fam], edgecolors="k", lw=0.4, label=fam, zorder=3)
    # Measurements that stayed disturbed are shown, marked: hollow, in red, not a good number.
    bad = points[points.disturbed]
    if not bad.empty:
        ax.scatter(bad.predicted_s, bad.median_s, s=60, facecolors="none", edgecolors="#d00000", lw=1.3,
                   marker="X", label=f"disturbed measurement ({len(bad)}; not a good number)", zorder=4)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("predicted time (s)  [model.json predicted_s]")
    ax.set_ylabel("measured median time (s)  [model.json median_s]")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
    n_fail = int((model.status == "failed").sum())
    title = f"Measured vs predicted time — {len(points)} of {len(model)} rows plotted"
    if n_fail:
        title += f", {n_fail} failed"
    shown = omitted[:4] + ([f"... and {len(omitted) - 4} more"] if len(omitted) > 4 else [])
    fig.suptitle(title, fontsize=12, y=0.985)
    if shown:
        fig.text(0.5, 0.945, "not plotted:\n" + "\n".join(shown), ha="center", va="top",
                 fontsize=8, color="#a00000")
    out = fc.save(fig, out_path)
    return AttainedResult(out_path=out, points=points, omitted=omitted)
