"""Sinkhorn column-rescaling breakdown (the shape of COFFEE's Fig. 12): median time of one
column pass (`part:col`) for typical -> c2r -> blocked -> microkernel (each ISA), per problem
(dtype, size, threads, fi), with the speed-up over `typical` on each bar, and the ratio of
typical's column pass to its row pass (COFFEE reports 15.6x for its strided column pass)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.registry import Registry, load_registry
from rooflab.data.run import load_run

FAMILY = "sinkhorn"
# Bars follow the family table's variant order (typical, c2r, blocked, microkernel: COFFEE's
# optimization steps) and the registry's ISA order (rooflab.data.registry).
STEP_COLORS = ("#9e9e9e", "#1f77b4", "#2ca02c", "#d62728")  # the table's first variants, in order
PROBLEM_PARAMS = ("fi",)  # define the problem (rows with different fi are not comparable)
COFFEE_ROW_COL = 15.6     # COFFEE: the strided column pass of `typical` vs its row pass


@dataclass
class BreakdownResult:
    out_path: Path
    has_data: bool
    # group (panel title), dtype, dims, threads, fi, label, variant, isa, name, median_s, speedup (NaN without typical)
    bars: pd.DataFrame
    # group, dtype, dims, threads, fi, row_s, col_s, ratio (= col / row)
    row_col: pd.DataFrame
    omitted: list[str] = field(default_factory=list)


def _part(params: dict) -> str:
    return params.get("part", "iter")  # the kernels' default when no part is given


def _problem(r) -> tuple:
    return (r["dtype"], fc.dims_label(r.dims), int(r.threads), r.params.get("fi", ""))


def _group_title(dtype, dims, threads, fi) -> str:
    return f"{dtype} {dims}, {threads} thread{'s' if threads > 1 else ''}" + (f", fi:{fi}" if fi else "")


def _bar_label(r) -> str:
    extra = [f"{k}:{v}" for k, v in r.params.items() if k != "part" and k not in PROBLEM_PARAMS]
    return fc.variant_label(r) + ("\n" + " ".join(extra) if extra else "")


def _order_key(r, order: list[str], isa_order: tuple[str, ...]) -> tuple:
    v = order.index(r.variant) if r.variant in order else len(order)
    isa = isa_order.index(r.isa) if r.isa in isa_order else (-1 if r.isa is None else len(isa_order))
    return (v, r.variant, isa, str(r.isa), _bar_label(r))


def breakdown_data(model: pd.DataFrame, registry: Registry | None) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The bars, the typical row/column ratios and the not-plotted rows, from model_frame();
    `registry` (load_registry()) orders the bars; None only for a model without sinkhorn rows."""
    ok, omitted = fc.family_rows(model, FAMILY)
    if not ok.empty and registry is None:
        raise ValueError("breakdown_data: sinkhorn rows need the registry to order them")
    order = registry.variant_order(FAMILY) if registry is not None else []
    isa_order = registry.isa_order if registry is not None else ()
    bars, ratios = [], []
    keys = ["_dtype", "_dims", "_threads", "_fi"]
    ok[keys] = pd.DataFrame([_problem(r) for _, r in ok.iterrows()], index=ok.index, columns=keys)
    for key, g in ok.groupby(keys, sort=True):
        col = g[g.params.apply(_part) == "col"]
        typ = col[col.variant == "typical"]
        base = float(typ.median_s.min()) if not typ.empty else math.nan
        for _, r in sorted(col.iterrows(), key=lambda x: _order_key(x[1], order, isa_order)):
            bars.append({"group": _group_title(*key), "dtype": key[0], "dims": key[1], "threads": key[2],
                         "fi": key[3], "label": _bar_label(r), "variant": r.variant, "isa": r.isa,
                         "name": r["name"], "median_s": r.median_s, "speedup": base / r.median_s})
        row_t = g[(g.variant == "typical") & (g.params.apply(_part) == "row")]
        if not typ.empty and not row_t.empty:
            rs, cs = float(row_t.median_s.min()), base
            ratios.append({"group": _group_title(*key), "dtype": key[0], "dims": key[1], "threads": key[2],
                           "fi": key[3], "row_s": rs, "col_s": cs, "ratio": cs / rs})
    bar_cols = ["group", "dtype", "dims", "threads", "fi", "label", "variant", "isa", "name", "median_s", "speedup"]
    ratio_cols = ["group", "dtype", "dims", "threads", "fi", "row_s", "col_s", "ratio"]
    return pd.DataFrame(bars, columns=bar_cols), pd.DataFrame(ratios, columns=ratio_cols), omitted


def plot(run_dir, out_path) -> BreakdownResult:
    run = load_run(run_dir, required=("model",))
    registry = load_registry(run_dir) if (run.model_df.family == FAMILY).any() else None
    bars, ratios, omitted = breakdown_data(run.model_df, registry)
    if bars.empty:
        has_family = (run.model_df.family == FAMILY).any()
        if has_family and not omitted:
            out = fc.note_figure(f"Sinkhorn column-rescaling breakdown — {run.run_dir.name}",
                                 ["no sinkhorn part:col rows in this run (run the breakdown cases, e.g. "
                                  "`rooflab bench --filter 'sinkhorn/.*/part:col'`)"], out_path)
        else:
            out = fc.no_family_figure(FAMILY, run.run_dir, out_path, omitted)
        return BreakdownResult(out, False, bars, ratios, omitted)

    groups = list(dict.fromkeys(bars.group))
    ncols = min(2, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    foot = 0.25 + 0.14 * min(len(omitted), 7)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.6 * ncols + 0.6, 4.6 * nrows + foot + 0.6), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.75 / (4.6 * nrows + foot + 0.6),
                        bottom=(foot + 0.7) / (4.6 * nrows + foot + 0.6), hspace=0.75, wspace=0.22)
    colors = dict(zip(registry.variant_order(FAMILY), STEP_COLORS))
    for ax, grp in zip(axes.flat, groups):
        g = bars[bars.group == grp]
        x = np.arange(len(g))
        ax.bar(x, g.median_s * 1e3, color=[colors.get(v, "#8c564b") for v in g.variant], edgecolor="k", lw=0.5)
        ax.set_yscale("log")
        ymax = g.median_s.max() * 1e3
        ax.set_ylim(g.median_s.min() * 1e3 / 2.5, ymax * 6)
        for xi, (_, b) in zip(x, g.iterrows()):
            txt = f"{b.median_s * 1e3:.3g} ms"
            if np.isfinite(b.speedup):
                txt += f"\n{b.speedup:.1f}x"
            ax.text(xi, b.median_s * 1e3 * 1.12, txt, ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x)
        ax.set_xticklabels(g.label, fontsize=8, rotation=20, ha="right")
        ax.set_ylabel("column pass, median time (ms, log)", fontsize=9)
        rc = ratios[ratios.group == grp]
        sub = (f"typical col/row = {rc.ratio.iloc[0]:.1f}x (COFFEE: {COFFEE_ROW_COL}x)" if not rc.empty
               else "typical row pass not in this run: no col/row ratio")
        if g.speedup.isna().all():
            sub += "; no typical col row: no speed-ups"
        ax.set_title(f"{grp}\n{sub}", fontsize=9.5)
        ax.grid(True, axis="y", which="major", alpha=0.3)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(f"Sinkhorn column rescaling: typical -> c2r -> blocked -> microkernel "
                 f"(speed-up over typical) — {run.run_dir.name}", fontsize=11)
    fc.omitted_footer(fig, omitted)
    out = fc.save(fig, out_path)
    return BreakdownResult(out, True, bars, ratios, omitted)
