"""Shared pieces of the figure scripts: headless backend, command-line entry, colours, saving."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")  # the scripts only write files; never need a display
import matplotlib.pyplot as plt  # noqa: E402

from rooflab_data import RooflabDataError  # noqa: E402

DPI = 110
LEVEL_COLORS = {"L1": "#1b9e77", "L2": "#d95f02", "L3": "#7570b3", "DRAM": "#e7298a"}


def series_colors(labels: list[str]) -> dict[str, tuple]:
    """A stable, distinguishable colour per label (tab10, then tab20 beyond 10 labels)."""
    labels = sorted(set(labels))
    cmap = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20")
    return {lab: cmap(i % cmap.N) for i, lab in enumerate(labels)}


def save(fig, out_path: str | Path) -> Path:
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return out


def note_figure(title: str, lines: list[str], out_path: str | Path) -> Path:
    """A figure that says why there is nothing to plot, rather than empty axes."""
    fig = plt.figure(figsize=(10, 3 + 0.3 * len(lines)))
    fig.text(0.03, 0.92, title, fontsize=14, weight="bold", va="top")
    fig.text(0.03, 0.80, "\n".join(lines), fontsize=11, va="top", family="monospace", wrap=True)
    return save(fig, out_path)


def main(description: str, plot: Callable, argv: list[str] | None = None) -> int:
    """`python3 plots/<fig>.py --run DIR --out FILE.png`: exit 0 and print the PNG path, or
    exit 2 with the reason on stderr."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--run", required=True, help="run directory (holds machine.json, model.json, ...)")
    ap.add_argument("--out", required=True, help="PNG file to write")
    args = ap.parse_args(argv)
    try:
        plot(args.run, args.out)
    except RooflabDataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


# ----------------------------------------------------------------------------- per-family data

def dims_label(dims) -> str:
    """[4096, 4096] -> "4096x4096", as in benchmark names."""
    return "x".join(str(int(d)) for d in dims)


def variant_label(row) -> str:
    """variant[/isa], as in benchmark names."""
    return row.variant + (f"/{row.isa}" if isinstance(row.isa, str) and row.isa else "")


def family_rows(model, family: str):
    """(ok rows, not-plotted lines) of one family from model_frame(): failed and skipped rows
    are never plotted, only listed with their status and message."""
    fam = model[model.family == family]
    omitted = [f"{r['name']}: {r.status}" + (f" ({r.message})" if r.message else "")
               for _, r in fam.iterrows() if r.status != "ok"]
    return fam[fam.status == "ok"].copy(), omitted


def no_family_figure(family: str, run_dir, out_path, omitted: list[str]) -> Path:
    """The note figure drawn instead of axes when a run has no usable rows of a family."""
    lines = [f"no {family} benchmarks in this run" + (" that ran (all failed or skipped):" if omitted else "")]
    return note_figure(f"{family} — {Path(run_dir).name}", lines + omitted[:12], out_path)


def omitted_footer(fig, omitted: list[str], limit: int = 6) -> None:
    """Lists the rows a figure did not plot (failed / skipped) at its bottom left, in red."""
    if omitted:
        shown = omitted[:limit] + ([f"... and {len(omitted) - limit} more"] if len(omitted) > limit else [])
        fig.text(0.01, 0.005, "not plotted:\n" + "\n".join(shown), fontsize=7.5, va="bottom", color="#a00000")
