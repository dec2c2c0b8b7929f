"""CTest check (not collected by pytest): build the report of the fixture run with four
families (run_families + the MPI sweep + RTAMM), screenshot its index with
scripts/render_report.sh (headless Chromium), check the picture is not blank, and check that no
page scrolls sideways in a 1280-pixel-wide (laptop) window. Exit 77 = skipped (no Chromium)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pydeps import require_or_skip

REPO = Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / "scripts" / "render_report.sh")
LAPTOP = 1280


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
        png = Path(tmp) / "report.png"
        p = subprocess.run([SCRIPT, str(out / "index.html"), str(png)])
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
        print(f"{png.name}: {w}x{h}, non-white {ink:.1%}, dark {dark:.2%}")
        if (w, h) != (1400, 2000):
            print("unexpected screenshot size")
            return 1
        if ink < 0.03 or dark < 0.002:
            print("screenshot is (nearly) blank: the report did not render")
            return 1
        pages = sorted(out.glob("*.html"))
        if len(pages) != 6:  # index, details and the four families with data
            print(f"expected 6 pages, got {[p.name for p in pages]}")
            return 1
        wide = []
        for page in pages:
            p = subprocess.run([SCRIPT, "--overflow", str(page), str(LAPTOP)], capture_output=True, text=True)
            if p.returncode != 0:
                print(p.stderr)
                return 1
            scroll, window = map(int, p.stdout.split())
            print(f"{page.name}: page width {scroll} in a {window}-pixel window")
            if scroll > window:
                wide.append(page.name)
        if wide:
            print(f"these pages scroll sideways on a {LAPTOP}-pixel-wide screen: {', '.join(wide)}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
