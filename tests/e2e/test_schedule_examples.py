"""The scheduling example scripts (``examples/scheduled_blur.py``, ``scheduled_gemm.py``)
run: each builds, schedules, prints, compiles, runs and checks its kernels against numpy.

Each runs in a fresh interpreter in a temporary directory with its own kernel cache and
warnings as errors; a wrong result fails the script's own assertions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# fresh interpreters compiling 12 schedules: run first; vectorised schedules at spf's -O3
pytestmark = [pytest.mark.slow, pytest.mark.default_flags]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_script(name: str, tmp_path: Path) -> str:
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_scheduled_blur(tmp_path: Path) -> None:
    out = run_script("scheduled_blur.py", tmp_path)
    assert out.count("matches numpy") == 4
    assert 'comp.stmt("s0").compute_at("s1", "j0")' in out
    assert 'comp.stmt("s0").compute_at("s1", "i0")' in out  # the line-buffered strips
    assert 'comp.stmt("s0").inline()' in out
    assert "#pragma omp simd" in out  # the printed code of the vectorized variant


@pytest.mark.parametrize("name", ["scheduled_gemm.py"])
def test_scheduled_gemm(tmp_path: Path, name: str) -> None:
    out = run_script(name, tmp_path)
    assert out.count("matches numpy") == 8
    assert "for j1 [vector(8)]:" in out
    assert "j1 <= 7" in out  # the full vectors: a constant trip count
    assert 'comp.stmt("s0").cache_read("B", "k0", layout=' in out
    assert "B_pack_copy" in out
    assert "A_pack_copy" in out
