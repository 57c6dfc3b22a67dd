"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from spf.mpi import MPITimeoutError, run
from spf.runtime import threads

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@pytest.fixture(params=[1, 2])
def omp_threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run at exactly ``n`` OpenMP threads (spf's busy-machine cap turned off)."""
    gomp = threads.openmp_library()
    assert gomp is not None
    before, adaptive = gomp.omp_get_max_threads(), threads.set_adaptive(False)
    gomp.omp_set_num_threads(int(request.param))
    try:
        yield int(request.param)
    finally:
        gomp.omp_set_num_threads(before)
        threads.set_adaptive(adaptive)


MPI_PROGS = Path(__file__).resolve().parent / "mpi_progs"
ROOT = Path(__file__).resolve().parents[2]
SUITESPARSE = ROOT.parent / "shared" / "data" / "suitesparse"  # as tests/conftest.py's
MPI_JOB_TIMEOUT = {  # seconds each program may take (a deadlock fails its tests, not the run)
    "check_protocol.py": 300.0,
    "check_distributed.py": 400.0,
    "check_formats.py": 400.0,
    "check_mpi.py": 240.0,
}


@dataclass(frozen=True)
class MpiChecks:
    """What one ``check_jobs.py`` job printed: every program's rank checks, in order."""

    returncode: int
    stdout: str
    stderr: str

    def exit(self, program: str) -> str | None:
        """The exit status ``check_jobs.py`` printed for ``program`` (``"0"``: every check
        passed on every rank), or None when the job ended before it."""
        found = re.search(rf"^job {re.escape(program)}: exit (.*)$", self.stdout, re.M)
        return None if found is None else found[1]

    def output(self, program: str) -> str:
        """The lines rank 0 printed for ``program`` (from the previous program's status line
        to its own); the whole output when the job ended before its status line."""
        end = re.search(rf"^job {re.escape(program)}: exit .*$", self.stdout, re.M)
        if end is None:
            return self.stdout
        before = list(re.finditer(r"^job \S+: exit .*$", self.stdout[: end.start()], re.M))
        return self.stdout[before[-1].end() if before else 0 : end.end()]

    def failure(self, program: str) -> str:
        """The message of a failed assertion on ``program``: its status and the job's tail."""
        return (
            f"{program} exit {self.exit(program)!r} (job exit {self.returncode}):\n"
            f"{self.output(program)[-3000:]}\n{self.stderr[-3000:]}"
        )


def mpi_programs(ranks: int, suitesparse: Path) -> list[str]:
    """The programs of the suite's job on ``ranks`` ranks, with their arguments. The protocol
    checks count their kernel's first blocking agreement, so they run before any other
    program calls the same computation in that process; ``check_mpi.py``, whose every rank
    prints, runs last."""
    jobs = ["check_protocol.py"] if ranks > 1 else []
    if (suitesparse / "bcsstk13.mtx").is_file():
        jobs.append(shlex.join(["check_distributed.py", str(suitesparse / "bcsstk13.mtx")]))
    jobs.append("check_formats.py")
    if ranks in (2, 4):
        jobs.append(shlex.join(["check_mpi.py", str(ROOT)]))
    return jobs


@pytest.fixture(scope="session")
def mpi_checks(
    tmp_path_factory: pytest.TempPathFactory, shared_cache: Path
) -> Callable[[int], MpiChecks]:
    """``mpi_checks(ranks)``: the rank-check programs of ``mpi_progs/`` run as one MPI job on
    ``ranks`` ranks (``check_jobs.py``, :func:`mpi_programs`), once per test run: every
    xdist worker reads the output the first one to need it saved (a lock file beside the
    workers' temporary folders), so the tests of ``test_mpi.py`` and
    ``test_mpi_distributed.py`` on the same rank count share one job."""
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent  # the folder of this run that every worker's lies in
    env = dict(os.environ)
    env["SPF_CACHE_DIR"] = str(shared_cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    def checks(ranks: int) -> MpiChecks:
        saved = run_dir / f"mpi-checks-{ranks}.json"
        with open(run_dir / f"mpi-checks-{ranks}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not saved.is_file():
                saved.write_text(json.dumps(_run_job(ranks, env, SUITESPARSE)))
        done = json.loads(saved.read_text())
        if "timeout" in done:
            pytest.fail(done["timeout"], pytrace=False)
        return MpiChecks(done["returncode"], done["stdout"], done["stderr"])

    return checks


def _run_job(ranks: int, env: dict[str, str], suitesparse: Path) -> dict[str, object]:
    programs = mpi_programs(ranks, suitesparse)
    timeout = sum(MPI_JOB_TIMEOUT[shlex.split(p)[0]] for p in programs)
    try:
        done = run(MPI_PROGS / "check_jobs.py", ranks, programs, timeout=timeout, env=env)
    except MPITimeoutError as err:
        return {"timeout": str(err)}
    return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
