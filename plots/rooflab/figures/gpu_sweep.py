"""Tile-parameter sweep of the MAP-UOT GPU kernels (MAP-UOT Fig. 8): time of part 2 over
tx x ny (ty = 2 as in the paper, else the ty swept most) and of part 4 over rtx x rny, from the
sinkhorn_cuda/mapuot part:p2 / part:p4 rows of model.json (scripts/gpu_sweep.sh runs them).
The fastest tile of each part is outlined."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rooflab.figures import common as fc
from rooflab.figures.common import plt
from rooflab.data.run import RooflabDataError, load_run


@dataclass
class SweepResult:
    out_path: Path
    grids: dict[str, pd.DataFrame]          # "p2" / "p4" -> ms, index rows per thread, columns threads
    best: dict[str, dict]                   # "p2" / "p4" -> {"tx": .., "ny": .., "ms": ..} (p4: rtx / rny)
    omitted: list[str] = field(default_factory=list)


def sweep_grids(model: pd.DataFrame) -> tuple[dict, dict, str]:
    ok, _ = fc.family_rows(model, "sinkhorn_cuda")
    ok = ok[ok.variant == "mapuot"]
    grids, best, sizes = {}, {}, set()
    for part, xk, yk in (("p2", "tx", "ny"), ("p4", "rtx", "rny")):
        rows = ok[[p.get("part") == part for p in ok.params]]
        if rows.empty:
            continue
        df = pd.DataFrame({xk: [int(p[xk]) for p in rows.params], yk: [int(p[yk]) for p in rows.params],
                           "ty": [int(p.get("ty", 2)) for p in rows.params], "ms": rows.median_s * 1e3,
                           "dims": [fc.dims_label(d) for d in rows.dims], "dtype": rows.dtype.tolist()})
        # One problem per figure: the most swept size and dtype; part 2 at ty = 2 when swept.
        key = df.groupby(["dims", "dtype"]).size().idxmax()
        df = df[(df.dims == key[0]) & (df.dtype == key[1])]
        sizes.add(f"{key[1]} {key[0]}")
        if part == "p2":
            df = df[df.ty == (2 if (df.ty == 2).any() else df.ty.mode().iloc[0])]
        grid = df.pivot_table(index=yk, columns=xk, values="ms", aggfunc="min").sort_index().sort_index(axis=1)
        grids[part] = grid
        b = df.loc[df.ms.idxmin()]
        best[part] = {xk: int(b[xk]), yk: int(b[yk]), "ms": float(b.ms)}
        if part == "p2":
            best[part]["ty"] = int(b.ty)
    return grids, best, ", ".join(sorted(sizes))


def plot(run_dir, out_path) -> SweepResult:
    run = load_run(run_dir, required=("model",))
    grids, best, size = sweep_grids(run.model_df)
    if not grids:
        raise RooflabDataError(f"{run.run_dir / 'model.json'}: no sinkhorn_cuda/mapuot part:p2 or part:p4 rows; "
                               f"run scripts/gpu_sweep.sh on a machine with a CUDA device")
    fig, axes = plt.subplots(1, len(grids), figsize=(6.5 * len(grids), 5.2), squeeze=False)
    for ax, (part, grid) in zip(axes[0], grids.items()):
        data = grid.to_numpy()
        im = ax.imshow(data, cmap="viridis_r", aspect="auto", origin="lower")
        ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
        ax.set_yticks(range(grid.shape[0]), [str(r) for r in grid.index])
        ax.set_xlabel(grid.columns.name + " (threads per row of the block)")
        ax.set_ylabel(grid.index.name + " (rows per thread)")
        for (i, j), v in np.ndenumerate(data):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if v > np.nanmean(data) else "black")
        b = best[part]
        xk, yk = grid.columns.name, grid.index.name
        bi, bj = list(grid.index).index(b[yk]), list(grid.columns).index(b[xk])
        ax.add_patch(plt.Rectangle((bj - 0.5, bi - 0.5), 1, 1, fill=False, ec="red", lw=2.5))
        title = "part 2 (row scale + column sums)" if part == "p2" else "part 4 (column scale + row sums)"
        extra = f", ty {b['ty']}" if part == "p2" else ""
        ax.set_title(f"{title}{extra}\nbest {xk} {b[xk]}, {yk} {b[yk]}: {b['ms']:.3g} ms", fontsize=10)
        fig.colorbar(im, ax=ax, label="median time (ms)")
    fig.suptitle(f"MAP-UOT GPU tile sweep — {size} (cf. MAP-UOT Fig. 8)", fontsize=12)
    fig.tight_layout()
    out = fc.save(fig, out_path)
    return SweepResult(out_path=out, grids=grids, best=best)
