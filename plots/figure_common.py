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
