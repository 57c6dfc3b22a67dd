"""Distributed CSR SpMV on 2 MPI ranks: the generated exchange (API.md §19) vs whole blocks.

2-D Poisson (``poisson_grid``\\ :sup:`2` rows, block rows over 2 ranks). Two distributed
products, timed interleaved in one ``mpiexec -n 2`` job (:func:`spf.mpi.run`):

* ``spf distribute_rows``: ``spf.kernels.spmv_csr()`` with ``distribute_rows`` (exact ghosts,
  the rows without ghosts computed while the messages travel);
* ``whole blocks``: ``examples/mpi_spmv.py`` (send/receive written by hand in spf's layer IV:
  a rank receives every block of ``x`` one of its rows touches), when the examples folder is
  there (a source checkout).

A timed product is ``Barrier; t0; kernel; t1`` and counts as the slowest rank's ``t1 - t0``
(``MPI_Allreduce(MAX)``); medians over the rounds. Entries exchanged per product come from
``kernel.exchange_stats()`` and the block flags; PETSc's ``MatMult`` count for the same
partition is the number of distinct off-process columns of the rank's rows (what
``MatSetUpMultiply_MPIAIJ`` gathers), computed here with numpy: petsc4py is not installed, so
PETSc itself is not timed. The single-process spf SpMV (1 thread, in this process) is the
reference time. Two ranks on a 2-core machine shared with other work: the times are noisy.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spf.bench.common import Context, Section

RANKS = 2
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _serial_ms(grid: int, rounds: int) -> float:
    import spf

    matrix = spf.sparse.poisson2d(grid)
    args = spf.sparse.csr_args(matrix)
    x = np.random.default_rng(2).random(matrix.shape[1])
    y = np.zeros(matrix.shape[0])
    kernel = spf.kernels.spmv_csr().compile()
    ts = []
    for _ in range(rounds + 2):
        t0 = time.perf_counter()
        kernel(y=y, x=x, check=False, **args)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts[2:])) * 1e3


def run(ctx: Context) -> Section:
    from spf.bench.common import Section
    from spf.errors import SpfError
    from spf.mpi import run as mpirun

    sec = Section("mpi")
    grid, rounds = ctx.cfg.poisson_grid, max(5, ctx.cfg.spmv_rounds // 2)
    # the ranks import this spf (a source checkout's, not an installed copy)
    here = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    try:
        done = mpirun(__file__, RANKS, [str(grid), str(rounds)], timeout=1800, env=env)
    except SpfError as err:
        sec.line(f"skipped: {err}")
        return sec
    found = [ln for ln in (done.stdout or "").splitlines() if ln.startswith("RESULT ")]
    if done.returncode != 0 or not found:
        sec.line(f"mpi job failed (exit {done.returncode}):\n```\n{done.stderr[-2000:]}\n```")
        return sec
    res: dict[str, Any] = json.loads(found[-1][len("RESULT ") :])
    res["serial_ms"] = _serial_ms(grid, rounds)
    sec.data.update(res)
    sec.line(
        f"2-D Poisson {grid}x{grid} ({grid * grid} rows), block rows on {RANKS} ranks, "
        f"{rounds} interleaved rounds; time = slowest rank, median. Shared 2-core machine: "
        "noisy. PETSc not run (petsc4py is not installed); its count is the exact ghost set."
    )
    sec.line()
    rows = []
    for code in ("spf distribute_rows", "whole blocks"):
        if code not in res["ms"]:
            continue
        rows.append(
            [
                code,
                str(res["received"][code]),
                f"{res['ms'][code]:.3f}",
                f"{res['ms'][code] / res['serial_ms']:.2f}",
            ]
        )
    rows.append(["PETSc MatMult (exact ghosts)", str(res["petsc"]), "not run", ""])
    rows.append(["spf serial (1 process)", "0", f"{res['serial_ms']:.3f}", "1.00"])
    sec.table(["code", "entries received per product (max rank)", "ms", "vs serial"], rows)
    ours = res["received"]["spf distribute_rows"]
    sec.target(
        "distributed SpMV exchanges exactly PETSc's ghosts",
        f"{ours} entries vs {res['petsc']}",
        ours == res["petsc"],
    )
    return sec


# ---------------------------------------------------------------------------- on every rank


def worker(grid: int, rounds: int) -> None:
    """Runs on each rank; rank 0 prints one ``RESULT {json}`` line."""
    from mpi4py import MPI

    import spf
    import spf.mpi

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    matrix = spf.sparse.poisson2d(grid)
    n = matrix.shape[0]
    x = np.random.default_rng(2).random(n)
    comp = spf.kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    kernel: Any = comp.compile(target="mpi")  # a DistributedKernel (exchange_stats)
    args = spf.mpi.scatter_csr(matrix, comm)
    mine = spf.mpi.owned_rows(n, comm)
    y, xl = np.zeros(mine.size), x[mine].copy()
    calls = {"spf distribute_rows": lambda: kernel(comm=comm, y=y, x=xl, check=False, **args)}
    calls["spf distribute_rows"]()
    received = {"spf distribute_rows": kernel.exchange_stats()["entries_received"]}
    cols = args["col"].astype(np.int64)
    petsc = int(np.unique(cols[(cols < mine[0]) | (cols > mine[-1])]).size) if mine.size else 0
    if (EXAMPLES / "mpi_spmv.py").is_file():
        sys.path.insert(0, str(EXAMPLES))
        mpi_spmv: Any = importlib.import_module("mpi_spmv")
        old = mpi_spmv.spmv().compile(target="mpi")
        old_args = mpi_spmv.local_args(comm, matrix, x)
        calls["whole blocks"] = lambda: old(check=False, **old_args)
        received["whole blocks"] = int(old_args["need"].sum()) * int(old_args["B"])
    times: dict[str, list[float]] = {code: [] for code in calls}
    order = list(calls)
    for r in range(rounds + 2):
        for code in order if r % 2 else reversed(order):
            comm.Barrier()
            t0 = time.perf_counter()
            calls[code]()
            dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
            if r >= 2:
                times[code].append(dt)
    most = {code: comm.allreduce(v, op=MPI.MAX) for code, v in received.items()}
    petsc_max = comm.allreduce(petsc, op=MPI.MAX)
    if rank == 0:
        ms = {code: float(np.median(ts)) * 1e3 for code, ts in times.items()}
        print("RESULT " + json.dumps({"ms": ms, "received": most, "petsc": petsc_max}))


if __name__ == "__main__":
    worker(int(sys.argv[1]), int(sys.argv[2]))
