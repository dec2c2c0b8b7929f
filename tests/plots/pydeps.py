"""Skip (exit 77, CTest's SKIP_RETURN_CODE) when this Python lacks the plots' packages, so a
machine without them reports the tests as skipped with the reason rather than failed."""
from __future__ import annotations

import importlib.util
import os
import sys

NEEDED = ("numpy", "pandas", "matplotlib", "pytest")
# A suite's own optional modules (comma-separated), set by tests/plots.cmake: without them the
# suite is skipped rather than reported passed with every test skipped inside.
EXTRA_ENV = "ROOFLAB_PYTEST_NEEDS"


def require_or_skip() -> None:
    extra = [m for m in os.environ.get(EXTRA_ENV, "").split(",") if m]
    absent = [m for m in (*NEEDED, *extra) if importlib.util.find_spec(m) is None]
    if absent:
        print(f"skipped: {sys.executable} cannot import {', '.join(absent)} "
              f"(create .venv from plots/requirements.txt or set -DROOFLAB_PYTHON=...)")
        sys.exit(77)
