"""CTest check (not collected by pytest): build the fixture report, screenshot it with
scripts/render_report.sh (headless Chromium) and check the picture is not blank.
Exit 77 = skipped (no Chromium)."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from pydeps import require_or_skip

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    require_or_skip()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report"
        subprocess.run([sys.executable, str(REPO / "plots" / "report.py"), "--run",
                        str(REPO / "tests" / "fixtures" / "run_small"), "--out", str(out)], check=True)
        png = Path(tmp) / "report.png"
        p = subprocess.run([str(REPO / "scripts" / "render_report.sh"), str(out / "index.html"), str(png)])
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
