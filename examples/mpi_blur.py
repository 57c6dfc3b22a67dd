"""A two-stage blur distributed over MPI ranks by rows, with a halo exchange.

Run with ``python -m spf.mpi -n 4 examples/mpi_blur.py``. The global image has
``H = P * NL + 2`` rows and ``W`` columns; rank ``r`` owns rows ``r*NL + 1 .. r*NL + NL`` and
keeps them in a local block ``a`` of ``NL + 2`` rows: row 0 and row ``NL + 1`` are halo rows,
the last row of rank ``r - 1`` and the first row of rank ``r + 1`` (rank 0's row 0 and the last
rank's row ``NL + 1`` are the image's border rows, which those ranks own). One exchange fills
the halos; then, on every rank,

    bx(i, j)  = (a(i, j-1) + a(i, j) + a(i, j+1)) / 3        0 <= i < NL + 2, 1 <= j < W - 1
    out(i, j) = (bx(i, j) + bx(i+1, j) + bx(i+2, j)) / 3     0 <= i < NL,     1 <= j < W - 1

so ``out`` row ``i`` of rank ``r`` is row ``r*NL + i + 1`` of the blur of the whole image.
The exchange is four operations over the rank ``q`` (each distributed like the stages):

    send a(1, 0..W-1)    to q - 1    {[q]: 1 <= q < P}
    send a(NL, 0..W-1)   to q + 1    {[q]: 0 <= q < P - 1}
    receive a(0, ...)    from q - 1  {[q]: 1 <= q < P}
    receive a(NL+1, ...) from q + 1  {[q]: 0 <= q < P - 1}

all inside the distributed loop over ``q``, before the stages. The generated code posts them as
``MPI_Isend``/``MPI_Irecv`` and waits for them before the first stage reads ``a``. Rank 0
prints what each rank checked: its rows against numpy's blur of the whole image.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

import spf
import spf.mpi


def blur(distributed: bool = True, tiramisu_order: bool = False) -> spf.Computation:
    """The blur of one rank's block (``distributed=False``: the same two stages without the
    rank loop and the exchange, i.e. the sequential blur of a whole ``(NL + 2) x W`` image).

    ``tiramisu_order=True`` writes it as Tiramisu does: the stages first, then the exchange,
    then the order (``send.then(...)...then(stage1, "q")``). Communication has no place in the
    program order until it is ordered, so this is the same program (the operations are named
    ``s2``..``s5`` instead of ``s0``..``s3``)."""
    comp = spf.Computation("mpi_blur" if distributed else "seq_blur")
    comp.add_data_space("a", "double", shape=("NL + 2", "W"))
    comp.add_data_space("bx", "double", shape=("NL + 2", "W"))
    comp.add_data_space("out", "double", shape=("NL", "W"))
    ops: list[spf.Stmt] = []
    if distributed and not tiramisu_order:  # program order: the exchange, then the stages
        ops = exchange(comp)
    q, qd, qs = ("q, ", "0 <= q < P && ", "q, 0, ") if distributed else ("", "", "")
    stages = []
    for k, (src, rows) in enumerate(
        [
            ("$bx$(i,j) = ($a$(i,j-1) + $a$(i,j) + $a$(i,j+1)) / 3.0;", "NL + 2"),
            ("$out$(i,j) = ($bx$(i,j) + $bx$(i+1,j) + $bx$(i+2,j)) / 3.0;", "NL"),
        ]
    ):
        stage = spf.Stmt(
            src,
            f"{{[{q}i,j]: {qd}0 <= i < {rows} && 1 <= j < W - 1}}",
            f"{{[{q}i,j]->[{len(ops) + k},{qs}i,0,j,0]}}",
            name=f"stage{k + 1}",
        )
        stages.append(comp.add_stmt(stage))
        if distributed:
            stage.distribute("q")
    if distributed:
        if tiramisu_order:
            ops = exchange(comp)
        chain = [*ops, *stages]
        for prev, nxt in itertools.pairwise(chain):
            prev.then(nxt, "q")  # one distributed loop over q: the exchange, then the stages
    return comp


def exchange(comp: spf.Computation) -> list[spf.Stmt]:
    """The four operations of the halo exchange (created unordered)."""
    up, down = "{[q]: 1 <= q < P}", "{[q]: 0 <= q < P - 1}"
    return [
        comp.send(up, "a", ["1", "0"], "W", "q - 1"),
        comp.send(down, "a", ["NL", "0"], "W", "q + 1"),
        comp.receive(up, "a", ["0", "0"], "W", "q - 1"),
        comp.receive(down, "a", ["NL + 1", "0"], "W", "q + 1"),
    ]


def global_blur(img: np.ndarray) -> np.ndarray:
    """numpy reference: the two stages on the whole image (rows 1..H-2 of the result)."""
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3.0
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3.0


def local_block(img: np.ndarray, rank: int, nl: int, size: int) -> np.ndarray:
    """Rank ``rank``'s block before the exchange: its rows, halos NaN unless image border."""
    a = img[rank * nl : rank * nl + nl + 2].copy()
    if rank > 0:
        a[0] = np.nan
    if rank < size - 1:
        a[-1] = np.nan
    return a


def main(nl: int = 64, w: int = 96) -> None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    kernel = blur().compile(target="mpi")
    img = np.random.default_rng(0).random((size * nl + 2, w))  # the same image on every rank
    a = local_block(img, rank, nl, size)
    bx, out = np.zeros((nl + 2, w)), np.zeros((nl, w))
    kernel(comm=comm, a=a, bx=bx, out=out, P=size, NL=nl, W=w)
    want = global_blur(img)[rank * nl : (rank + 1) * nl]
    good = bool(np.allclose(out[:, 1:-1], want))
    diff = float(np.abs(out[:, 1:-1] - want).max()) if want.size else 0.0
    ok = comm.gather(good, root=0)
    if rank == 0:
        print(f"mpi_blur on {size} ranks ({size * nl + 2}x{w} image): {sum(ok or [])} ranks ok")
    first = rank * nl + 1
    line = (
        f"out equals numpy's blur of the whole image on image rows {first}..{first + nl - 1}, "
        f"columns 1..{w - 2} (max |diff| {diff:.1e}; halo rows received: "
        f"{(rank > 0) + (rank < size - 1)}; OpenMP threads: {kernel.last_threads})"
    )
    if not spf.mpi.report(comm, line, ok=good):
        raise SystemExit("mpi_blur: a rank's rows are wrong")


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]))
