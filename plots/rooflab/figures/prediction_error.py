"""How far measured times fall from the predictions: per family, the cumulative share of cases
against measured / predicted time, for the ECM prediction and for the roofline bound (model.json
rows' `ecm.time_s` and `predicted_s`), with the within-10% and within-20% bands."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.data.run import family_rows, load_run
from rooflab.figures import common as fc
from rooflab.figures.common import plt

PREDICTIONS = (("ecm_s", "ECM prediction"), ("predicted_s", "roofline bound"))


@dataclass
class ErrorResult:
    out_path: Path
    ratios: pd.DataFrame                              # name, family, prediction ("ecm_s" | "predicted_s"), ratio
    shares: pd.DataFrame                              # family ("all" too), prediction, cases, within_10, within_20
    omitted: list[str] = field(default_factory=list)  # rows not used and why


def shares_of(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per family and overall ("all"), per prediction: cases and the shares whose measured time
    lies within 10% / 20% of the prediction (|measured / predicted - 1| <= tol, as model.json's
    accuracy counts them)."""
    out = []
    for pred, g in ratios.groupby("prediction", sort=False):
        for fam, h in [("all", g)] + list(g.groupby("family", sort=True)):
            dev = (h.ratio - 1).abs()
            out.append({"family": fam, "prediction": pred, "cases": len(h),
                        "within_10": float((dev <= 0.10 + 1e-12).mean()), "within_20": float((dev <= 0.20 + 1e-12).mean())})
    return pd.DataFrame(out, columns=["family", "prediction", "cases", "within_10", "within_20"])


def plot(run_dir, out_path) -> ErrorResult:
    run = load_run(run_dir, required=("model",))
    ok, omitted = family_rows(run.model_df)  # failed, skipped and disturbed rows: listed, not used
    rows = []
    for col, _ in PREDICTIONS:
        have = ok[ok[col] > 0]
        rows += [{"name": r["name"], "family": r.family, "prediction": col, "ratio": r.median_s / r[col]}
                 for _, r in have.iterrows()]
    ratios = pd.DataFrame(rows, columns=["name", "family", "prediction", "ratio"])
    nopred = ok[~(ok.predicted_s > 0)]
    omitted += [f"{n}: no prediction in model.json (`rooflab model` had no machine.json)" for n in nopred.name]
    shares = shares_of(ratios)

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.6), sharey=True)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.80, bottom=0.12, wspace=0.06)
    colors = fc.series_colors(sorted(ratios.family.unique().tolist()))
    for ax, (col, label) in zip(axes, PREDICTIONS):
        g = ratios[ratios.prediction == col]
        ax.set_xscale("log")
        ax.axvspan(0.8, 1.2, color="0.88", lw=0, label="within 20%")
        ax.axvspan(0.9, 1.1, color="0.78", lw=0, label="within 10%")
        ax.axvline(1, color="k", lw=1)
        if g.empty:
            ax.text(0.5, 0.5, f"no row has a measurement and a{'n' if col == 'ecm_s' else ''} {label}",
                    transform=ax.transAxes, ha="center", va="center", fontsize=11, color="#a00000")
        for fam, h in g.groupby("family", sort=True):
            r = np.sort(h.ratio.to_numpy())
            sh = shares[(shares.prediction == col) & (shares.family == fam)].iloc[0]
            ax.step(r, np.arange(1, len(r) + 1) / len(r), where="post", color=colors[fam], lw=1.8,
                    label=f"{fam}: {len(r)} cases, {sh.within_20:.0%} within 20%")
        if not g.empty:
            lo, hi = min(g.ratio.min(), 0.5), max(g.ratio.max(), 2.0)
            ax.set_xlim(lo / 1.2, hi * 1.2)
            al = shares[(shares.prediction == col) & (shares.family == "all")].iloc[0]
            ax.set_title(f"{label}: {al.within_10:.0%} within 10%, {al.within_20:.0%} within 20% "
                         f"({int(al.cases)} cases)", fontsize=10)
        else:
            ax.set_xlim(0.1, 10)
            ax.set_title(label, fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("measured / predicted time  (< 1: faster than predicted)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("share of cases at or below")
    fig.suptitle(f"Prediction error distribution — {ok.shape[0]} measured rows", fontsize=12, y=0.985)
    shown = omitted[:3] + ([f"... and {len(omitted) - 3} more"] if len(omitted) > 3 else [])
    if shown:
        fig.text(0.5, 0.94, "not used:\n" + "\n".join(shown), ha="center", va="top", fontsize=8, color="#a00000")
    out = fc.save(fig, out_path)
    return ErrorResult(out_path=out, ratios=ratios, shares=shares, omitted=omitted)
