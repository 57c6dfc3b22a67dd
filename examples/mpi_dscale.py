"""Rows distributed over MPI ranks: every rank scales its own block.

Run on 4 local ranks with ``python -m spf.mpi -n 4 examples/mpi_dscale.py``. Each rank owns a
4x8 block ``a``; the loop over ``q`` is distributed, so rank ``r`` runs the iterations with
``q = r`` on its own block, which ends up ``2 * 1 + r``; rank 0 prints what each rank
checked.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

import spf
import spf.mpi


def dscale() -> spf.Computation:
    comp = spf.Computation("dscale")
    comp.add_data_space("a", "double", shape=(4, 8))  # each rank's local block
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i,j) = 2.0 * $a$(i,j) + q;",
            "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}",
            "{[q,i,j]->[0,q,0,i,0,j,0]}",
        )
    )
    s.distribute("q")  # rank r runs the iterations with q = r
    return comp


def main() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    kernel = dscale().compile(target="mpi")
    a = np.ones((4, 8))
    kernel(comm=comm, a=a, P=size)
    want = 2.0 * 1.0 + rank
    equal = int(np.count_nonzero(a == want))
    results = comm.gather(float(a[0, 0]), root=0)
    if rank == 0:
        print(f"dscale on {size} ranks: a[0, 0] per rank = {results}")
    line = (
        f"a equals 2 * 1.0 + {rank} = {want} in {equal} of {a.size} entries "
        f"(OpenMP threads: {kernel.last_threads})"
    )
    if not spf.mpi.report(comm, line, ok=equal == a.size):
        raise SystemExit("dscale: a rank's block is wrong")


if __name__ == "__main__":
    main()
