"""Every file of a run directory beside the four core ones, with the loader that checks it."""
from __future__ import annotations

from pathlib import Path

from rooflab.data import gemm, knobs, mpi, pot, rtamm, steps
from rooflab.data.jsonfile import MalformedInput, RooflabDataError
from rooflab.data.run import counters_frames, model_frame, read_json

# file in the run directory -> loader(run_dir) that reads and checks it
LOADERS = {
    "steps.json": steps.load,
    "mpi_sweep.json": mpi.load,
    "witness.json": mpi.load_witness,
    mpi.SMPI_SWEEP_FILE: mpi.load_smpi_sweep,
    "pot_compare.json": pot.load_doc,
    "gemm_knobs.json": knobs.load,
    "rtamm.json": rtamm.load,
    f"{gemm.L2_COUNTERS_DIR}/counters.json":
        lambda d: counters_frames(read_json(Path(d) / gemm.L2_COUNTERS_DIR, "counters"),
                                  Path(d) / gemm.L2_COUNTERS_DIR / "counters.json"),
    f"{gemm.L2_COUNTERS_DIR}/model.json":
        lambda d: model_frame(read_json(Path(d) / gemm.L2_COUNTERS_DIR, "model"),
                              Path(d) / gemm.L2_COUNTERS_DIR / "model.json"),
}


def check_present(run_dir, found: dict[str, str] | None = None) -> None:
    """Reads every such file that is there: MalformedInput names the first unusable one, or,
    with `found`, each one's message is put there under its name instead. A file that is
    well-formed but holds nothing to show (an evaluation without shapes, a sweep whose runs
    all failed) passes: the part that shows it says so."""
    for name, load in LOADERS.items():
        if (Path(run_dir) / name).exists():
            try:
                load(run_dir)
            except MalformedInput as e:
                if found is None:
                    raise
                found[name] = str(e)
            except RooflabDataError:
                pass
