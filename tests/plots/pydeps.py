"""Skip (exit 77, CTest's SKIP_RETURN_CODE) when this Python lacks the plots' packages, so a
machine without them reports the tests as skipped with the reason rather than failed."""
from __future__ import annotations

import importlib.util
import sys

NEEDED = ("numpy", "pandas", "matplotlib", "pytest")


def require_or_skip() -> None:
    absent = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if absent:
        print(f"skipped: {sys.executable} cannot import {', '.join(absent)} "
              f"(create .venv from plots/requirements.txt or set -DROOFLAB_PYTHON=...)")
        sys.exit(77)
