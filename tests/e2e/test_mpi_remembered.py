"""Remembered MPI compiles across processes (spf.runtime.warm for target "mpi",
spf.distributed.remembered for row-distributed kernels), on real ranks.

``tests/e2e/mpi_progs/check_remembered.py`` runs twice on a fresh cache directory: first on
every rank at once (the ranks write the same entries side by side), then in a new job whose
ranks make analysis, code generation and every compiler run raise, so its compiles of the same
computations come from the entries alone. Both jobs compare each kernel's result with
numpy/scipy. The pytest process itself never imports mpi4py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spf.mpi import run

ROOT = Path(__file__).resolve().parents[2]
PROG = Path(__file__).resolve().parent / "mpi_progs" / "check_remembered.py"

pytestmark = pytest.mark.requires_mpi


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SPF_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _job(mode: str, ranks: int, cache: Path) -> list[str]:
    done = run(PROG, ranks, [mode], timeout=300, env=_env(cache))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if line.startswith("rank ")]


def test_a_second_job_compiles_from_the_entries_without_codegen_or_mpicc(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _job("first", 2, cache)
    entries = sorted((cache / "warm").rglob("*.json"))
    # dscale, the two distributed executors and their inspectors (C kernels)
    assert len(entries) >= 5, entries
    again = _job("remembered", 2, cache)
    want = "dscale equal, CSR SpMV equal, COO SpMV equal"
    assert first == [f"rank {r}: first: {want}" for r in range(2)]
    assert again == [f"rank {r}: remembered: {want}" for r in range(2)]
    assert sorted((cache / "warm").rglob("*.json")) == entries  # nothing written again


def test_a_job_without_entries_is_refused_by_the_check(tmp_path: Path) -> None:
    """The second job's refusals are real: on an empty cache the same job fails."""
    done = run(PROG, 1, ["remembered"], timeout=300, env=_env(tmp_path / "empty"))
    assert done.returncode != 0
    assert "a remembered compile analysed, generated code or ran a compiler" in done.stderr
