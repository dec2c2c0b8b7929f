"""CTest check (not collected by pytest): build the report of the fixture run with four
families (run_families + the MPI sweep + RTAMM), and the report of run_small with --history (a
small synthetic store, trend_store.py), screenshot their index and trends pages with
scripts/render_report.sh (headless Chromium), check the pictures are not blank, and check that
no page scrolls sideways in a 1280-pixel-wide (laptop) window. Exit 77 = skipped (no Chromium).
ROOFLAB_RENDER_KEEP=DIR keeps the screenshots there, to look at."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pydeps import require_or_skip

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "plots"))
SCRIPT = str(REPO / "scripts" / "render_report.sh")
LAPTOP = 1280


def shot(page: Path, png: Path) -> int:
    """Screenshot of page (1400x2000) -> 0 when it is not (nearly) blank, 77 without Chromium."""
    p = subprocess.run([SCRIPT, str(page), str(png)])
    if p.returncode == 77:
        return 77
    if p.returncode != 0:
        print(f"render_report.sh failed with exit {p.returncode}")
        return 1
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[..., :3]
    h, w = img.shape[:2]
    ink = (img.min(axis=2) < 0.9).mean()  # share of pixels that are not (near) white
    dark = (img.max(axis=2) < 0.3).mean()  # text
    print(f"{page.name} -> {png.name}: {w}x{h}, non-white {ink:.1%}, dark {dark:.2%}")
    if keep := os.environ.get("ROOFLAB_RENDER_KEEP"):
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / png.name)
    if (w, h) != (1400, 2000):
        print("unexpected screenshot size")
        return 1
    if ink < 0.03 or dark < 0.002:
        print(f"{png.name} is (nearly) blank: {page.name} did not render")
        return 1
    return 0


def sideways(pages: list[Path]) -> list[str] | None:
    """The pages wider than a laptop window (None when the probe failed)."""
    wide = []
    for page in pages:
        p = subprocess.run([SCRIPT, "--overflow", str(page), str(LAPTOP)], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr)
            return None
        scroll, window = map(int, p.stdout.split())
        print(f"{page.name}: page width {scroll} in a {window}-pixel window")
        if scroll > window:
            wide.append(page.name)
    return wide


def fits_laptop(pages: list[Path]) -> int:
    """0 when no page scrolls sideways in a laptop window, else 1 (said on stdout)."""
    wide = sideways(pages)
    if wide is None:
        return 1
    if wide:
        print(f"these pages scroll sideways on a {LAPTOP}-pixel-wide screen: {', '.join(wide)}")
        return 1
    return 0


def trends_report(tmp: Path) -> Path:
    """run_small's report with --history: a store of its benchmarks on two machines."""
    from trend_store import RUN, fill
    db = tmp / "history.sqlite"
    fill(str(db))
    out = tmp / "trends_report"
    subprocess.run([sys.executable, str(REPO / "plots" / "report.py"), str(RUN), "--out", str(out), "--history",
                    str(db)], check=True, stdout=subprocess.DEVNULL)
    return out


def main() -> int:
    require_or_skip()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        shutil.copytree(REPO / "tests" / "fixtures" / "run_families", run)
        shutil.copy(REPO / "tests" / "fixtures" / "mpi_run" / "mpi_sweep.json", run)
        shutil.copy(REPO / "tests" / "fixtures" / "rtamm" / "run" / "rtamm.json", run)
        out = Path(tmp) / "report"
        subprocess.run([sys.executable, str(REPO / "plots" / "report.py"), str(run), "--out", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        if (rc := shot(out / "index.html", Path(tmp) / "report.png")) != 0:
            return rc
        pages = sorted(out.glob("*.html"))
        if len(pages) != 6:  # index, details and the four families with data
            print(f"expected 6 pages, got {[p.name for p in pages]}")
            return 1
        trends = trends_report(Path(tmp))
        if (rc := shot(trends / "trends.html", Path(tmp) / "trends.png")) != 0:
            return rc
        tpages = sorted(trends.glob("*.html"))
        if "trends.html" not in [p.name for p in tpages]:
            print(f"no trends.html with --history: {[p.name for p in tpages]}")
            return 1
        return fits_laptop(pages + tpages)


if __name__ == "__main__":
    sys.exit(main())
