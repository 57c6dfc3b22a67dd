"""Several rank-check programs of this folder, one after the other, in one MPI job.

Run by tests/e2e/conftest.py (fixture ``mpi_checks``) as ``mpiexec -n P python -m mpi4py
check_jobs.py 'check_formats.py' 'check_distributed.py bcsstk13.mtx' ...``: each argument is
a program of this folder and its arguments, run as ``__main__`` with that ``sys.argv``, on
every rank, in the order given. Each program prints what it checked as it does when it runs
alone; once it returns, rank 0 prints every rank's lines of that program again, in rank
order, then ``job <program>: exit 0`` (or the message of the ``SystemExit`` a program raises
when a check failed on some rank) and the next starts. ``mpiexec`` forwards each rank's
stdout on its own, so a rank's last lines may reach the job's output after rank 0's status
line (a CI run lost "rank 1 ok: all" that way); the block rank 0 prints is complete and in
order, and the status line ends it. An
exception other than ``SystemExit`` aborts the whole job (``python -m mpi4py``), as it
aborts the program run alone: its output and traceback then end the job's output.

One job per rank count instead of one per program saves each rank's interpreter start and
imports (numpy, scipy, spf, mpi4py: ~1 s CPU a rank on the loaded 2-core machine) and
``mpiexec``'s own start, for every program after the first.
"""

from __future__ import annotations

import runpy
import shlex
import sys
from pathlib import Path
from typing import TextIO

from mpi4py import MPI

HERE = Path(__file__).resolve().parent


class Tee:
    """``sys.stdout`` while a program runs: writes through, and keeps what was written."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.out, name)


def run_job(spec: str) -> tuple[str, list[str]]:
    """Run one program (``spec``: its file name in this folder and its arguments) and
    return its exit status as every rank saw it (``0``, or the first failing rank's) and,
    on rank 0, what each rank printed (empty elsewhere)."""
    program, *args = shlex.split(spec)
    sys.argv = [str(HERE / program), *args]
    status = "0"
    out = sys.stdout
    tee = Tee(out)
    sys.stdout = tee
    try:
        runpy.run_path(str(HERE / program), run_name="__main__")
    except SystemExit as done:
        if done.code not in (None, 0):
            status = str(done.code)
    finally:
        sys.stdout = out
    out.flush()
    statuses = MPI.COMM_WORLD.allgather(status)
    printed = MPI.COMM_WORLD.gather("".join(tee.written), root=0)
    return next((s for s in statuses if s != "0"), "0"), printed or []


def main() -> None:
    failed = 0
    for spec in sys.argv[1:]:
        status, printed = run_job(spec)
        failed += status != "0"
        if MPI.COMM_WORLD.Get_rank() == 0:
            for rank, text in enumerate(printed):
                sys.stdout.write(f"-- rank {rank} printed:\n{text}")
                if text and not text.endswith("\n"):
                    sys.stdout.write("\n")
            sys.stdout.write(f"job {shlex.split(spec)[0]}: exit {status}\n")
            sys.stdout.flush()
    if failed:
        raise SystemExit(f"check_jobs: {failed} program(s) failed")


if __name__ == "__main__":
    main()
