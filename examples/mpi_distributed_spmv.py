"""A row-distributed CSR SpMV whose communication spf derives from the computation.

Run with ``python -m spf.mpi -n 2 examples/mpi_distributed_spmv.py [grid]``. The kernel is
the ordinary ``spf.kernels.spmv_csr()``; ``distribute_rows("i", data={"y": 0, "x": 0})``
splits its row loop and the vectors over the ranks (contiguous blocks). From the access
``x(j)``, ``j = col(k)``, spf generates an inspector that finds the exact entries of ``x``
each rank needs from the others (the image of its rows under ``col``, minus what it owns: the
ghosts PETSc's ``MatMult`` exchanges), and an executor that posts the exchange, computes the
rows that need no ghost while the messages travel, waits, and computes the rest.

On the 2-D Poisson matrix of a ``grid x grid`` mesh (block rows), a rank exchanges one mesh
row (``grid`` entries) with each neighbouring rank. Each rank checks its ``y`` against the
single-process kernel (bitwise) and says how many entries it received, next to what the
whole-block exchange of ``examples/mpi_spmv.py`` would have moved.
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import spf
import spf.mpi


def poisson(grid: int) -> sp.csr_array:
    """The 5-point Laplacian of a ``grid x grid`` mesh (``grid**2`` rows)."""
    t = sp.diags_array([-1.0, 4.0, -1.0], offsets=[-1, 0, 1], shape=(grid, grid))
    s = sp.diags_array([-1.0, -1.0], offsets=[-1, 1], shape=(grid, grid))
    e = sp.eye_array(grid)
    return sp.csr_array(sp.kron(e, t) + sp.kron(s, e))


def main(grid: int = 64) -> None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    comp = spf.kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    kernel = comp.compile(target="mpi")

    matrix = poisson(grid)  # the same on every rank
    n = matrix.shape[0]
    x = np.random.default_rng(2).random(n)
    args = spf.mpi.scatter_csr(matrix, comm)  # this rank's rows, global column indices
    mine = spf.mpi.owned_rows(n, comm)
    y = np.zeros(mine.size)
    kernel(comm=comm, y=y, x=x[mine].copy(), **args)

    want = np.zeros(n)
    spf.kernels.spmv_csr().compile()(y=want, x=x, **spf.sparse.csr_args(matrix))
    whole = spf.mpi.gather(y, comm)
    stats = kernel.exchange_stats()
    neighbours = int(rank > 0) + int(rank < size - 1)
    blocks = neighbours * -(-n // size)  # whole blocks of x, as examples/mpi_spmv.py sends
    line = (
        f"y equals the single-process SpMV bitwise on rows {mine[0] if mine.size else 0}.."
        f"{mine[-1] if mine.size else -1}; received {stats['entries_received']} entries of x in "
        f"{stats['messages_received']} messages (exact ghosts: {grid} per neighbour; whole "
        f"blocks would be {blocks})"
    )
    if not spf.mpi.report(comm, line, ok=bool(np.array_equal(whole, want))):
        raise SystemExit("mpi_distributed_spmv: a rank's y is wrong")


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:2]))
