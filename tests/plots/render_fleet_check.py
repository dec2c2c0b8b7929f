"""CTest check (not collected by pytest): the fleet report (`rooflab report --fleet`) of the
fixture fleet (fleet_fixture.py: three Zen 3 siblings, one 20% slower in DRAM, and a Zen 5)
screenshot in headless Chromium as render_check.py does the run report: not blank, no sideways
scrolling in a 1280-pixel window, and the outlier visible on the page. Exit 77 = skipped."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from fleet_fixture import make_fleet
from pydeps import require_or_skip
from render_check import REPO, fits_laptop, shot


def main() -> int:
    require_or_skip()
    with tempfile.TemporaryDirectory() as tmp:
        fleet = make_fleet(Path(tmp) / "fleet")
        subprocess.run([sys.executable, str(REPO / "plots" / "report.py"), "--fleet", str(fleet)], check=True,
                       stdout=subprocess.DEVNULL)
        index = fleet / "report" / "index.html"
        if "zen3-slow: DRAM read bandwidth" not in index.read_text():
            print("the fleet page does not name the outlier zen3-slow")
            return 1
        if (rc := shot(index, Path(tmp) / "fleet.png")) != 0:
            return rc
        return fits_laptop([index])


if __name__ == "__main__":
    sys.exit(main())
