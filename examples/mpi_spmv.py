"""Row-distributed CSR SpMV over MPI ranks: each rank receives the parts of x it needs.

Run with ``python -m spf.mpi -n 4 examples/mpi_spmv.py``. ``y = A x`` for a global ``n x m``
sparse matrix: rank ``r`` owns a block of rows (a local CSR matrix) and block ``r`` of ``x``
(``x`` is cut into ``P`` blocks of ``B`` elements, the last padded). Each rank keeps a
``P x B`` buffer ``x`` holding its own block (row ``r``); a global column ``c`` of its matrix is
stored as its block ``cb = c / B`` and offset ``co = c % B`` (two index arrays, so that every
access stays affine: ``x(cb(k), co(k))``);
before the product it receives, from each other rank ``p``, block ``p`` when one of its rows
has a nonzero in that block (``need(p) = 1``), and sends its own block to each rank that needs
it (``give(p) = 1``). The flags are index arrays (UFs) in the operations' domains::

    send x(q, 0..B-1)      to p    {[q,p]: 0 <= q < P && 0 <= p < P && give(p) >= 1}
    receive x(p, 0..B-1)   from p  {[q,p]: 0 <= q < P && 0 <= p < P && need(p) >= 1}
    y(i) += A(k) * x(cb(k), co(k)) {[q,i,k]: 0 <= q < P && 0 <= i < N
                                             && rowptr(i) <= k < rowptr(i+1)}

all in one distributed loop over ``q``. The flags are computed once from the matrix
(:func:`exchange_flags`, an ``alltoall`` of the ``need`` flags), like an MPI setup phase.
Rank 0 prints what each rank checked: its rows of ``y`` against scipy's ``A @ x``.
``examples/mpi_distributed_spmv.py`` lets spf derive the exchange from the access instead
(``distribute_rows``): exact ghost entries, not whole blocks.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

import spf
import spf.mpi

if TYPE_CHECKING:
    from mpi4py import MPI


def spmv(index_dtype: str = "int32") -> spf.Computation:
    """The per-rank computation (parameters ``N, NNZ, B, P``)."""
    comp = spf.Computation("mpi_spmv")
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
        dtype=index_dtype,
    )
    for uf, extent in (("cb", "P"), ("co", "B")):
        comp.declare_uf(
            uf, domain="{[k]: 0 <= k < NNZ}", range=f"{{[v]: 0 <= v < {extent}}}", dtype=index_dtype
        )
    for flag in ("need", "give"):
        comp.declare_uf(flag, domain="{[p]: 0 <= p < P}", range="{[v]: 0 <= v <= 1}", dtype="int32")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("P", "B"))
    pairs = "0 <= q < P && 0 <= p < P"
    send = comp.send(f"{{[q,p]: {pairs} && give(p) >= 1}}", "x", ["q", "0"], "B", "p")
    recv = comp.receive(f"{{[q,p]: {pairs} && need(p) >= 1}}", "x", ["p", "0"], "B", "p")
    prod = comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k) * $x$(cb(k), co(k));",
            "{[q,i,k]: 0 <= q < P && 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[q,i,k]->[2,q,0,i,0,k,0]}",
            name="product",
        )
    )
    prod.distribute("q")
    send.then(recv, "q").then(prod, "q")
    return comp


def row_blocks(n: int, size: int) -> list[tuple[int, int]]:
    """The rows ``[lo, hi)`` of each rank (sizes differ by at most one)."""
    cuts = np.linspace(0, n, size + 1).round().astype(int)
    return [(int(cuts[r]), int(cuts[r + 1])) for r in range(size)]


def exchange_flags(comm: MPI.Comm, col: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """``need[p]``: this rank's rows use block ``p`` of x (never its own); ``give[p]``: rank
    ``p`` needs this rank's block."""
    size, rank = comm.Get_size(), comm.Get_rank()
    need = np.zeros(size, dtype=np.int32)
    if col.size:
        need[np.unique(col // block)] = 1
    need[rank] = 0
    give = np.asarray(comm.alltoall([int(v) for v in need]), dtype=np.int32)
    return need, give


def local_args(
    comm: MPI.Comm, matrix: sp.csr_array, x: np.ndarray, index_dtype: str = "int32"
) -> dict[str, Any]:
    """This rank's keyword arguments for the kernel (``comm`` included)."""
    size, rank = comm.Get_size(), comm.Get_rank()
    block = max(1, -(-matrix.shape[1] // size))
    lo, hi = row_blocks(matrix.shape[0], size)[rank]
    rows = matrix[lo:hi]
    xg = np.full((size, block), np.nan)  # blocks of other ranks arrive by messages
    padded = np.zeros(size * block)
    padded[: x.size] = x
    xg[rank] = padded[rank * block : (rank + 1) * block]
    col = rows.indices
    need, give = exchange_flags(comm, col, block)
    return {
        "comm": comm,
        "y": np.zeros(hi - lo),
        "A": rows.data.astype(np.float64),
        "x": xg,
        "rowptr": rows.indptr.astype(index_dtype),
        "cb": (col // block).astype(index_dtype),
        "co": (col % block).astype(index_dtype),
        "need": need,
        "give": give,
        "N": hi - lo,
        "NNZ": int(rows.nnz),
        "B": block,
        "P": size,
    }


def main(n: int = 2000, m: int = 1500) -> None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    kernel = spmv().compile(target="mpi")
    matrix = sp.random_array((n, m), density=0.005, format="csr", rng=1)  # same on every rank
    x = np.random.default_rng(2).random(m)
    args = local_args(comm, matrix, x)
    kernel(**args)
    lo, hi = row_blocks(n, comm.Get_size())[comm.Get_rank()]
    want = (matrix @ x)[lo:hi]
    diff = float(np.abs(args["y"] - want).max()) if hi > lo else 0.0
    received = int(args["need"].sum())
    counts = comm.gather(received, root=0)
    if comm.Get_rank() == 0:
        print(f"mpi_spmv {n}x{m} on {comm.Get_size()} ranks: x blocks received per rank {counts}")
    line = (
        f"y equals the serial SpMV (scipy A @ x) on rows {lo}..{hi - 1} ({hi - lo} rows, "
        f"{args['NNZ']} nonzeros; max |diff| {diff:.1e}; {received} x blocks received; "
        f"OpenMP threads: {kernel.last_threads})"
    )
    if not spf.mpi.report(comm, line, ok=bool(np.allclose(args["y"], want))):
        raise SystemExit("mpi_spmv: a rank's y is wrong")


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
