"""A halo of two rows over MPI ranks, shared by tests/e2e/test_mpi.py and check_mpi.py.

Rank ``q`` of ``P`` owns rows ``2 .. NL + 1`` of its block ``a`` (``NL + 4`` rows of ``W``):
rows 0, 1 and ``NL + 2``, ``NL + 3`` are halos, the two last owned rows of rank ``q - 1``
and the two first of rank ``q + 1`` (rank 0's and the last rank's are the image's border
rows, which they keep). Each halo moves in one message of ``2*W`` consecutive elements
(two whole rows in row-major order), e.g. ``send a(2, 0), count 2*W, to q - 1``; then
``out(i, j) = a(i, j) + a(i+1, j) + ... + a(i+4, j)`` (a vertical sum of five rows), so
``out`` row ``i`` of rank ``r`` is the sum of rows ``r*NL + i .. r*NL + i + 4`` of the
whole image (``P*NL + 4`` rows).
"""

from __future__ import annotations

import itertools

import numpy as np

import spf


def rows() -> spf.Computation:
    comp = spf.Computation("rows2")
    comp.add_data_space("a", "double", shape=("NL + 4", "W"))
    comp.add_data_space("out", "double", shape=("NL", "W"))
    comp.assume("NL >= 2")  # two owned rows to send each way
    up, down = "{[q]: 1 <= q < P}", "{[q]: 0 <= q < P - 1}"
    ops = [
        comp.send(up, "a", ["2", "0"], "2*W", "q - 1"),
        comp.send(down, "a", ["NL", "0"], "2*W", "q + 1"),
        comp.receive(up, "a", ["0", "0"], "2*W", "q - 1"),
        comp.receive(down, "a", ["NL + 2", "0"], "2*W", "q + 1"),
    ]
    total = " + ".join(f"$a$(i + {k}, j)" for k in range(5))
    stage = spf.Stmt(
        f"$out$(i, j) = {total};",
        "{[q, i, j]: 0 <= q < P && 0 <= i < NL && 0 <= j < W}",
        "{[q, i, j] -> [0, q, 1, i, 0, j, 0]}",
        name="sum5",
    )
    comp.add_stmt(stage).distribute("q")
    for prev, nxt in itertools.pairwise([*ops, stage]):
        prev.then(nxt, "q")
    return comp


def image(p: int, nl: int, w: int) -> np.ndarray:
    """The whole image (``p*nl + 4`` rows)."""
    return np.random.default_rng(7).random((p * nl + 4, w))


def block(rank: int, p: int, nl: int, w: int) -> np.ndarray:
    """Rank ``rank``'s block: its rows and, from the image, its border halos only (the
    inner halos hold garbage the exchange must overwrite)."""
    img = image(p, nl, w)
    a = img[rank * nl : rank * nl + nl + 4].copy()
    if rank > 0:
        a[:2] = -1e9
    if rank < p - 1:
        a[nl + 2 :] = -1e9
    return a


def expected(rank: int, p: int, nl: int, w: int) -> np.ndarray:
    img = image(p, nl, w)
    five = sum(img[k : k + p * nl] for k in range(5))
    return five[rank * nl : rank * nl + nl]
