"""Shared fixtures for the plots/ tests: the fixture run, a mutable copy of it, PNG checks."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLOTS = REPO / "plots"
RUN_SMALL = REPO / "tests" / "fixtures" / "run_small"
# Sinkhorn rows of a real quick-profile run and Floyd-Warshall rows built from a real bench.json
# (plus one failed and one skipped row each), with that run's machine.json.
RUN_FAMILIES = REPO / "tests" / "fixtures" / "run_families"
sys.path.insert(0, str(PLOTS))
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def run_small() -> Path:
    return RUN_SMALL


@pytest.fixture
def run_copy(tmp_path) -> Path:
    """A writable copy of the fixture run, for tests that break or remove a file."""
    dst = tmp_path / "run"
    shutil.copytree(RUN_SMALL, dst)
    return dst


@pytest.fixture
def run_families() -> Path:
    return RUN_FAMILIES


@pytest.fixture
def families_copy(tmp_path) -> Path:
    dst = tmp_path / "run_families"
    shutil.copytree(RUN_FAMILIES, dst)
    return dst


def load(run: Path, name: str) -> dict:
    return json.loads((run / name).read_text())


def save(run: Path, name: str, doc: dict) -> None:
    (run / name).write_text(json.dumps(doc))


def assert_png(path: Path, min_bytes: int = 10_000) -> None:
    """A real PNG of plausible size with more than one colour in it."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 400 and height >= 200, (width, height)
    assert len(data) >= min_bytes, f"{path}: only {len(data)} bytes"
    import matplotlib.image as mpimg
    img = mpimg.imread(path)
    assert img[..., :3].std() > 0.01, f"{path} is a single flat colour"


def run_script(script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(PLOTS / script), *args], capture_output=True, text=True,
                          env=env, timeout=300)
