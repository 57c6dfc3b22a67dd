"""``mypy --strict`` on ``spf`` (``[tool.mypy]`` in pyproject.toml) passes.

A test of the suite rather than a step before it: ``make test`` ran mypy (about a minute of
one core on a fresh clone, with no ``.mypy_cache``) before pytest started, while the other
core had only the collection's bytecode to write and then idled. As the suite's longest test
(marked ``slow``, so it starts first) it shares the cores with the others.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# a cold mypy took 628 s on the 2-core machine at load 20 (64 s CPU): past pytest-timeout's 300 s
@pytest.mark.timeout(1800)
@pytest.mark.slow
def test_spf_passes_mypy_strict() -> None:
    mypy = [sys.executable, "-m", "mypy", "spf"]
    done = subprocess.run(mypy, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, f"mypy --strict on spf failed:\n{done.stdout}{done.stderr}"
    assert "Success: no issues found" in done.stdout, done.stdout
