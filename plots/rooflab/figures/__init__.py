"""One module per figure, each with plot(run_dir, out_path) -> a result naming the PNG it wrote
(a figure whose input is absent raises RooflabDataError; one that has nothing to plot draws a
note figure saying why). The name of a figure is its module's and its PNG's (roofline ->
roofline.png). `python3 plots/figure.py NAME RUN [--out FILE]` draws one. trend.py is not
one of them: it draws a benchmark's series from the history store (the report's trends page)."""
from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

NAMES = ("roofline", "attained_vs_predicted", "prediction_error", "bandwidth", "cache_misses",
         "sinkhorn_breakdown", "sinkhorn_iteration", "pot_compare", "fw_performance",
         "gemm_performance", "gemm_whm", "gemm_l2_misses", "gemm_knobs", "rtamm",
         "gpu_roofline", "gpu_sweep", "mpi_scaling", "mpi_breakdown", "mpi_model", "mpi_witness")


def module(name: str) -> ModuleType:
    """The figure module of a name in NAMES (its first line says what it draws)."""
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")


def main(argv: list[str] | None = None) -> int:
    from rooflab import cli

    ap = cli.Parser("plots/figure.py", "NAME RUN [--out FILE.png] | --list",
                    description="Draw one figure of a rooflab run directory; prints the PNG's path.")
    ap.add_argument("name", nargs="?", metavar="NAME", help="the figure (--list names them)")
    ap.add_run_argument("run directory", required=False)
    ap.add_argument("--out", help="PNG file to write (default RUN/NAME.png)")
    ap.add_argument("--list", action="store_true", help="list the figures and what each draws")

    def body(a) -> int:
        if a.list:
            for n in NAMES:
                print(f"{n:22s} {(module(n).__doc__ or '').strip().splitlines()[0]}")
            return 0
        if not a.name:
            raise cli.UsageError("the figure's NAME is missing (--list names them)")
        if a.name not in NAMES:
            raise cli.UsageError(f"unknown figure {a.name!r} (one of {', '.join(NAMES)})")
        if not a.run:
            raise cli.UsageError("the run directory is missing")
        out = Path(a.out) if a.out else Path(a.run) / f"{a.name}.png"
        if out.suffix.lower() != ".png":
            raise cli.UsageError(f"--out {out}: the figures are PNG files (end it in .png)")
        module(a.name).plot(a.run, out)
        print(out)
        return 0

    return cli.run(ap, body, argv)
