"""Shared pieces of the figures: headless backend, colours and styles, labels, saving, the
note figure drawn instead of empty axes."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the scripts only write files; never need a display
import matplotlib.pyplot as plt  # noqa: E402

from rooflab.data.jsonfile import atomic_path  # noqa: E402
from rooflab.data.run import family_rows  # noqa: E402,F401  (re-exported: the figures call fc.family_rows)


DPI = 110
LEVEL_COLORS = {"L1": "#1b9e77", "L2": "#d95f02", "L3": "#7570b3", "DRAM": "#e7298a"}


def series_colors(labels: list[str]) -> dict[str, tuple]:
    """A stable, distinguishable colour per label (tab10, then tab20 beyond 10 labels)."""
    labels = sorted(set(labels))
    cmap = plt.get_cmap("tab10" if len(labels) <= 10 else "tab20")
    return {lab: cmap(i % cmap.N) for i, lab in enumerate(labels)}


def save(fig, out_path: str | Path) -> Path:
    """The figure as out_path (its suffix names the format), written atomically: an interrupted
    or failed save leaves no half image; an unwritable path is RooflabDataError."""
    out = Path(out_path)
    try:
        with atomic_path(out) as tmp:
            fig.savefig(tmp, dpi=DPI, format=out.suffix.lstrip(".") or "png")
    finally:
        plt.close(fig)
    return out


def note_figure(title: str, lines: list[str], out_path: str | Path) -> Path:
    """A figure that says why there is nothing to plot, rather than empty axes."""
    fig = plt.figure(figsize=(10, 3 + 0.3 * len(lines)))
    fig.text(0.03, 0.92, title, fontsize=14, weight="bold", va="top")
    fig.text(0.03, 0.80, "\n".join(lines), fontsize=11, va="top", family="monospace", wrap=True)
    return save(fig, out_path)


# ----------------------------------------------------------------------------- per-family data

def dims_label(dims) -> str:
    """[4096, 4096] -> "4096x4096", as in benchmark names."""
    return "x".join(str(int(d)) for d in dims)


def variant_label(row) -> str:
    """variant[/isa], as in benchmark names."""
    return row.variant + (f"/{row.isa}" if isinstance(row.isa, str) and row.isa else "")


def no_family_figure(family: str, run_dir, out_path, omitted: list[str]) -> Path:
    """The note figure drawn instead of axes when a run has no usable rows of a family."""
    lines = [f"no {family} benchmarks in this run" + (" that ran (all failed or skipped):" if omitted else "")]
    return note_figure(f"{family} — {Path(run_dir).name}", lines + omitted[:12], out_path)


def omitted_footer(fig, omitted: list[str], limit: int = 6) -> None:
    """Lists the rows a figure did not plot (failed / skipped) at its bottom left, in red."""
    if omitted:
        shown = omitted[:limit] + ([f"... and {len(omitted) - limit} more"] if len(omitted) > limit else [])
        fig.text(0.01, 0.005, "not plotted:\n" + "\n".join(shown), fontsize=7.5, va="bottom", color="#a00000")


def human_bytes(n: float) -> str:
    """2**20 -> "1 MiB"."""
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            v = n / div
            return f"{v:.0f} {unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def cluster(values: list[tuple[float, str]], ratio: float = 1.15) -> list[list[tuple[float, str]]]:
    """Groups ceilings whose values are within `ratio` of each other so their labels do not
    overprint (e.g. fma_f64 at 2 threads and add_f32 at 2 threads are both ~94 GFLOP/s)."""
    groups: list[list[tuple[float, str]]] = []
    for v, lab in sorted(values):
        if groups and v / groups[-1][0][0] < ratio:
            groups[-1].append((v, lab))
        else:
            groups.append([(v, lab)])
    return groups


# ----------------------------------------------------------------------------- GEMM styles

# Colours by variant (one family of colours per implementation across every GEMM figure); an
# implementation's other ISAs share the colour with another line style.
VARIANT_COLORS = {"sfc_ca": "#1f4fa0", "sfc_ca_libxsmm": "#5fa8e8", "blocked": "#2ca02c", "openblas": "#d62728",
                  "blis": "#ff7f0e", "onednn": "#9467bd", "libxsmm": "#8c564b"}
ISA_STYLES = {"avx512": "-", "avx2": "-", "scalar": ":"}


def impl_style(impl: str) -> tuple[str, str]:
    """(colour, line style) of a GEMM implementation; loop orders and unknown variants are grey."""
    variant, _, isa = impl.partition("/")
    return VARIANT_COLORS.get(variant, "#9a9a9a"), ISA_STYLES.get(isa, "-") if variant in VARIANT_COLORS else "--"
